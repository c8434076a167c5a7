#!/usr/bin/env bash
# Runs every fuzz target for the given number of seconds (default 60) with
# cargo-fuzz (nightly, AddressSanitizer). A crash fails the run; its input is
# left in fuzz/artifacts/<target>/ to be added to the corpus with the fix.
#   bash fuzz/run.sh 60          # CI
#   bash fuzz/run.sh 3600        # a long run
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
for target in abi_calls versus_reference pretok tokenize policy_json; do
  # Work on a copy: new corpus entries are not committed by CI runs.
  work="target/fuzz-corpus/$target"
  mkdir -p "$work"
  cp -n fuzz/corpus/$target/* "$work/" 2>/dev/null || true
  echo "== fuzz $target for ${seconds}s"
  cargo +nightly fuzz run --fuzz-dir fuzz "$target" "$work" -- \
    -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 2>&1 | tail -n 12
done
