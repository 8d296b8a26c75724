"""Builds the C population kernel; everything else is in pyproject.toml."""
from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "neatpar.nn._kernel",
            sources=["neatpar/nn/_kernel.c"],
            # Fused multiply-adds would round differently from neat-python's Python arithmetic.
            extra_compile_args=["-O2", "-ffp-contract=off", "-fno-fast-math"],
        )
    ]
)
