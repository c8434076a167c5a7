#!/usr/bin/env bash
# The cargo runner (CARGO_TARGET_<host>_RUNNER) through which
# tests/run_all.sh's test lanes run each test binary: `cargo test` starts
# this script with the binary and its arguments instead of the binary.
#
#  - CUPEL_LANE_DIR/CUPEL_LANE set: the first binary of the lane marks the
#    lane as started ($CUPEL_LANE_DIR/$CUPEL_LANE.started: its cargo has
#    checked that the test binaries are fresh), and with CUPEL_LANE_GATE=1
#    waits for $CUPEL_LANE_DIR/go before running anything. run_all.sh opens
#    the gate once every lane has started and it has built the release
#    library the binding tests link (`cargo build --release --lib`): that
#    build and the test build share cargo's fingerprint (the library is a
#    cdylib; only the test hooks differ), so no lane's cargo may look at the
#    test build after it.
#  - CUPEL_KERNEL_SWEEP=1: the suites that exercise the knapsack kernels
#    (the library's unit tests, conformance, differential, variants) run
#    again with each kernel forced in turn (CUPEL_KNAPSACK_KERNEL), after
#    their run with the dispatched kernel.
set -uo pipefail
exe=$1
if [ -n "${CUPEL_LANE_DIR:-}" ] && [ ! -e "$CUPEL_LANE_DIR/$CUPEL_LANE.started" ]; then
  : >"$CUPEL_LANE_DIR/$CUPEL_LANE.started"
  if [ "${CUPEL_LANE_GATE:-}" = 1 ]; then
    waited=0
    until [ -e "$CUPEL_LANE_DIR/go" ]; do
      [ -e "$CUPEL_LANE_DIR/abort" ] && { echo "lane $CUPEL_LANE: aborted before it ran" >&2; exit 1; }
      sleep 0.2
      waited=$((waited + 1))
      if [ "$waited" -gt 9000 ]; then echo "lane $CUPEL_LANE: no gate after 30 minutes" >&2; exit 1; fi
    done
  fi
fi
"$@" || exit $?
[ "${CUPEL_KERNEL_SWEEP:-}" = 1 ] || exit 0
case "$(basename "$exe")" in
  cupel-* | conformance-* | differential-* | variants-*) ;;
  *) exit 0 ;;
esac
for kernel in portable sse2 sse4.1; do
  echo "knapsack kernel $kernel: $(basename "$exe")"
  CUPEL_KNAPSACK_KERNEL=$kernel "$@" >"$exe.kernel-$kernel.out" 2>&1
  status=$?
  grep -E "^test result|FAILED|panicked" "$exe.kernel-$kernel.out"
  [ "$status" -eq 0 ] || { cat "$exe.kernel-$kernel.out"; exit "$status"; }
done
