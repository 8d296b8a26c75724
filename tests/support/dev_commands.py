"""The project's dev.py, loaded as a module (it is a script at the top of the repository, not part
of the package): its commands' definitions, the Pythons it finds and the matrix it runs."""
import importlib.util
import os

from .paths import ROOT


def load_dev():
    """dev.py as a module object."""
    spec = importlib.util.spec_from_file_location("dev", os.path.join(ROOT, "dev.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
