"""The settings' public names where users import them (`from neatpar.settings import load`): the
settings model and the loading of a config file live in neatpar/config/ (settings.py, files.py)."""
from .config.files import load
from .config.settings import Settings

__all__ = ["Settings", "load"]
