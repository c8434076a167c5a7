#!/usr/bin/env bash
# Builds libcupel (release) and runs the C demo on the bundled data; then
# draws section 6's cost per turn (target/examples/session_cost.png) when a
# Python with matplotlib is there.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release
mkdir -p target/examples
cc -std=c99 -Wall -Wextra -pedantic -O2 -Iinclude examples/demo.c \
   -Ltarget/release -lcupel -Wl,-rpath,"$PWD/target/release" -o target/examples/demo
./target/examples/demo examples/data/rag_candidates.csv examples/data/session \
   target/examples/session_costs.csv examples/data/conversation
# The chart: python3, else Debian's own (tests/install.sh installs
# python3-matplotlib for it when python3 is another build, such as pyenv's).
for py in python3 /usr/bin/python3; do
  if command -v "$py" >/dev/null 2>&1 && "$py" -c "import matplotlib" >/dev/null 2>&1; then
    "$py" examples/session_chart.py target/examples/session_costs.csv target/examples/session_cost.png
    exit 0
  fi
done
echo "(no chart: matplotlib is not importable; tests/install.sh installs python3-matplotlib)"
