#!/usr/bin/env bash
# WebAssembly (Node) against native C on the same 1k/10k/100k-item
# pipeline, and a plain JavaScript greedy against libcupel's in WebAssembly.
#   bash bindings/js/bench/run.sh
set -euo pipefail
cd "$(dirname "$0")/../../.."
bash bindings/js/build.sh >/dev/null
cargo build --release --lib
dir=target/js-bench
mkdir -p "$dir"
cc -O2 -std=c99 -D_POSIX_C_SOURCE=200809L -Iinclude bindings/bench/bench_c.c \
   -Ltarget/release -lcupel -Wl,-rpath,"$PWD/target/release" -o "$dir/bench_native"
echo "cupel.wasm: $(wc -c < bindings/js/cupel.wasm) bytes"
node bindings/js/bench/bench.mjs "$dir"
for n in 1000 10000 100000; do
  "$dir/bench_native" --run-only "$dir/items_$n.txt"
  "$dir/bench_native" --run-only --knapsack "$dir/items_$n.txt"
done
