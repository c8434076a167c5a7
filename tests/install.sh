#!/usr/bin/env bash
# Installs what the tests need on a fresh Debian machine, skipping whatever
# is already there: the C/C++ compilers, Go, Mono, valgrind, Node and npm,
# LuaJIT, binaryen (wasm-opt), python3-venv, python3-matplotlib, the aarch64
# cross tools and qemu-user, CMake, pkg-config, abigail-tools, LuaRocks,
# NuGet, PyPy, and the rustup targets wasm32-unknown-unknown and
# aarch64-unknown-linux-gnu.
# Run as root, or with sudo available. `bash tests/run_all.sh --install`
# runs it first; .ci/run does that.
set -euo pipefail
need=()
want() { command -v "$1" >/dev/null 2>&1 || need+=("${@:2}"); }
want cc gcc
want c++ g++
want git git
want go golang-go
want mcs mono-mcs mono-devel
want mono mono-runtime
want valgrind valgrind
want node nodejs
want npm npm
want luajit luajit
want wasm-opt binaryen
want qemu-aarch64 qemu-user
want aarch64-linux-gnu-gcc gcc-aarch64-linux-gnu libc6-dev-arm64-cross
want python3 python3
# Packaging and ABI checks (issue 25): CMake and pkg-config for the C/C++
# package, abidiff for the ABI baseline, LuaRocks, NuGet (Mono's nuget.exe),
# and PyPy 3.9 as the second Python the wheel is installed into.
want cmake cmake
want pkg-config pkg-config
want abidiff abigail-tools
want luarocks luarocks
want nuget nuget
want pypy3 pypy3
# The Python binding's test makes a virtual environment.
python3 -c "import ensurepip, venv" >/dev/null 2>&1 || need+=(python3-venv)
# The demo's chart (examples/session_chart.py): Debian's matplotlib, for
# Debian's python3 when python3 is another build.
python3 -c "import matplotlib" >/dev/null 2>&1 || /usr/bin/python3 -c "import matplotlib" >/dev/null 2>&1 \
  || need+=(python3-matplotlib)
if [ ${#need[@]} -gt 0 ]; then
  sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || { echo "install.sh: need root or sudo to apt-get install ${need[*]}" >&2; exit 1; }
    sudo=(sudo)
  fi
  echo "== apt-get install ${need[*]}"
  "${sudo[@]}" apt-get update
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y --no-install-recommends "${need[@]}"
fi
for target in wasm32-unknown-unknown aarch64-unknown-linux-gnu; do
  rustup target list --installed | grep -qx "$target" || rustup target add "$target"
done
