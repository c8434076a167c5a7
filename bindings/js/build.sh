#!/usr/bin/env bash
# Builds cupel.wasm beside this script: the crate for wasm32-unknown-unknown
# (profile `wasm`: LTO, no symbols), then wasm-opt -O3 when binaryen is
# installed (Debian: apt-get install binaryen). Needs
# `rustup target add wasm32-unknown-unknown`.
#
# The module carries the o200k_base and cl100k_base vocabularies (the
# default cargo feature builtin-vocabularies, 2.3 MB), so a tokenizer never
# fetches anything; their MIT notice goes beside it as
# LICENSE-vocabularies.txt, which the package ships.
#
# WebAssembly SIMD (simd128) is on: LLVM vectorises the portable knapsack
# kernel with it (the Knapsack(100) pipeline at 1,000 items: 0.66 ms against
# 2.2 without; BENCHMARKS.md). It needs a runtime with SIMD: Node >= 20 (the
# package's engines; SIMD itself came in 16.4), Chrome/Electron >= 91,
# Firefox >= 89, Safari >= 16.4. CUPEL_WASM_SIMD=0 builds without it, for
# older runtimes.
#
# The function table is exported and growable (wasm-ld --export-table
# --growable-table), for the wasm32 target only: a C function pointer in
# wasm32 is an index into that table, and index.js puts its trace callback
# (a JavaScript function wrapped by a tiny module it writes itself) into a
# slot it grows, so that cupel_pipeline_set_trace can call it.
set -euo pipefail
cd "$(dirname "$0")/../.."
flags="-C link-arg=--export-table -C link-arg=--growable-table"
if [ "${CUPEL_WASM_SIMD:-1}" != 0 ]; then
  flags="-C target-feature=+simd128 $flags"
fi
export CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUSTFLAGS="$flags"
cargo build --profile wasm --target wasm32-unknown-unknown --lib
src=target/wasm32-unknown-unknown/wasm/cupel.wasm
if command -v wasm-opt >/dev/null 2>&1; then
  wasm-opt --all-features -O3 "$src" -o bindings/js/cupel.wasm
else
  echo "wasm-opt not found: cupel.wasm is not post-optimised" >&2
  cp "$src" bindings/js/cupel.wasm
fi
cp src/text/data/LICENSE bindings/js/LICENSE-vocabularies.txt
echo "bindings/js/cupel.wasm: $(wc -c < bindings/js/cupel.wasm) bytes"
