"""The messages between a pool and its workers, as named records.

    parent -> worker:  Put (install a shared object), Drop, RunTask, Stop
    worker -> parent:  Ready, Items (a generator task's items so far), Done, Failed,
                       Retire (maxtasksperchild reached), StartFailed (before Ready)

Each travels pickled by value over the worker's pipe (neatpar.parallel.serialize).
"""
from __future__ import annotations

import enum
from typing import Any, Callable, NamedTuple


class Put(NamedTuple):
    key: int
    pickled: bytes


class Drop(NamedTuple):
    key: int


class RunTask(NamedTuple):
    task_id: int
    func: Callable
    args: tuple
    kwargs: dict


class Stop(NamedTuple):
    pass


class Ready(NamedTuple):
    pid: int


class Items(NamedTuple):
    task_id: int
    items: list


class Done(NamedTuple):
    task_id: int
    value: Any
    items: list          # the generator's last items, not sent before


class Failed(NamedTuple):
    task_id: int
    summary: str         # "ExceptionType: message"
    traceback: str
    pickled_error: bytes | None   # the exception itself, when it pickles


class Retire(NamedTuple):
    pass


class StartStage(enum.Enum):
    """Where a worker failed before it was ready."""
    UNGUARDED = "unguarded"      # the main script created live handles at import time
    INITIALIZER = "initializer"  # the user's initializer raised
    IMPORT = "import"            # the re-import of the main script raised


class StartFailed(NamedTuple):
    stage: StartStage
    summary: str
    traceback: str
