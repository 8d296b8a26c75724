"""The documentation's tool, docs/generate.py, loaded as a module (it is a script, not a package)."""
import importlib.util
import os

from .paths import ROOT


def docs_tool():
    """docs/generate.py as a module."""
    spec = importlib.util.spec_from_file_location("docs_generate", os.path.join(ROOT, "docs", "generate.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
