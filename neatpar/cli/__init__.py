"""The `neatpar` command: `evolve`, `play` and `export` (command_line.py parses the command line;
evolve.py runs a run, drawing on record/ for everything the run leaves behind)."""
from .command_line import build_parser, main

__all__ = ["build_parser", "main"]
