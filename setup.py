"""Builds the C population kernel and installs the fast-wire start-up hook; the rest of the
project's metadata is in pyproject.toml."""
import os

from setuptools import Extension, setup
from setuptools.command.build_py import build_py

PTH = "neatpar-fastwire.pth"


class BuildPyWithHook(build_py):
    """Also place neatpar-fastwire.pth at the top of the wheel, so that it lands in site-packages
    and arms the fast wire in every interpreter of the environment."""

    def run(self):
        super().run()
        self.copy_file(PTH, os.path.join(self.build_lib, PTH))

    def get_outputs(self, include_bytecode=True):
        return super().get_outputs(include_bytecode) + [os.path.join(self.build_lib, PTH)]


setup(
    cmdclass={"build_py": BuildPyWithHook},
    ext_modules=[
        Extension(
            "neatpar.nn._kernel",
            sources=["neatpar/nn/_kernel.c"],
            # Fused multiply-adds would round differently from neat-python's Python arithmetic.
            extra_compile_args=["-O2", "-ffp-contract=off", "-fno-fast-math"],
        )
    ],
)
