#!/usr/bin/env bash
# The performance guard (issue 30): instruction counts, which a noisy
# machine cannot move, of the pipeline at N = 1,000 and of the greedy,
# knapsack and quota slicers at N = 10,000 (tests/perf/src/main.rs),
# counted by callgrind inside the measured function only and compared with
# the committed baseline tests/perf/instructions.txt: more than 5 % over it
# fails. The knapsack runs its portable kernel (CUPEL_KNAPSACK_KERNEL), so
# the count does not depend on the CPU's vector extensions.
#
#   bash tests/perf_guard.sh            # check against the baseline
#   bash tests/perf_guard.sh --record   # write the baseline (after a change that is meant)
#   bash tests/perf_guard.sh --prove    # the library built with a planted slowdown
#                                       # (feature "planted-slowdown": about 9 instructions
#                                       # 12 times per item, +8 % on the pipeline case)
#                                       # must fail the check
#   bash tests/perf_guard.sh --build    # only build both (run_all.sh, in the background)
set -euo pipefail
cd "$(dirname "$0")/.."
mode="${1:---check}"
baseline=tests/perf/instructions.txt
tolerance=5
cases="pipeline greedy knapsack quota"
if ! command -v valgrind >/dev/null 2>&1; then
  if [ "${CI:-}" = "true" ]; then echo "perf guard: valgrind is not installed (apt-get install valgrind)" >&2; exit 1; fi
  echo "*** SKIPPED: perf guard needs valgrind (apt-get install valgrind) ***"; exit 0
fi

# Builds the guard's cases (with the planted slowdown for --prove, in a
# target directory of its own: the library is a cdylib, whose builds with
# and without the feature would otherwise replace each other) and prints
# the path of a copy of the executable.
build() {
  local target=target/perf-guard features=()
  if [ "$1" = planted ]; then target=target/perf-guard-planted features=(--features planted-slowdown); fi
  cargo build --release --quiet --manifest-path tests/perf/Cargo.toml --target-dir "$target" "${features[@]}" >&2
  cp "$target/release/cupel-perf-guard" "$target/cupel-perf-guard-$1"
  echo "$target/cupel-perf-guard-$1"
}

# The instruction count of one case.
count() {
  local out
  out=$(mktemp)
  CUPEL_KNAPSACK_KERNEL=portable valgrind --tool=callgrind --toggle-collect='*measured*' \
    --callgrind-out-file="$out" "$1" "$2" >/dev/null 2>&1
  awk '/^summary:/ { print $2 }' "$out"
  rm -f "$out"
}

# Compares every case of $1 with the baseline; exit status 1 on a regression.
check() {
  local exe=$1 failed=0 case want got
  for case in $cases; do
    want=$(awk -v c="$case" '$1 == c { print $2 }' "$baseline")
    got=$(count "$exe" "$case")
    if [ -z "$want" ] || [ -z "$got" ]; then echo "perf guard: no count for $case (baseline '$want', now '$got')" >&2; return 2; fi
    awk -v c="$case" -v w="$want" -v g="$got" -v t="$tolerance" 'BEGIN {
      r = g / w; printf "%-9s %12d instructions, baseline %12d: %+.2f %%\n", c, g, w, (r - 1) * 100
      exit (r > 1 + t / 100) ? 1 : 0 }' || { echo "perf guard: $case is more than ${tolerance} % over its baseline" >&2; failed=1; }
  done
  return $failed
}

case "$mode" in
  --build)
    build plain >/dev/null
    build planted >/dev/null ;;
  --record)
    exe=$(build plain)
    { echo "# case instructions (tests/perf_guard.sh --record; callgrind, the measured function only)"
      for case in $cases; do echo "$case $(count "$exe" "$case")"; done; } >"$baseline"
    cat "$baseline" ;;
  --check)
    echo "== perf guard: instruction counts against $baseline (fails over +${tolerance} %)"
    check "$(build plain)" ;;
  --prove)
    echo "== perf guard proof: a library with a planted slowdown must fail the check"
    if check "$(build planted)"; then
      echo "perf guard: the planted slowdown passed the check: the guard is blind" >&2; exit 1
    fi
    echo "perf guard: the planted slowdown failed the check, as it must" ;;
  *) echo "usage: bash tests/perf_guard.sh [--check|--record|--prove|--build]" >&2; exit 2 ;;
esac
