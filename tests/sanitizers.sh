#!/usr/bin/env bash
# Memory and UB checks at the C boundary (part of tests/run_all.sh):
#  1. the C suites built with AddressSanitizer + UndefinedBehaviorSanitizer
#     (gcc; leaks checked by LeakSanitizer, which sees the library's mallocs),
#  2. the C suites and the C++ wrapper test under valgrind memcheck: zero
#     errors and zero definite/indirect/possible leaks,
#  3. with a nightly toolchain, the Rust tests that drive the C ABI built with
#     -Zsanitizer=address (library and tests instrumented).
# A missing valgrind fails when CI=true; a missing nightly is reported and
# step 3 skipped (the issue asks for it where the machine has one).
#   bash tests/sanitizers.sh           # all three
#   bash tests/sanitizers.sh --c       # steps 1 and 2
#   bash tests/sanitizers.sh --rust    # step 3
#   bash tests/sanitizers.sh --build   # only step 3's build (run_all.sh, in the background)
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
lib="$root/target/release"
out="$root/target/sanitizers"
mkdir -p "$out"

# Step 3's build and run: the Rust tests that drive the C ABI, built with
# -Zsanitizer=address by the nightly toolchain. --cfg cupel_lean_tests:
# without the heaviest test dependencies, which these suites do not use
# (Cargo.toml). hostile's ten_million_items is a scale test (the same code
# paths as the others, 10^7 items under ASan's shadow memory).
asan_cargo() {
  local triple
  triple="$(rustc -vV | sed -n 's/^host: //p')"
  RUSTFLAGS="-Zsanitizer=address --cfg cupel_lean_tests" ASAN_OPTIONS=detect_leaks=1 \
    cargo +nightly test --quiet --release --target "$triple" --target-dir target/asan \
      --lib --test hostile --test threads --test conformance --test simulation "$@"
}
mode=${1:-all}
if [ "$mode" = --build ]; then
  if cargo +nightly --version >/dev/null 2>&1; then asan_cargo --no-run; fi
  exit 0
fi

if [ "$mode" != --rust ]; then
cargo build --release --quiet
suites=$(cd tests/c && ls test_*.c | sed 's/\.c$//')
# The contract runner (test_contract.c) reads the table from here.
export CUPEL_CONTRACT="$root/tests/contract/contract.txt"

echo "-- [${SECONDS}s] C suites under ASan+UBSan"
for s in $suites; do
  cc -std=c99 -g -O1 -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all \
     -Iinclude "tests/c/$s.c" -L"$lib" -Wl,-rpath,"$lib" -lcupel -lm -o "$out/$s-asan"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    "$out/$s-asan" | tail -n 1
done

echo "-- [${SECONDS}s] C and C++ suites under valgrind memcheck"
if command -v valgrind >/dev/null 2>&1; then
  for s in $suites; do
    cc -std=c99 -g -O1 -Iinclude "tests/c/$s.c" -L"$lib" -Wl,-rpath,"$lib" -lcupel -lm -o "$out/$s"
  done
  c++ -std=c++17 -g -O1 -Iinclude -Ibindings/cpp tests/cpp/test_cupel.cpp -L"$lib" -Wl,-rpath,"$lib" \
      -lcupel -o "$out/test_cupel_cpp"
  c++ -std=c++17 -g -O1 -Iinclude -Ibindings/cpp tests/cpp/test_policy.cpp -L"$lib" -Wl,-rpath,"$lib" \
      -lcupel -o "$out/test_policy_cpp"
  # Two at a time: each valgrind run is one thread.
  memcheck() {
    local exe=$1
    valgrind -q --error-exitcode=99 --leak-check=full \
      --errors-for-leak-kinds=definite,indirect,possible \
      --show-leak-kinds=definite,indirect,possible "$out/$exe" > "$out/$exe.valgrind" 2>&1 || {
        cat "$out/$exe.valgrind"; echo "valgrind found errors in $exe" >&2; return 1; }
    echo "$(tail -n 1 "$out/$exe.valgrind") (valgrind: no errors, no leaks)"
  }
  export -f memcheck
  export out
  printf '%s\n' $suites test_cupel_cpp test_policy_cpp | xargs -P 2 -I{} bash -c 'memcheck {}' \
    || { echo "valgrind found errors" >&2; exit 1; }
elif [ "${CI:-}" = "true" ]; then
  echo "valgrind is not installed and CI=true: apt-get install valgrind" >&2
  exit 1
else
  echo "*** SKIPPED: valgrind not found (apt-get install valgrind) ***"
fi

fi

if [ "$mode" != --c ]; then
echo "-- [${SECONDS}s] Rust tests through the C ABI under -Zsanitizer=address (nightly)"
if cargo +nightly --version >/dev/null 2>&1; then
  asan_cargo -- --skip ten_million_items 2>&1 | grep -E "^test result|FAILED|panicked|ERROR" \
    | tee "$out/asan-rust.out"
  if grep -qE "FAILED|panicked|ERROR" "$out/asan-rust.out"; then exit 1; fi
else
  echo "*** SKIPPED: no nightly toolchain; the Rust ASan run needs one ***"
fi
fi
echo "sanitizers${1:+ ($1)}: all clean"
