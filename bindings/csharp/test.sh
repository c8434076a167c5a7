#!/usr/bin/env bash
# Builds the C# binding, its tests and its example with Mono's mcs and runs
# them with mono against target/release (run `cargo build --release` first).
# Prints "N passed, N failed" last; exits non-zero on any failure.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
lib="$root/target/release"
out="$root/target/csharp${1:+-${1#--}}"
mkdir -p "$out"
if [ ! -e "$lib/libcupel.so" ]; then
  echo "no $lib/libcupel.so: run 'cargo build --release' first" >&2
  exit 1
fi
for tool in mcs mono; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "$tool not found: install Debian's mono-mcs and mono-runtime" >&2
    exit 1
  fi
done
mcs -nologo -warnaserror -optimize+ -target:library -out:"$out/Cupel.dll" "$here/Cupel.cs"
mcs -nologo -warnaserror -r:"$out/Cupel.dll" -r:System.Core.dll -out:"$out/CupelTests.exe" "$here/tests/CupelTests.cs"
mcs -nologo -warnaserror -r:"$out/Cupel.dll" -out:"$out/Example.exe" "$here/example/Example.cs"
mcs -nologo -warnaserror -r:"$out/Cupel.dll" -out:"$out/Demo.exe" "$here/demo/Demo.cs"
mcs -nologo -warnaserror -r:"$out/Cupel.dll" -out:"$out/Cross.exe" "$here/cross/Cross.cs"
mcs -nologo -warnaserror -optimize+ -r:"$out/Cupel.dll" -out:"$out/Bench.exe" "$here/bench/Bench.cs"
export LD_LIBRARY_PATH="$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
if [ "${1:-}" = "--example" ]; then
  exec mono "$out/Example.exe"
fi
if [ "${1:-}" = "--bench" ]; then
  exec mono -O=all "$out/Bench.exe" "$2"
fi
if [ "${1:-}" = "--cross" ]; then
  exec mono "$out/Cross.exe" "$2"
fi
if [ "${1:-}" = "--demo" ]; then
  exec mono "$out/Demo.exe" "$root/examples/data/rag_candidates.csv"
fi
mono --debug "$out/CupelTests.exe"
