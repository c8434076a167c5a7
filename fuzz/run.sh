#!/usr/bin/env bash
# Runs every fuzz target for the given number of seconds (default 60) with
# cargo-fuzz (nightly, AddressSanitizer). A crash fails the run; its input is
# left in fuzz/artifacts/<target>/ to be added to the corpus with the fix.
# The second argument is how many targets fuzz at once (default 1), each
# for the full time on a core of its own: give it no more than the cores
# that nothing else is using.
#   bash fuzz/run.sh 15 2        # CI (.ci/run)
#   bash fuzz/run.sh 3600        # a long run
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
jobs="${2:-1}"
targets="abi_calls versus_reference pretok tokenize policy_json"
# Built once before the runs (`cargo fuzz run` builds its target first; .ci/run
# has usually built them already).
cargo +nightly fuzz build --fuzz-dir fuzz
mkdir -p target/fuzz-logs
fuzz_one() {
  local target=$1 work="target/fuzz-corpus/$1" log="target/fuzz-logs/$1.log" status=0
  # Work on a copy: new corpus entries are not committed by CI runs.
  mkdir -p "$work"
  cp -n fuzz/corpus/$target/* "$work/" 2>/dev/null || true
  cargo +nightly fuzz run --fuzz-dir fuzz "$target" "$work" -- \
    -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 >"$log" 2>&1 || status=$?
  { echo "== fuzz $target for ${seconds}s (exit $status)"; tail -n 12 "$log"; } >"$log.tail"
  [ "$status" -eq 0 ] || { echo "== fuzz $target FAILED (exit $status):"; cat "$log"; } >>"$log.tail"
  return "$status"
}
failed=0
running=()
for target in $targets; do
  fuzz_one "$target" &
  running+=("$!:$target")
  if [ "${#running[@]}" -ge "$jobs" ]; then
    wait "${running[0]%%:*}" || failed=1
    cat "target/fuzz-logs/${running[0]#*:}.log.tail"
    running=("${running[@]:1}")
  fi
done
for job in "${running[@]}"; do
  wait "${job%%:*}" || failed=1
  cat "target/fuzz-logs/${job#*:}.log.tail"
done
exit "$failed"
