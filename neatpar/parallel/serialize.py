"""Pickling for other processes: by value without changing the sender, and by value (cloudpickle)
whatever a spawn worker could not import by name.

Sending an object to another process must leave the sender's copy exactly as it was. Plain
pickle does not promise that: neat-python 2.0's DefaultGenomeConfig.__getstate__ calls
next() on the config's node-key counter, so every pickle of a config (neat-python's own
ParallelEvaluator pickles it once per genome) makes the sender skip node keys and changes the
course of evolution. neatpar pickles through `dumps`, whose reductions for such classes read
their state without consuming it; the receiver rebuilds the same object.

A spawn worker finds a function or class by name only where it can import it: a spawn worker
re-imports the main script when there is one (not in a notebook, the REPL, `python -c`, or a
script read from stdin), and never finds lambdas or nested functions. `dumps_for_worker` sends
those by value with what they use (cloudpickle); on that path every object is checked, and a
live handle refuses to travel (LiveHandleError).
"""
from __future__ import annotations

import copyreg
import io
import itertools
import os
import pickle
import sys
import types
from multiprocessing import process
from multiprocessing.connection import Connection
from typing import Any

import cloudpickle

from ..errors import LiveHandleError
from .handles import handle_kind

PROTOCOL = pickle.HIGHEST_PROTOCOL


def _peek_count(counter: itertools.count) -> int:
    """The value next(counter) would return, without calling next(): read from its repr, 'count(N)'
    or 'count(N, STEP)' (the same on every Python; its __reduce__ is deprecated from 3.12 and gone
    in 3.14)."""
    return int(repr(counter)[len("count("):-1].split(",")[0])


def _reduce_genome_config(config) -> tuple:
    # The same state neat-python's __getstate__ produces, minus the side effect; its own
    # __setstate__ rebuilds the counter on the receiving side.
    state = config.__dict__.copy()
    indexer = state.get("node_indexer")
    state["_node_indexer_next_value"] = None if indexer is None else _peek_count(indexer)
    state["node_indexer"] = None
    return (copyreg.__newobj__, (type(config),), state)


def _refuse(handle) -> tuple:
    raise LiveHandleError(f"a {handle_kind(handle)} ({type(handle).__name__}) cannot be sent to another process")


def _dispatch_table(base) -> dict:
    table = dict(base)
    table[Connection] = _refuse  # it would pickle as its bare descriptor number, meaningless elsewhere
    try:
        from neat.genome import DefaultGenomeConfig
    except ImportError:  # neat-python absent: nothing to correct
        return table
    table[DefaultGenomeConfig] = _reduce_genome_config
    return table


_DISPATCH = _dispatch_table(copyreg.dispatch_table)
# cloudpickle's reducers, less the one that copies an open file's contents: a file is a live handle.
_BY_VALUE_DISPATCH = {kind: reduce for kind, reduce in _dispatch_table(cloudpickle.Pickler.dispatch_table).items()
                      if not (isinstance(kind, type) and issubclass(kind, io.IOBase))}


def dumps(obj: Any) -> bytes:
    """pickle.dumps(obj) by value, leaving `obj` unchanged (a multiprocessing connection inside is refused)."""
    buffer = io.BytesIO()
    pickler = pickle.Pickler(buffer, PROTOCOL)
    pickler.dispatch_table = _DISPATCH
    pickler.dump(obj)
    return buffer.getvalue()


# ---------------------------------------------------------------- what a spawn worker can import

def main_script_path() -> str | None:
    """The file a spawn worker re-runs as the main script, or None when there is none (a notebook,
    the REPL, `python -c`) or it is not a file (`python - < script.py` names it "<stdin>")."""
    path = getattr(sys.modules.get("__main__"), "__file__", None)
    if path is None:
        return None
    if not os.path.isabs(path) and process.ORIGINAL_DIR is not None:
        path = os.path.join(process.ORIGINAL_DIR, path)
    path = os.path.normpath(path)
    return path if os.path.isfile(path) else None


def spawn_reimports_main() -> bool:
    """Whether a spawn worker re-imports this process's main module, by multiprocessing's rules
    (`python -m pkg` runs pkg.__main__, which it does not re-import)."""
    main = sys.modules.get("__main__")
    name = getattr(getattr(main, "__spec__", None), "name", None)
    if name is not None:
        return not (name == "__main__" or name.endswith(".__main__"))
    path = main_script_path()
    return path is not None and os.path.splitext(os.path.basename(path))[0] != "ipython"


def found_by_name(module: Any, obj: Any) -> bool:
    """Whether `module` has `obj` at its qualified name (lambdas and nested functions never do)."""
    target = module
    for part in getattr(obj, "__qualname__", "<none>").split("."):
        target = getattr(target, part, None)
    return target is obj


def travels_by_value(obj: Any) -> bool:
    """Whether a function or class goes to a spawn worker by value: the worker cannot import it."""
    module = getattr(obj, "__module__", None)
    if module == "__main__":
        return not (spawn_reimports_main() and found_by_name(sys.modules["__main__"], obj))
    return not found_by_name(sys.modules.get(module or ""), obj)


class WorkerPickler(cloudpickle.Pickler):
    """cloudpickle for spawn workers: by value what they cannot import, by name the rest (a
    re-imported main script's top-level functions included, as plain pickle sends them), without
    side effects on the sender; a live handle anywhere inside raises LiveHandleError.

    Several `dump()` calls on one pickler share their memo: functions sent by value together share
    one globals dict on arrival (read them back with one Unpickler, `load()` after `load()`)."""

    dispatch_table = _BY_VALUE_DISPATCH

    def __init__(self, file):
        super().__init__(file, protocol=PROTOCOL)
        self._main_by_name = spawn_reimports_main()

    def reducer_override(self, obj):
        kind = handle_kind(obj)
        if kind is not None:
            raise LiveHandleError(f"a {kind} ({type(obj).__name__}) cannot be sent to another process")
        if (self._main_by_name and isinstance(obj, (types.FunctionType, type))
                and getattr(obj, "__module__", None) == "__main__" and found_by_name(sys.modules["__main__"], obj)):
            return NotImplemented  # pickled by name: the worker's re-imported main script has it
        return super().reducer_override(obj)


def dumps_by_value(obj: Any) -> bytes:
    """Pickle `obj` with WorkerPickler."""
    buffer = io.BytesIO()
    WorkerPickler(buffer).dump(obj)
    return buffer.getvalue()


def dumps_for_worker(obj: Any) -> bytes:
    """Pickle `obj` for a spawn worker: plain `dumps` when the worker can load that (the fast path
    for data), else by value (`dumps_by_value`)."""
    try:
        data = dumps(obj)
    except Exception:  # noqa: BLE001 - a lambda, a nested function, or a live handle: the careful path says which
        return dumps_by_value(obj)
    if b"__main__" in data and not spawn_reimports_main():
        return dumps_by_value(obj)
    return data
