"""The settings' public names where users import them (`from neatpar.settings import load`): the
settings model and the loading of a config file live in neatpar/config/ (settings_model.py, files.py)."""
from .config.files import load
from .config.settings_model import Settings

__all__ = ["Settings", "load"]
