#!/usr/bin/env bash
# Every test of libcupel: formatting and lints, the Rust unit tests, the C
# harness, the header checks, the conformance vectors, the differential
# tests against the cupel crate, and the demo.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p target

echo "== cargo fmt --check"
cargo fmt --check
echo "== cargo clippy --all-targets -- -D warnings"
cargo clippy --all-targets -- -D warnings
echo "== demo"
bash examples/demo.sh > target/demo.out
grep -q "CountConstrainedKnapsack" target/demo.out
echo "demo ran: $(wc -l < target/demo.out) lines of output"
echo "== cargo test --release"
cargo test --release 2>&1 | tee target/test.out
# One closing line for the whole run (cargo prints one per test binary).
awk '/^test result:/ { p += $4; f += $6 } END { printf "total: %d passed, %d failed\n", p, f; exit (f > 0 || p == 0) }' target/test.out
