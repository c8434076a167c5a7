"""Builds libcupel (cargo build --release, in the checkout this package sits
in) and bundles the shared library inside the package, so that the wheel is
the whole installation. CUPEL_LIB_PATH names an already built library to
bundle instead.

The package loads the library through ctypes: it has no CPython extension
module, so its wheel depends on no Python ABI. The wheel is tagged
py3-none-<platform> (e.g. py3-none-linux_x86_64): one file that installs
on every CPython >= 3.9 and on PyPy of that platform. (abi3 is the tag of C
extensions built on CPython's limited API; there is no extension here.)"""
import os
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

from setuptools.command.bdist_wheel import bdist_wheel  # setuptools >= 70.1

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
NAME = {"darwin": "libcupel.dylib", "win32": "cupel.dll"}.get(sys.platform, "libcupel.so")


class BuildWithLibrary(build_py):
    """build_py that also puts the native library into the built package
    (the build directory, not the source tree)."""

    def run(self):
        super().run()
        lib = os.environ.get("CUPEL_LIB_PATH")
        if not lib:
            subprocess.check_call(["cargo", "build", "--release", "--lib"], cwd=ROOT)
            lib = ROOT / "target" / "release" / NAME
        target = Path(self.build_lib) / "cupel"
        target.mkdir(parents=True, exist_ok=True)
        shutil.copy(lib, target / NAME)


class BinaryDistribution(Distribution):
    """The package holds a native library: platform-specific (platlib, not purelib)."""

    def has_ext_modules(self):
        return True


class PlatformWheel(bdist_wheel):
    """A platform wheel (it holds a native library) for any Python 3:
    py3-none-<platform>."""

    def finalize_options(self):
        super().finalize_options()
        self.root_is_pure = False

    def get_tag(self):
        _, _, platform = super().get_tag()
        return "py3", "none", platform


setup(cmdclass={"build_py": BuildWithLibrary, "bdist_wheel": PlatformWheel}, distclass=BinaryDistribution)
