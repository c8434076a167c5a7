#!/usr/bin/env bash
# Builds cupel.wasm beside this script: the crate for wasm32-unknown-unknown
# (profile `wasm`: LTO, no symbols), then wasm-opt -O3 when binaryen is
# installed (Debian: apt-get install binaryen). Needs
# `rustup target add wasm32-unknown-unknown`.
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo build --profile wasm --target wasm32-unknown-unknown --lib
src=target/wasm32-unknown-unknown/wasm/cupel.wasm
if command -v wasm-opt >/dev/null 2>&1; then
  wasm-opt --all-features -O3 "$src" -o bindings/js/cupel.wasm
else
  echo "wasm-opt not found: cupel.wasm is not post-optimised" >&2
  cp "$src" bindings/js/cupel.wasm
fi
echo "bindings/js/cupel.wasm: $(wc -c < bindings/js/cupel.wasm) bytes"
