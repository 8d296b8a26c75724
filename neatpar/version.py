"""neatpar's version, at the bottom of the stack so that the command line can show it without
importing the package's public names (pyproject.toml reads it from here)."""
__version__ = "0.2.0"
