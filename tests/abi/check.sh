#!/usr/bin/env bash
# The ABI check: the library built from this tree must be ABI-compatible
# with the committed baseline tests/abi/cupel.abi (the ABI of the last
# release). Additions pass: new functions, new enum values, new constants.
# Anything else fails: a removed or renamed function, a changed parameter or
# return type, a struct whose size or fields changed, an enum value that
# changed. docs/abi.md has the versioning rules this enforces.
#
#   bash tests/abi/check.sh            # build (profile abi) and compare
#   bash tests/abi/check.sh --update   # write a new baseline (a release, by the rules)
#   bash tests/abi/check.sh --lib P --baseline B   # compare a built library with a baseline
#
# Needs abidw/abidiff (Debian: abigail-tools).
set -euo pipefail
cd "$(dirname "$0")/../.."
here=tests/abi
baseline=$here/cupel.abi
lib=
update=
while [ $# -gt 0 ]; do
  case "$1" in
    --update) update=1 ;;
    --lib) lib=$2; shift ;;
    --baseline) baseline=$2; shift ;;
    *) echo "usage: $0 [--update] [--lib LIB] [--baseline ABI]" >&2; exit 2 ;;
  esac
  shift
done
for tool in abidw abidiff; do
  command -v "$tool" >/dev/null 2>&1 || { echo "$tool not found: install Debian's abigail-tools" >&2; exit 2; }
done
if [ -z "$lib" ]; then
  cargo build --quiet --lib --profile abi
  lib=target/abi/libcupel.so
fi
if [ -n "$update" ]; then
  abidw --no-show-locs --type-id-style hash --drop-undefined-syms \
    --suppressions "$here/suppressions.txt" --out-file "$baseline" "$lib"
  echo "wrote $baseline ($(grep -c "<elf-symbol name='cupel_" "$baseline") functions)"
  exit 0
fi
set +e
abidiff --no-added-syms --suppressions "$here/suppressions.txt" "$baseline" "$lib"
rc=$?
set -e
if [ $rc -ne 0 ]; then
  echo "ABI check FAILED (abidiff exit $rc): this library is not ABI-compatible with $baseline." >&2
  echo "An incompatible change needs a new ABI version and a new baseline: see docs/abi.md." >&2
  exit 1
fi
echo "ABI check: compatible with $baseline (additions allowed)"
