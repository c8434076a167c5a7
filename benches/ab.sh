#!/usr/bin/env bash
# Lists without variants no slower than before (issue 27): builds
# benches/plain.rs at BASE (default ce71f59, the commit before variants) in a
# git worktree and at HEAD, runs the two alternately ROUNDS times (default 5)
# and prints, per case, the median of each side's medians and their ratio.
#
#   bash benches/ab.sh [BASE] [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
base="${1:-ce71f59}"
rounds="${2:-5}"
wt="target/ab-base"
rm -rf "$wt"
git worktree prune
git worktree add -f --detach "$wt" "$base" >/dev/null
cp benches/plain.rs "$wt/benches/plain.rs"
if ! grep -q 'name = "plain"' "$wt/Cargo.toml"; then
  printf '\n[[bench]]\nname = "plain"\nharness = false\n' >>"$wt/Cargo.toml"
fi
exe() {
  (cd "$1" && cargo bench --bench plain --no-run --message-format=json 2>/dev/null) |
    grep -o '"executable":"[^"]*"' | tail -n 1 | cut -d'"' -f4
}
old=$(CARGO_TARGET_DIR="$PWD/target/ab-base-target" exe "$wt")
new=$(exe .)
: >target/ab-old.txt
: >target/ab-new.txt
for _ in $(seq "$rounds"); do
  "$old" >>target/ab-old.txt
  "$new" >>target/ab-new.txt
done
python3 - "$base" <<'PY'
import statistics, sys
def read(p):
    d = {}
    for line in open(p):
        name, ms = line.rstrip("\n").split("\t")
        d.setdefault(name, []).append(float(ms))
    return d
old, new = read("target/ab-old.txt"), read("target/ab-new.txt")
print(f"| case | {sys.argv[1]} ms | HEAD ms | HEAD / {sys.argv[1]} |")
print("|---|---|---|---|")
for name in old:
    o, n = statistics.median(old[name]), statistics.median(new[name])
    print(f"| {name} | {o:.3f} | {n:.3f} | {n / o:.2f}x |")
PY
git worktree remove --force "$wt"
