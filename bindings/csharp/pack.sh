#!/usr/bin/env bash
# Builds the NuGet package of the C# binding, Cupel.<version>.nupkg (the
# version is Cargo.toml's), into DIR (default: target/nuget), with Debian's
# nuget (Mono's NuGet 2.8.7) and mcs:
#   lib/net45/Cupel.dll, lib/net45/Cupel.xml    the binding and its docs
#   runtimes/linux-x64/native/libcupel.so       target/release's library
# Run `cargo build --release --lib` first. Prints the package's path last.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
lib="$root/target/release/libcupel.so"
dest="${1:-$root/target/nuget}"
for tool in mcs nuget; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "$tool not found: install Debian's mono-mcs and nuget" >&2
    exit 1
  fi
done
if [ ! -e "$lib" ]; then
  echo "no $lib: run 'cargo build --release --lib' first" >&2
  exit 1
fi
version="$(sed -n 's/^version = "\(.*\)"$/\1/p' "$root/Cargo.toml" | head -n 1)"
[ -n "$version" ] || { echo "no version in $root/Cargo.toml" >&2; exit 1; }
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
mcs -nologo -warnaserror -optimize+ -target:library -doc:"$stage/Cupel.xml" -out:"$stage/Cupel.dll" \
  -r:System.Runtime.Serialization.dll "$here/Cupel.cs" "$here/Policies.cs"
cp "$lib" "$stage/libcupel.so"
mkdir -p "$dest"
dest="$(cd "$dest" && pwd)"
nuget pack "$here/Cupel.nuspec" -BasePath "$stage" -OutputDirectory "$dest" -Version "$version" \
  -NonInteractive -NoPackageAnalysis >&2
echo "$dest/Cupel.$version.nupkg"
