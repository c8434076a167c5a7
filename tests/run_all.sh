#!/usr/bin/env bash
# Every test of libcupel: formatting and lints, the Rust unit tests, the C
# harness, the header checks, the conformance vectors, the differential
# tests against the cupel crate, and the demo.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== cargo fmt --check"
cargo fmt --check
echo "== cargo clippy --all-targets -- -D warnings"
cargo clippy --all-targets -- -D warnings
echo "== cargo test --release"
cargo test --release
echo "== demo"
bash examples/demo.sh > target/demo.out
grep -q "GreedySlice" target/demo.out && echo "demo ran: $(wc -l < target/demo.out) lines"
