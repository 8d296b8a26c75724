"""How a run's messages show paths and commands: relative to the current folder when below it, and
the commands (`neatpar play`, `tensorboard`) as they can be typed here."""
from __future__ import annotations

import os
import shutil
import sys


def shown_path(path: str) -> str:
    """`path` relative to the current folder when it is below it."""
    relative = os.path.relpath(path)
    return path if relative.startswith("..") else relative


def program() -> str:
    """How the user ran neatpar, to repeat in hints: `.venv/bin/neatpar` as typed, `neatpar` from
    PATH, or this Python with `-m neatpar` (from a script or a notebook): its name when that name
    on PATH is this Python, else its path (`.venv/bin/python` of an environment not activated)."""
    typed = sys.argv[0]
    if os.path.basename(typed) == "neatpar":
        return typed if os.sep in typed and not shutil.which(os.path.basename(typed)) else "neatpar"
    name = os.path.basename(sys.executable)
    found = shutil.which(name)
    python = name if found and os.path.abspath(found) == os.path.abspath(sys.executable) else shown_path(sys.executable)
    return f"{python} -m neatpar"


def command(name: str) -> str:
    """How to type a program installed with neatpar: its name when it is on PATH, else its path
    beside this Python (e.g. .venv/bin/tensorboard after `make demo`), else what installs it."""
    if shutil.which(name):
        return name
    beside = os.path.join(os.path.dirname(sys.executable), name)
    if os.access(beside, os.X_OK):
        return shown_path(beside)
    return f"pip install {name} && {name}"


def watch_command(run_folder: str) -> str:
    """The command that shows a run in TensorBoard beside the others, as it can be typed here."""
    return f"{command('tensorboard')} --logdir {_logdir(run_folder)}"


def _logdir(run_folder: str) -> str:
    """What to give `tensorboard --logdir` to watch a run beside the others: the folder that holds
    the run folder (runs/), or the run folder itself when that is the current folder."""
    parent = os.path.dirname(run_folder)
    return shown_path(run_folder if os.path.samefile(parent, os.getcwd()) else parent)
