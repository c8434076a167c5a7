"""Builds libcupel (cargo build --release, in the checkout this package sits
in) and bundles the shared library inside the package, so that
`pip install bindings/python` is the whole installation. CUPEL_LIB_PATH
names an already built library to bundle instead."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
NAME = {"darwin": "libcupel.dylib", "win32": "cupel.dll"}.get(sys.platform, "libcupel.so")


class BuildWithLibrary(build_py):
    def run(self):
        lib = os.environ.get("CUPEL_LIB_PATH")
        if not lib:
            subprocess.check_call(["cargo", "build", "--release", "--lib"], cwd=ROOT)
            lib = ROOT / "target" / "release" / NAME
        shutil.copy(lib, HERE / "src" / "cupel" / NAME)
        super().run()


class BinaryDistribution(Distribution):
    """The wheel holds a native library: it is platform-specific."""

    def has_ext_modules(self):
        return True


setup(cmdclass={"build_py": BuildWithLibrary}, distclass=BinaryDistribution)
