#!/usr/bin/env bash
# The Rust test suites on aarch64, where only the portable knapsack kernel
# exists: cross-built for aarch64-unknown-linux-gnu and run under qemu-user
# (the library's unit tests incl. every kernel check, the conformance
# vectors, the differential tests against the cupel crate, simulation and
# threads: what depends on the architecture is the knapsack kernel and the
# memory ordering between threads). The hostile-input and fuzz-replay
# suites, which check argument handling through the ABI, run on x86-64
# only (under qemu they took 2.5 minutes of CI). The heaviest test
# dependencies are left out of this build (`--cfg cupel_lean_tests`,
# Cargo.toml). Needs the rustup target, the
# cross linker (Debian gcc-aarch64-linux-gnu, libc6-dev-arm64-cross) and
# qemu-user; .ci/run installs them. Without them this fails when CI=true
# and skips, loudly, elsewhere. Appends cargo's results to target/test.out.
#   bash tests/aarch64.sh           # build and run
#   bash tests/aarch64.sh --build   # only build (run_all.sh, in the background)
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p target
target=aarch64-unknown-linux-gnu
missing=()
rustup target list --installed 2>/dev/null | grep -qx "$target" || missing+=("rustup target $target")
command -v aarch64-linux-gnu-gcc >/dev/null 2>&1 || missing+=(aarch64-linux-gnu-gcc)
command -v qemu-aarch64 >/dev/null 2>&1 || missing+=(qemu-aarch64)
if [ ${#missing[@]} -gt 0 ]; then
  if [ "${1:-}" = --build ]; then
    echo "aarch64 build: missing ${missing[*]}"
    exit 0
  fi
  if [ "${CI:-}" = true ]; then
    echo "aarch64 tests: missing ${missing[*]}" >&2
    exit 1
  fi
  echo "*** aarch64 tests SKIPPED: missing ${missing[*]} (they run in CI) ***"
  exit 0
fi
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER="qemu-aarch64 -L /usr/aarch64-linux-gnu"
export RUSTFLAGS="--cfg cupel_lean_tests"
# A target directory of its own: run_all.sh runs this beside the sanitizer
# and perf-guard builds, which would otherwise wait for target/'s lock.
suites=(--lib --test conformance --test differential --test simulation --test threads)
if [ "${1:-}" = --build ]; then
  cargo test --release --target "$target" --target-dir target/aarch64 "${suites[@]}" --no-run
  exit 0
fi
cargo test --release --target "$target" --target-dir target/aarch64 "${suites[@]}" 2>&1 \
  | tee -a target/test.out | grep -E "^test result|FAILED|panicked|Running"
