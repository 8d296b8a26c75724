"""What a pool sends to its workers, pickled for them, and the one-line error for what cannot travel.

Tasks and shared objects go through `serialize.dumps_for_worker` (plain pickle when the worker can
load that, by value otherwise). What a worker loads at start (initargs, the initializer, the
preloaded objects) is pickled one part after another by one `WorkerPickler`, so functions sent by
value share their globals on arrival. A failure names where the live handle sits (LiveHandleError)
or which part does not pickle (TransferError).
"""
from __future__ import annotations

import io
from typing import Any, Callable

from ..errors import LiveHandleError, TransferError, one_line
from .handles import find_handle, parts
from .messages import RunTask, Startup
from .serialize import WorkerPickler, dumps, dumps_by_value, dumps_for_worker, travels_by_value
from .workers import SharedRef


def pickle_task(task_id: int, func: Callable, args: tuple, kwds: dict) -> bytes:
    """The RunTask message for `func(*args, **kwds)`, ready to send."""
    payload = dumps_checked((func, args, kwds), f"the arguments of {getattr(func, '__qualname__', func)!r}",
                            named={getattr(func, "__qualname__", "func"): func, "args": args, "kwds": kwds})
    return dumps(RunTask(task_id, payload))


def pickle_startup(initargs: tuple, initializer: Callable | None, preload: dict[str, Any],
                   refs: dict[str, SharedRef]) -> Startup:
    """initargs, the initializer and the preloaded objects pickled one after another by one
    pickler (see messages.Startup). A part that cannot travel is named in the error."""
    sent = {"initargs": initargs, "initializer": initializer, **preload}
    try:
        return _pickle_parts(sent, refs)
    except _InitargsRefused:
        del sent["initargs"]  # shared arrays, pipes: multiprocessing sends them as process arguments
        return _pickle_parts(sent, refs)


class _InitargsRefused(Exception):
    """initargs do not pickle outside multiprocessing's own process start."""


def _pickle_parts(sent: dict[str, Any], refs: dict[str, SharedRef]) -> Startup:
    buffer = io.BytesIO()
    pickler = WorkerPickler(buffer)
    for name, obj in sent.items():
        try:
            pickler.dump(obj)
        except Exception as exc:  # noqa: BLE001 - named and re-raised
            if name == "initargs":
                raise _InitargsRefused() from exc
            raise _transfer_error(exc, name, {name: obj}) from exc
    return Startup(tuple(sent), tuple(refs[name].key if name in refs else None for name in sent), buffer.getvalue())


def dumps_checked(obj: Any, what: str, named: dict | None = None) -> bytes:
    """Pickle for a worker (serialize.dumps_for_worker); if that fails, name the live handle that
    is the likely cause (in the `named` parts of `obj`, or in `obj`)."""
    try:
        return dumps_for_worker(obj)
    except Exception as exc:  # noqa: BLE001 - named and re-raised
        raise _transfer_error(exc, what, named or {"object": obj}) from exc


def _transfer_error(exc: Exception, what: str, named: dict) -> Exception:
    """LiveHandleError naming where the live handle sits, else TransferError naming `what`."""
    for name, part in named.items():
        found = find_handle(part, name, travels_by_value)
        if found is not None:
            return LiveHandleError(f"cannot send {found} to a worker: live handles stay in the process that made "
                                   f"them; create it inside the function that runs in the worker, or pass plain data")
    if isinstance(exc, LiveHandleError):
        return exc
    for name, part in named.items():
        culprit = _unpicklable(part, name)
        if culprit is not None and culprit != name:
            return TransferError(f"cannot send {what} to a worker: {culprit} cannot be pickled "
                                 f"({type(exc).__name__}: {one_line(str(exc))})")
    return TransferError(f"cannot send {what} to a worker: {one_line(str(exc))}")


def _unpicklable(obj: Any, path: str, depth: int = 0) -> str | None:
    """The innermost part of `obj` that does not pickle for a worker, as a readable path; None
    when `obj` pickles."""
    try:
        dumps_by_value(obj)
        return None
    except Exception:  # noqa: BLE001 - looking for the part that fails
        pass
    if depth < 4:
        for child_path, child in parts(obj, path, travels_by_value):
            found = _unpicklable(child, child_path, depth + 1)
            if found is not None:
                return found
    return path
