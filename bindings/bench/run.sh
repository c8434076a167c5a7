#!/usr/bin/env bash
# Binding overhead: the same 10,000-item pipeline run (items pushed with the
# bulk calls, then Composite(Recency, Kind) + deduplication + Greedy +
# Chronological) from C, Go, C# and Python; medians in ms.
#   bash bindings/bench/run.sh [N [ROUNDS]]
# With ROUNDS (default 1) the four run one after the other ROUNDS times and
# the last lines give each binding's ratio to the C run of its own round:
# the median and range over the rounds (a shared machine drifts between
# rounds; a ratio within a round holds better).
set -euo pipefail
cd "$(dirname "$0")/../.."
n="${1:-10000}"
rounds="${2:-1}"
dir=target/binding-bench
mkdir -p "$dir"
cargo build --release --lib
python3 bindings/bench/gen.py "$n" "$dir/items.txt"
cc -O2 -std=c99 -D_POSIX_C_SOURCE=200809L -Iinclude bindings/bench/bench_c.c \
   -Ltarget/release -lcupel -Wl,-rpath,"$PWD/target/release" -o "$dir/bench_c"
data="$PWD/$dir/items.txt"
(cd bindings/go && go test -c -o "../../$dir/go_bench.test" . >/dev/null)
bash bindings/csharp/test.sh --bench "$data" >/dev/null # builds Bench.exe
log="$dir/rounds.txt"
: >"$log"
for r in $(seq "$rounds"); do
  {
    "$dir/bench_c" "$data"
    (cd bindings/go && CUPEL_BENCH_DATA="$data" "../../$dir/go_bench.test" -test.run '^$' \
      -test.bench Pipeline -test.benchtime 200x | grep Benchmark)
    LD_LIBRARY_PATH="$PWD/target/release" mono -O=all target/csharp-bench/Bench.exe "$data"
    PYTHONPATH=bindings/python/src CUPEL_LIB="$PWD/target/release/libcupel.so" \
      python3 bindings/bench/bench.py "$data"
  } | tee -a "$log" | sed "s/^/round $r: /"
done
python3 - "$log" "$rounds" <<'PY'
import re, statistics, sys
lines, rounds = open(sys.argv[1]).read().splitlines(), int(sys.argv[2])
def ms(line):
    m = re.search(r"([\d.]+) ns/op", line)
    return float(m.group(1)) / 1e6 if m else float(re.search(r": ([\d.]+) ms", line).group(1))
per = len(lines) // rounds
names = [re.sub(r"[-:].*", "", l).replace("Benchmark", "Go ") for l in lines[:per]]
for k in range(1, per):
    ratios = sorted(ms(lines[r * per + k]) / ms(lines[r * per]) for r in range(rounds))
    times = [ms(lines[r * per + k]) for r in range(rounds)]
    print(f"{names[k]}: median {statistics.median(times):.2f} ms, ratio to C {statistics.median(ratios):.2f}x"
          f" ({ratios[0]:.2f}-{ratios[-1]:.2f} over {rounds} rounds)")
print(f"C: median {statistics.median(ms(lines[r * per]) for r in range(rounds)):.2f} ms")
PY
