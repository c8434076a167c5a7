#!/usr/bin/env bash
# Builds the C# binding, its tests, its example and the contract runner with
# Mono's mcs and runs them with mono against target/release (run
# `cargo build --release --lib` first).
#
#   bash test.sh              the binding's tests; prints "N passed, N failed" last
#   bash test.sh --example    runs example/Example.cs (the README's example)
#   bash test.sh --tokens     runs example/Tokens.cs (the README's "Counting tokens")
#   bash test.sh --shrink     runs example/Shrink.cs (the README's "Items that shrink")
#   bash test.sh --session    runs example/Session.cs (the README's "Sessions")
#   bash test.sh --longhand | --policy | --presets | --sensitivity | --analytics | --tracing
#                             runs example/LongHand.cs, Policy.cs, Presets.cs,
#                             Sensitivity.cs, Analytics.cs, Tracing.cs (the
#                             README's sections of those names)
#   bash test.sh --contract   runs the contract table (tests/contract/contract.txt,
#                             or $CUPEL_CONTRACT): "contract cs: N passed, M failed"
#   bash test.sh --demo | --cross FILE | --select FILE | --bench N   (see tests/*.rs)
#
# Exits non-zero on any failure. Cupel.dll is built with -doc and warnings
# as errors, so a public member without an XML doc comment fails the build.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
lib="$root/target/release"
out="$root/target/csharp${1:+-${1#--}}"
mkdir -p "$out"
if [ ! -e "$lib/libcupel.so" ]; then
  echo "no $lib/libcupel.so: run 'cargo build --release --lib' first" >&2
  exit 1
fi
for tool in mcs mono; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "$tool not found: install Debian's mono-mcs and mono-runtime" >&2
    exit 1
  fi
done
mcs -nologo -warnaserror -optimize+ -target:library -doc:"$out/Cupel.xml" -out:"$out/Cupel.dll" \
  -r:System.Runtime.Serialization.dll "$here/Cupel.cs" "$here/Policies.cs"
build() { mcs -nologo -warnaserror -r:"$out/Cupel.dll" "$@"; }
export LD_LIBRARY_PATH="$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
case "${1:-}" in
  --example)
    build -out:"$out/Example.exe" "$here/example/Example.cs"
    exec mono "$out/Example.exe" ;;
  --tokens)
    build -out:"$out/Tokens.exe" "$here/example/Tokens.cs"
    exec mono "$out/Tokens.exe" ;;
  --shrink)
    build -out:"$out/Shrink.exe" "$here/example/Shrink.cs"
    exec mono "$out/Shrink.exe" ;;
  --session)
    build -out:"$out/Session.exe" "$here/example/Session.cs"
    exec mono "$out/Session.exe" ;;
  --longhand|--policy|--presets|--sensitivity|--analytics|--tracing)
    case "$1" in
      --longhand) name=LongHand ;; --policy) name=Policy ;; --presets) name=Presets ;;
      --sensitivity) name=Sensitivity ;; --analytics) name=Analytics ;; --tracing) name=Tracing ;;
    esac
    build -out:"$out/$name.exe" "$here/example/$name.cs"
    exec mono "$out/$name.exe" ;;
  --contract)
    build -r:System.Core.dll -out:"$out/Contract.exe" "$here/contract/Contract.cs"
    exec mono --debug "$out/Contract.exe" ;;
  --bench)
    build -optimize+ -out:"$out/Bench.exe" "$here/bench/Bench.cs"
    exec mono -O=all "$out/Bench.exe" "$2" ;;
  --cross)
    build -out:"$out/Cross.exe" "$here/cross/Cross.cs"
    exec mono "$out/Cross.exe" "$2" ;;
  --select)
    build -out:"$out/SelectCross.exe" "$here/cross/SelectCross.cs"
    exec mono "$out/SelectCross.exe" "$2" ;;
  --demo)
    build -out:"$out/Demo.exe" "$here/demo/Demo.cs"
    exec mono "$out/Demo.exe" "$root/examples/data/rag_candidates.csv" ;;
  "") ;;
  *) echo "test.sh: unknown mode $1" >&2; exit 2 ;;
esac
# The tests run; every other program is compiled, so none rots unseen.
build -r:System.Core.dll -r:System.Runtime.Serialization.dll -out:"$out/CupelTests.exe" "$here/tests/CupelTests.cs" \
  "$here/tests/PolicyTests.cs"
build -out:"$out/Example.exe" "$here/example/Example.cs"
build -out:"$out/Tokens.exe" "$here/example/Tokens.cs"
build -out:"$out/Shrink.exe" "$here/example/Shrink.cs"
build -out:"$out/Session.exe" "$here/example/Session.cs"
for name in LongHand Policy Presets Sensitivity Analytics Tracing; do
  build -out:"$out/$name.exe" "$here/example/$name.cs"
done
build -out:"$out/Demo.exe" "$here/demo/Demo.cs"
build -out:"$out/Cross.exe" "$here/cross/Cross.cs"
build -out:"$out/SelectCross.exe" "$here/cross/SelectCross.cs"
build -optimize+ -out:"$out/Bench.exe" "$here/bench/Bench.cs"
build -r:System.Core.dll -out:"$out/Contract.exe" "$here/contract/Contract.cs"
mono --debug "$out/CupelTests.exe"
