"""Builds the C extensions and installs the fast-wire start-up hook; the rest of the project's
metadata is in pyproject.toml.

The hook is a .pth file at the top of site-packages (it arms the fast wire in every interpreter of
the environment: main process, spawn workers, simulator builds, scripts that import mlagents-envs
first). A wheel carries it through build_py; an editable install (`pip install -e .`) gets it
through editable_wheel, which otherwise installs only its own path hook.
"""
import os
import shutil

from setuptools import Extension, setup
from setuptools.command.build_py import build_py
from setuptools.command.editable_wheel import editable_wheel

PTH = "neatpar-fastwire.pth"


class BuildPyWithHook(build_py):
    """Also place neatpar-fastwire.pth at the top of the wheel."""

    def run(self):
        super().run()
        self.copy_file(PTH, os.path.join(self.build_lib, PTH))

    def get_outputs(self, include_bytecode=True):
        return super().get_outputs(include_bytecode) + [os.path.join(self.build_lib, PTH)]


class EditableWheelWithHook(editable_wheel):
    """Also place neatpar-fastwire.pth at the top of the editable wheel: every file in the
    unpacked wheel folder goes into it (setuptools 65 to 84 build editable wheels this way; with a
    setuptools that does not, neatpar warns at start that the fast wire is off)."""

    def _run_build_commands(self, dist_name, unpacked_wheel, build_lib, tmp_dir):
        outputs = super()._run_build_commands(dist_name, unpacked_wheel, build_lib, tmp_dir)
        shutil.copy(os.path.join(os.path.dirname(os.path.abspath(__file__)), PTH), os.path.join(unpacked_wheel, PTH))
        return outputs


setup(
    cmdclass={"build_py": BuildPyWithHook, "editable_wheel": EditableWheelWithHook},
    ext_modules=[
        Extension(
            "neatpar.nn._kernel",
            sources=["neatpar/nn/_kernel.c"],
            # Fused multiply-adds would round differently from neat-python's Python arithmetic.
            extra_compile_args=["-O2", "-ffp-contract=off", "-fno-fast-math"],
        ),
        Extension(
            "neatpar.evolution._core",
            sources=["neatpar/evolution/_core.c"],
            depends=["neatpar/evolution/rng.h", "neatpar/evolution/pyset.h"],
            # neat-python's float arithmetic, operation for operation: no fused multiply-adds.
            extra_compile_args=["-O2", "-ffp-contract=off", "-fno-fast-math", "-pthread"],
            extra_link_args=["-pthread"],
        ),
        Extension(
            "neatpar.search._knn",
            sources=["neatpar/search/_knn.c"],
            # Distances rounded as Python's math rounds them: no fused multiply-adds; -O3 vectorises
            # the distance loop across reference rows (which leaves each row's sum in order).
            extra_compile_args=["-O3", "-ffp-contract=off", "-fno-fast-math"],
        ),
        Extension(
            "neatpar.envs.unity._wire",
            sources=["neatpar/envs/unity/_wire.c"],
            # Comparisons must see NaN and infinity as they are.
            extra_compile_args=["-O2", "-fno-fast-math"],
        ),
    ],
)
