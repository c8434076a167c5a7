#!/usr/bin/env bash
# Every test of libcupel: formatting and lints, the demo, the Rust unit tests,
# the C harness, the header and link checks, the conformance vectors, the
# differential tests against the cupel crate, the hostile-input, thread and
# fuzz-replay tests, the C++, Go, C#, JavaScript (WebAssembly) and LuaJIT
# bindings, the knapsack kernels each
# forced in turn, the Rust suites on aarch64 under qemu, and the sanitizer /
# valgrind runs.
#
#   bash tests/run_all.sh             # with the toolchains already installed
#   bash tests/run_all.sh --install   # installs them first (tests/install.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p target
# Section headers carry the seconds since the start, so a CI log shows
# where the time went.
section() { printf '== [%5ss] %s\n' "$SECONDS" "$*"; }
if [ "${1:-}" = --install ]; then
  section "install the toolchains (tests/install.sh)"
  bash tests/install.sh
fi

section "cargo fmt --check"
cargo fmt --check
section "cargo clippy --all-targets -- -D warnings"
cargo clippy --all-targets -- -D warnings
section "demo"
bash examples/demo.sh > target/demo.out
grep -q "CountConstrainedKnapsack" target/demo.out
grep -q "Variant: sent as" target/demo.out
grep -q "Truncated: its first" target/demo.out
grep -q "A CONVERSATION, TURN BY TURN" target/demo.out
grep -q "0c. THE SAME SESSION UNDER A POLICY FILE" target/demo.out
grep -q "cupel.stage.deduplicate" target/demo.out
# The cost chart, wherever a python3 there has matplotlib (demo.sh draws it).
if python3 -c "import matplotlib" >/dev/null 2>&1 || /usr/bin/python3 -c "import matplotlib" >/dev/null 2>&1; then
  test -s target/examples/session_cost.png
fi
echo "demo ran: $(wc -l < target/demo.out) lines of output"
section "cargo test --release"
cargo test --release 2>&1 | tee target/test.out
# The dispatched knapsack kernel ran above; the others must agree too.
for kernel in portable sse2 sse4.1; do
  section "knapsack kernel $kernel: kernel unit tests, conformance, differential"
  CUPEL_KNAPSACK_KERNEL=$kernel cargo test --release --lib --test conformance --test differential --test variants 2>&1 \
    | tee -a target/test.out | grep -E "^test result|FAILED|panicked"
done
# The aarch64 run (a cross build, then qemu) goes in the background beside
# the sanitizer and valgrind runs and the perf guard: much of each is one
# thread (valgrind, callgrind, qemu), and two cores serve both.
section "aarch64 (portable kernel only), under qemu: started in the background"
bash tests/aarch64.sh >target/aarch64.out 2>&1 &
aarch64=$!
section "sanitizers and valgrind"
bash tests/sanitizers.sh
section "performance guard: instruction counts against the baseline, and its proof"
bash tests/perf_guard.sh --check
bash tests/perf_guard.sh --prove
section "aarch64 (portable kernel only), under qemu: its results"
aarch64_status=0
wait "$aarch64" || aarch64_status=$?
cat target/aarch64.out
if [ "$aarch64_status" -ne 0 ]; then
  echo "aarch64 tests failed (exit $aarch64_status)" >&2
  exit 1
fi
# One closing line for the whole run (cargo prints one per test binary).
section "done"
awk '/^test result:/ { p += $4; f += $6 } END { printf "total: %d passed, %d failed\n", p, f; exit (f > 0 || p == 0) }' target/test.out
