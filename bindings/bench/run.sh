#!/usr/bin/env bash
# Binding overhead: the same 10,000-item pipeline run (items pushed with the
# bulk calls, then Composite(Recency, Kind) + deduplication + Greedy +
# Chronological) from C, Go, C# and Python, in one run; medians in ms.
#   bash bindings/bench/run.sh [N]
set -euo pipefail
cd "$(dirname "$0")/../.."
n="${1:-10000}"
dir=target/binding-bench
mkdir -p "$dir"
cargo build --release --lib
python3 bindings/bench/gen.py "$n" "$dir/items.txt"
cc -O2 -std=c99 -D_POSIX_C_SOURCE=200809L -Iinclude bindings/bench/bench_c.c \
   -Ltarget/release -lcupel -Wl,-rpath,"$PWD/target/release" -o "$dir/bench_c"
data="$PWD/$dir/items.txt"
"$dir/bench_c" "$data"
(cd bindings/go && CUPEL_BENCH_DATA="$data" go test -run '^$' -bench Pipeline -benchtime 200x . | grep Benchmark)
bash bindings/csharp/test.sh --bench "$data"
PYTHONPATH=bindings/python/src CUPEL_LIB="$PWD/target/release/libcupel.so" python3 bindings/bench/bench.py "$data"
