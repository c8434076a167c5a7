#!/usr/bin/env bash
# Builds libcupel (release) and runs the C demo on the bundled candidates.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release
mkdir -p target/examples
cc -std=c99 -Wall -Wextra -pedantic -O2 -Iinclude examples/demo.c \
   -Ltarget/release -lcupel -Wl,-rpath,"$PWD/target/release" -o target/examples/demo
./target/examples/demo examples/data/rag_candidates.csv examples/data/session
