"""Builds the C extensions and installs the fast-wire start-up hook; the rest of the project's
metadata is in pyproject.toml.

The extensions' compiler flags are chosen by the compiler setuptools picks (gcc's spelling, which
clang shares, or MSVC's): C11, and floating point as written, since the population kernel and the
NEAT step repeat neat-python's Python arithmetic operation for operation (a fused multiply-add
rounds differently) and the codec's checks must see NaN and infinity as they are.

The hook is a .pth file at the top of site-packages (it arms the fast wire in every interpreter of
the environment: main process, spawn workers, simulator builds, scripts that import mlagents-envs
first). A wheel carries it through build_py; an editable install (`pip install -e .`) gets it
through editable_wheel, which otherwise installs only its own path hook.
"""
import glob
import os
import shutil

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py
from setuptools.command.editable_wheel import editable_wheel

PTH = "neatpar-fastwire.pth"

# Every extension's flags, by compiler family. gcc and clang: C11, no contraction into fused
# multiply-adds, no fast-math, symbols hidden but each module's PyInit. MSVC: its default C mode
# (the one CPython's own build uses) and /fp:precise, its default model, which contracts nothing
# unless /fp:contract is given and has no fast-math unless /fp:fast is.
COMPILE_FLAGS = {
    "gcc": ["-std=c11", "-O2", "-ffp-contract=off", "-fno-fast-math", "-fvisibility=hidden"],
    "msvc": ["/O2", "/fp:precise"],
}
# The NEAT step computes a speciation's distances on threads: POSIX threads need -pthread; Windows
# builds use Win32 threads, which need no flag.
THREADED = {"neatpar.evolution._core"}
THREAD_FLAGS = {"gcc": [] if os.name == "nt" else ["-pthread"], "msvc": []}
# Loops the compiler should vectorise (HyperNEAT's queries and substrates, novelty's distances over
# reference rows) get gcc's and clang's -O3; each sum still runs in its written order.
VECTORISED = {"neatpar.nn._substrate", "neatpar.search._knn"}


class BuildExtByCompiler(build_ext):
    """Sets each extension's flags for the compiler setuptools picked (self.compiler.compiler_type:
    "msvc", or "unix" / "mingw32" / "cygwin", which take gcc's flags)."""

    def build_extensions(self):
        family = "msvc" if self.compiler.compiler_type == "msvc" else "gcc"
        for ext in self.extensions:
            threads = THREAD_FLAGS[family] if ext.name in THREADED else []
            flags = COMPILE_FLAGS[family]
            if family == "gcc" and ext.name in VECTORISED:
                flags = [("-O3" if flag == "-O2" else flag) for flag in flags]
            ext.extra_compile_args = flags + threads
            ext.extra_link_args = threads
        super().build_extensions()


class BuildPyWithHook(build_py):
    """Also place neatpar-fastwire.pth at the top of the wheel; and leave in the build folder no
    module of neatpar that the sources no longer have (build/lib outlives a moved or deleted
    module, and a wheel takes all of it)."""

    def run(self):
        super().run()
        self.copy_file(PTH, os.path.join(self.build_lib, PTH))
        kept = {os.path.normpath(path) for path in self.get_outputs(include_bytecode=False)}
        for folder, _, files in os.walk(os.path.join(self.build_lib, "neatpar"), topdown=False):
            for name in files:
                path = os.path.normpath(os.path.join(folder, name))
                if name.endswith(".py") and path not in kept:
                    os.remove(path)
            if not os.listdir(folder):
                os.rmdir(folder)

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
    cmdclass={"build_ext": BuildExtByCompiler, "build_py": BuildPyWithHook, "editable_wheel": EditableWheelWithHook},
    ext_modules=[
        Extension("neatpar.nn._kernel", sources=["neatpar/nn/_kernel.c"],
                  depends=["neatpar/nn/neat_functions.h", "neatpar/python_sum.h"]),
        Extension("neatpar.nn._substrate", sources=["neatpar/nn/_substrate.c"],
                  depends=["neatpar/nn/neat_functions.h", "neatpar/python_sum.h"]),
        Extension("neatpar.nn._es_search",
                  sources=["neatpar/nn/_es_search.c", "neatpar/nn/es_search.c", "neatpar/nn/es_tables.c"],
                  depends=["neatpar/nn/es_search.h", "neatpar/nn/es_tables.h", "neatpar/nn/neat_functions.h",
                           "neatpar/python_sum.h"]),
        Extension("neatpar.evolution._core",
                  sources=["neatpar/evolution/_core.c"] + sorted(glob.glob("neatpar/evolution/core/*.c")),
                  depends=sorted(glob.glob("neatpar/evolution/core/*.h")) + ["neatpar/python_sum.h"]),
        Extension("neatpar.envs.unity._wire", sources=["neatpar/envs/unity/_wire.c"], depends=["neatpar/envs/unity/why.h"]),
        Extension("neatpar.envs.unity._pixels", sources=["neatpar/envs/unity/_pixels.c"],
                  depends=["neatpar/envs/unity/why.h"]),
        Extension("neatpar.search._knn", sources=["neatpar/search/_knn.c"]),
    ],
)
