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

# Two cores, and much of the run is one thread (the binding suites waiting
# on go, mcs, node, pip; qemu, valgrind, callgrind): what does not have to
# wait is built beside it at the lowest priority (nice 19), where it takes
# only the time a core would otherwise idle. In the background, in order:
# the aarch64 cross build, the nightly ASan build and the perf guard's
# builds (their own target directories; their runs below start once these
# are built), then clippy, whose result is read at the end.
bg=target/background
rm -rf "$bg" target/lanes
mkdir -p "$bg"
# Stops what this script started in the background when it exits early.
kill_tree() {
  local child
  for child in $(pgrep -P "$1" 2>/dev/null); do kill_tree "$child"; done
  kill "$1" 2>/dev/null || true
}
cleanup() {
  [ -d target/lanes ] && : >target/lanes/abort
  for pid in $(jobs -p); do kill_tree "$pid"; done
}
trap cleanup EXIT
section "started in the background (nice 19): the aarch64, ASan and perf-guard builds, then clippy"
(
  renice -n 19 -p "$BASHPID" >/dev/null
  for step in aarch64 sanitizers perf_guard; do
    printf '== [%5ss] %s\n' "$SECONDS" "tests/$step.sh --build"
    bash "tests/$step.sh" --build || echo "(tests/$step.sh --build failed: its run below reports it)"
    : >"$bg/$step.built"
  done
  printf '== [%5ss] cargo clippy --all-targets -- -D warnings\n' "$SECONDS"
  status=0
  cargo clippy --all-targets -- -D warnings >"$bg/clippy.out" 2>&1 || status=$?
  echo "$status" >"$bg/clippy.status"
) >"$bg/builds.out" 2>&1 &
background=$!

section "cargo test --release: the build"
cargo test --release --no-run
# `cargo test --release` in three lanes side by side (tests/lane.sh is the
# runner that holds the binding lanes at a gate and sweeps the kernels):
#  core:      the suites that do not link the release library: the Rust
#             suites (those that exercise the knapsack kernels again with
#             each kernel forced in turn) and the ABI check (its own build);
#  bindings1: the suites around the C demo, Python, C#, the C programs and
#             the build without the vocabularies;
#  bindings2: every other test target (JavaScript, Go, C++, Lua, select
#             agreement, and any suite added later).
core="abi conformance differential differential_pipeline fuzz_replay groups hostile policy pretok session simulation text threads variant_free variants"
bindings1="python_binding binding_demos csharp_binding cross_bindings docs c_harness header link features"
all_tests=$(cargo metadata --no-deps --format-version 1 | python3 -c '
import json, sys
for p in json.load(sys.stdin)["packages"]:
    for t in p["targets"]:
        if "test" in t["kind"]:
            print(t["name"])')
bindings2=$(for t in $all_tests; do case " $core $bindings1 " in *" $t "*) ;; *) echo "$t" ;; esac; done)
for t in $core $bindings1; do
  echo "$all_tests" | grep -qx "$t" || { echo "run_all.sh: no test target $t" >&2; exit 1; }
done
lanes=$PWD/target/lanes
mkdir -p "$lanes"
host=$(rustc -vV | sed -n 's/^host: //p')
runner_var="CARGO_TARGET_$(echo "$host" | tr 'a-z.-' 'A-Z__')_RUNNER"
tests_args() { for t in "$@"; do printf -- '--test %s ' "$t"; done; }
lane() { # name gate sweep cargo-test-arguments...
  local name=$1 gate=$2 sweep=$3
  shift 3
  env "$runner_var=bash $PWD/tests/lane.sh" CUPEL_LANE_DIR="$lanes" CUPEL_LANE="$name" \
    CUPEL_LANE_GATE="$gate" CUPEL_KERNEL_SWEEP="$sweep" cargo test --release "$@" >"$lanes/$name.out" 2>&1
}
section "cargo test --release: the core suites and the kernels; bindings1 ($bindings1); bindings2 ($(echo $bindings2))"
# shellcheck disable=SC2046
lane core 0 1 --lib $(tests_args $core) &
lane_pids=($!)
# shellcheck disable=SC2046
lane bindings1 1 0 $(tests_args $bindings1) &
lane_pids+=($!)
# shellcheck disable=SC2046
lane bindings2 1 0 $(tests_args $bindings2) &
lane_pids+=($!)
# Every lane's cargo has checked the test build (its first binary started),
# then the release library the binding suites link is built (by the demo),
# and the gate opens.
started=0
while [ "$started" -eq 0 ]; do
  started=1
  for name in core bindings1 bindings2; do [ -e "$lanes/$name.started" ] || started=0; done
  for pid in "${lane_pids[@]}"; do kill -0 "$pid" 2>/dev/null || started=1; done
  sleep 0.2
done
# The demo builds that library (`cargo build --release`) and runs on it.
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
: >"$lanes/go"
lanes_failed=0
for i in 0 1 2; do
  wait "${lane_pids[$i]}" || lanes_failed=1
done
: >target/test.out
for name in core bindings1 bindings2; do
  section "cargo test --release, lane $name: its output"
  cat "$lanes/$name.out"
  cat "$lanes/$name.out" >>target/test.out
done
if [ "$lanes_failed" -ne 0 ]; then
  echo "cargo test --release failed (the lanes' output above)" >&2
  exit 1
fi

# Then the runs on the background builds, each as soon as its build is
# there (waiting for one gives it the whole machine): first the C suites
# under ASan/UBSan and valgrind, which need none; the aarch64 run (qemu)
# goes in the background beside the Rust ASan run and the perf guard, much
# of each being one thread (qemu, valgrind, callgrind).
# From here on the background builds are waited for: back to normal
# priority (where renice may raise it: as root, which CI is).
renice_tree() {
  local child
  renice -n 0 -p "$1" >/dev/null 2>&1 || return 0
  for child in $(pgrep -P "$1" 2>/dev/null); do renice_tree "$child"; done
}
renice_tree "$background"
built() { # waits for the background build of tests/$1.sh
  while [ ! -e "$bg/$1.built" ] && kill -0 "$background" 2>/dev/null; do sleep 1; done
}
section "sanitizers and valgrind: the C and C++ suites"
bash tests/sanitizers.sh --c
section "waiting for the background aarch64 build"
built aarch64
section "aarch64 (portable kernel only), under qemu: started in the background"
bash tests/aarch64.sh >target/aarch64.out 2>&1 &
aarch64=$!
section "waiting for the background ASan build"
built sanitizers
section "sanitizers: the Rust tests through the C ABI under ASan"
bash tests/sanitizers.sh --rust
section "waiting for the background perf-guard builds"
built perf_guard
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
section "cargo clippy --all-targets -- -D warnings: its result (run in the background)"
wait "$background" || true
cat "$bg/builds.out"
cat "$bg/clippy.out" 2>/dev/null || true
if [ "$(cat "$bg/clippy.status" 2>/dev/null)" != 0 ]; then
  echo "cargo clippy failed" >&2
  exit 1
fi
trap - EXIT
# One closing line for the whole run (cargo prints one per test binary).
section "done"
awk '/^test result:/ { p += $4; f += $6 } END { printf "total: %d passed, %d failed\n", p, f; exit (f > 0 || p == 0) }' target/test.out
