#!/usr/bin/env bash
# WebAssembly (Node) against native C on the same 1k/10k/100k-item
# pipeline, and a plain JavaScript greedy against libcupel's in WebAssembly.
#   bash bindings/js/bench/run.sh [ROUNDS [N...]]   # e.g. run.sh 9 10000
set -euo pipefail
cd "$(dirname "$0")/../../.."
rounds="${1:-1}"
shift || true
sizes="${*:-1000 10000 100000}"
bash bindings/js/build.sh >/dev/null
cargo build --release --lib
dir=target/js-bench
mkdir -p "$dir"
cc -O2 -std=c99 -D_POSIX_C_SOURCE=200809L -Iinclude bindings/bench/bench_c.c \
   -Ltarget/release -lcupel -Wl,-rpath,"$PWD/target/release" -o "$dir/bench_native"
echo "cupel.wasm: $(wc -c < bindings/js/cupel.wasm) bytes"
# ROUNDS rounds of the WebAssembly side then the native one (a shared
# machine drifts between rounds; a ratio within a round holds better), and
# each pipeline's WebAssembly / native ratio per size: median and range.
log="$dir/rounds.txt"
: >"$log"
for r in $(seq "$rounds"); do
  {
    CUPEL_BENCH_N="${sizes// /,}" node bindings/js/bench/bench.mjs "$dir"
    for n in $sizes; do
      "$dir/bench_native" --run-only "$dir/items_$n.txt"
      "$dir/bench_native" --run-only --knapsack "$dir/items_$n.txt"
    done
  } | tee -a "$log"
done
python3 - "$log" <<'PY'
import re, statistics, sys
got = {}
for line in open(sys.argv[1]):
    n = re.match(r"N=(\d+)", line).group(1)
    for key, ms in re.findall(r"(\w+)_ms=([\d.]+)", line):
        got.setdefault((n, key), []).append(float(ms))
for n in sorted({n for n, _ in got}, key=int):
    for wasm, native in [("pipeline_wasm", "pipeline_native"), ("knapsack_pipeline_wasm", "knapsack_native")]:
        ratios = sorted(w / c for w, c in zip(got[(n, wasm)], got[(n, native)]))
        print(f"N={n} {wasm}: median {statistics.median(got[(n, wasm)]):.3f} ms, native "
              f"{statistics.median(got[(n, native)]):.3f} ms, WebAssembly/native {statistics.median(ratios):.2f}x "
              f"({ratios[0]:.2f}-{ratios[-1]:.2f} over {len(ratios)} rounds)")
PY
