"""The messages between a pool and its workers, as named records.

    parent -> worker:  Put (install a shared object), Drop, RunTask, Stop
    worker -> parent:  Reached (a start stage), Ready, Items (a generator task's items so far),
                       Done, Failed, LoadFailed (a task that could not be unpickled), Retire
                       (maxtasksperchild reached), StartFailed (before Ready)

Each travels pickled over the worker's pipe (neatpar.parallel.serialize). A task's function and
arguments travel as bytes inside RunTask, so a worker that cannot load them still knows the task.
"""
from __future__ import annotations

import enum
from typing import Any, NamedTuple


class Put(NamedTuple):
    key: int
    pickled: bytes


class Drop(NamedTuple):
    key: int


class RunTask(NamedTuple):
    task_id: int
    payload: bytes       # the pickled (func, args, kwargs)


class Stop(NamedTuple):
    pass


class Ready(NamedTuple):
    pid: int
    unseeded: tuple[str, ...]   # global generators drawn from, unseeded, while the main script was re-imported


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


class LoadFailed(NamedTuple):
    task_id: int
    summary: str         # "ExceptionType: message"
    traceback: str


class Retire(NamedTuple):
    pass


class StartStage(enum.IntEnum):
    """How far a starting worker got, in order; the worker reports each stage as it enters it, so
    the parent knows it even when the worker then dies without a word."""
    SPAWN = 0        # the new interpreter is starting
    IMPORT = 1       # re-importing the main script
    LOAD = 2         # loading what the pool sent (initargs, the initializer, preloaded objects)
    UNGUARDED = 3    # clearing live globals; failing here: the main script created them at import time
    INITIALIZER = 4  # running the user's initializer


class Reached(NamedTuple):
    stage: StartStage
    part: int            # at StartStage.LOAD: the index of the start-up part being loaded, -1 for initargs


class StartFailed(NamedTuple):
    stage: StartStage
    summary: str
    traceback: str


class Startup(NamedTuple):
    """What a worker loads before it is ready (in its process arguments): initargs (unless only
    multiprocessing can send them: then they are process arguments of their own), the initializer
    and the preloaded objects, pickled one after another by one pickler, so functions sent by value
    share their globals on arrival (an initializer can set a global the fitness function reads)."""
    names: tuple[str, ...]          # ["initargs"], "initializer", then each preloaded object's name
    keys: tuple[int | None, ...]    # per name: the shared-object key of a preloaded object, else None
    data: bytes
