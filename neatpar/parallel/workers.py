"""The worker side of neatpar's spawn-context pool: start-up, globals clearing and the task loop.

A spawn worker is a fresh interpreter that re-imports the user's main module before it runs any of
our code. To report a failure of that re-import (the classic unguarded script), the worker's
channel travels in multiprocessing's *preparation data*, which the child unpickles before it
imports the main module: unpickling it arms an excepthook that sends the error to the parent.
The preparation data gets that entry through a wrapper around multiprocessing's
`spawn.get_preparation_data`, installed when the first pool starts (`install_start_hook`), and
before it an entry that gives the child the parent's sys.path (`_ParentPath`), so that the guard
imports the parent's neatpar.

A starting worker reports each stage as it enters it (messages.Reached), so the parent can name
the stage even of a worker that died without a word: it re-imports the main script, loads what
the pool sent (initargs, the initializer, preloaded objects), clears live globals, runs the
initializer and reports Ready.
"""
from __future__ import annotations

import importlib
import io
import multiprocessing
import operator
import os
import pickle
import signal
import sys
import threading
import time
import traceback
import types
from multiprocessing import spawn
from typing import Any, Callable, NamedTuple

from .. import processes
from . import declarations, module_state
from .declarations import ImportRefusal
from .handles import ClearedGlobal, close_quietly, find_live_handles, is_connecting
from .messages import (Done, Drop, Failed, Items, LoadFailed, Put, Reached, Ready, Retire, RunTask, StartFailed,
                       StartStage, Startup, Stop)
from .serialize import dumps_for_worker, main_script_path

# ---------------------------------------------------------------- early arming (child side)

_channel = None  # this worker's connection to the parent, set by _arm()
_stage = StartStage.SPAWN
_generators: module_state.Snapshot | None = None  # the global generators before the main re-import

_importing_main = False  # True from _arm() until worker_main() starts


class _RefusalGuard:
    """An import hook: when a module with declared import refusals (declarations.py) is imported
    during the main re-import, its classes refuse to be constructed there. (Left alone, a
    module-level connection would connect a second time, say on the parent's port.)"""

    def __init__(self, refusals: tuple[ImportRefusal, ...]):
        self.refusals = refusals

    def find_spec(self, name, path=None, target=None):
        refusals = [refusal for refusal in self.refusals if refusal.module == name]
        if not refusals:
            return None
        self.refusals = tuple(refusal for refusal in self.refusals if refusal.module != name)
        if not self.refusals:
            sys.meta_path.remove(self)
        import importlib.util
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.loader is not None and hasattr(spec.loader, "exec_module"):
            load = spec.loader.exec_module

            def exec_module(module):
                load(module)
                for refusal in refusals:
                    _guard(getattr(module, refusal.attribute), refusal.message)
            spec.loader.exec_module = exec_module
        return spec


def _guard(cls, message: str) -> None:
    original = cls.__init__

    def __init__(self, *args, **kwargs):
        if _importing_main:
            raise RuntimeError(message)
        original(self, *args, **kwargs)

    cls.__init__ = __init__


def _arm(conn) -> None:
    """Runs in the child while it unpickles its preparation data, before the main re-import."""
    global _channel, _importing_main, _generators
    _channel = conn
    reach(StartStage.IMPORT)
    _importing_main = True
    _generators = module_state.snapshot()
    refusals = declarations.import_refusals()
    if refusals:
        sys.meta_path.insert(0, _RefusalGuard(refusals))
    for signum in processes.console_signals():   # Ctrl+C (Ctrl+Break) is the parent's to handle
        signal.signal(signum, signal.SIG_IGN)
    previous = sys.excepthook

    def report_start_failure(exc_type, exc, tb):
        text = "".join(traceback.format_exception(exc_type, exc, tb))
        what = "initargs: " if _stage is StartStage.LOAD else ""  # the only user object in the process arguments
        try:
            send(StartFailed(_stage, f"{what}{exc_type.__name__}: {exc}", text))
        except Exception:
            pass
        previous(exc_type, exc, tb)

    sys.excepthook = report_start_failure


def reach(stage: StartStage, part: int = -1) -> None:
    """Tell the parent how far this starting worker got."""
    global _stage
    _stage = stage
    try:
        send(Reached(stage, part))
    except Exception:  # noqa: BLE001 - the parent is gone: the worker exits soon enough
        pass


class _StartGuard:
    """Carried in the preparation data; unpickling it in the child calls _arm(conn). (It carries
    nothing backed by shared memory: a second copy of such a descriptor among the user's initargs
    would make the start fail.)"""

    def __init__(self, conn):
        self.conn = conn

    def __reduce__(self):
        return (_arm, (self.conn,))


class _SysModule:
    """Unpickles as the `sys` module, through importlib alone."""

    def __reduce__(self):
        return (importlib.import_module, ("sys",))


class _SysPath:
    """Unpickles as the list `sys.path` itself (not a copy)."""

    def __reduce__(self):
        return (getattr, (_SysModule(), "path"))


class _ParentPath:
    """Carried in the preparation data before the start guard: unpickling it in the child sets its
    sys.path to the parent's, through standard library callables alone.

    A spawn child starts as `python -c ...`, with the working folder first on sys.path, and gets
    the parent's sys.path from spawn.prepare() only after unpickling all the preparation data. The
    guard would import neatpar before that: from a checkout of neatpar's repository as the working
    folder, its sources (no C extensions built) instead of the parent's installed neatpar."""

    def __init__(self, path: list[str]):
        self.path = list(path)

    def __reduce__(self):
        return (operator.setitem, (_SysPath(), slice(None), self.path))


class LoadMark:
    """The first of a worker's process arguments: unpickled after the main re-import and before
    the user's initargs, it records that the worker is now loading what the pool sent."""

    def __reduce__(self):
        return (reach, (StartStage.LOAD,))


_pending = threading.local()
_original_preparation_data = None  # multiprocessing's own, once the hook is installed


def _preparation_data(name):
    data = _original_preparation_data(name)
    guard = getattr(_pending, "guard", None)
    if guard is not None:  # spawn.prepare() ignores keys it does not know; the child unpickles them in order
        data["neatpar_sys_path"] = _ParentPath(data.get("sys_path", sys.path))
        data["neatpar_start_guard"] = guard
        if "init_main_from_path" in data and main_script_path() is None:
            del data["init_main_from_path"]  # `python - < script.py`: "<stdin>" is no file to re-run
    return data


def install_start_hook() -> None:
    """Let spawned processes carry a start guard in their preparation data (see the module
    docstring). Installed by the first pool, not on import; idempotent."""
    global _original_preparation_data
    if _original_preparation_data is None:
        _original_preparation_data = spawn.get_preparation_data
        spawn.get_preparation_data = _preparation_data


def start_process(ctx, child_conn, target: Callable, args: tuple, name: str) -> multiprocessing.Process:
    """Start a spawn process whose channel is armed before it re-imports the main module."""
    install_start_hook()
    process = ctx.Process(target=target, args=args, name=name, daemon=True)
    _pending.guard = _StartGuard(child_conn)
    try:
        process.start()
    finally:
        _pending.guard = None
    return process


# ---------------------------------------------------------------- messages

def send(message: tuple) -> None:
    """Send one message to the parent."""
    _channel.send_bytes(dumps_for_worker(message))


_on_parent_exit: list[Callable[[], None]] = []


def on_parent_exit(callback: Callable[[], None]) -> None:
    """Run `callback` (quick, e.g. kill a process this worker started) if the parent dies first."""
    _on_parent_exit.append(callback)


def _watch_parent() -> None:
    """Exit as soon as the parent process is gone, even in the middle of a task."""
    parent = multiprocessing.parent_process()
    if parent is None:
        return

    def watch():
        parent.join()
        for callback in _on_parent_exit:
            try:
                callback()
            except Exception:  # noqa: BLE001 - exiting regardless
                pass
        os._exit(1)

    threading.Thread(target=watch, name="neatpar-parent-watch", daemon=True).start()


# ---------------------------------------------------------------- start-up in the worker

def _main_namespaces() -> list[dict]:
    """The main module's globals as the worker's functions see them.

    spawn re-runs the script with runpy.run_path, which executes it in a temporary namespace and
    copies the result into `__mp_main__`: functions defined there keep the temporary dict as their
    `__globals__`. Both must be cleared.
    """
    module = sys.modules.get("__mp_main__") or sys.modules.get("__main__")
    if module is None:
        return []
    spaces = {id(vars(module)): vars(module)}
    for value in list(vars(module).values()):
        space = getattr(value, "__globals__", None)
        if isinstance(space, dict) and space.get("__name__") == module.__name__:
            spaces.setdefault(id(space), space)
    return list(spaces.values())


def _by_value_namespaces(objects) -> list[dict]:
    """The globals of main-module functions that arrived by value: the globals they use, copied
    from the parent's main module (functions sent together share one such dict)."""
    main = vars(sys.modules["__main__"]) if "__main__" in sys.modules else None
    spaces = {}
    for obj in objects:
        space = getattr(obj, "__globals__", None)
        if isinstance(space, dict) and space.get("__name__") == "__main__" and space is not main:
            spaces.setdefault(id(space), space)
    return list(spaces.values())


def clear_globals(names: tuple[str, ...], loaded: tuple = ()) -> list[tuple[str, str]]:
    """Replace live handles and the named globals of the main module by placeholders, and the
    named ones among the globals of functions that arrived by value (`loaded`).

    Returns the (name, kind) pairs of handles whose creation connects somewhere (a simulator, a
    bound port): such a handle exists here only because spawn re-ran the script's top level.
    """
    connecting: dict[str, str] = {}
    spaces = [(namespace, find_live_handles(namespace)) for namespace in _main_namespaces()]
    spaces += [(namespace, {}) for namespace in _by_value_namespaces(loaded)]
    for namespace, live in spaces:  # found everywhere first: closing one hides it from the others
        for name, kind in live.items():
            close_quietly(namespace[name])
            namespace[name] = ClearedGlobal(name, kind)
            if is_connecting(kind):
                connecting[name] = kind
        for name in names:
            if name in namespace and not isinstance(namespace[name], ClearedGlobal):
                namespace[name] = ClearedGlobal(name, "cleared by request")
    return list(connecting.items())


def _unguarded_message(connecting: list[tuple[str, str]]) -> str:
    listed = ", ".join(f"{name!r} ({kind})" for name, kind in connecting)
    return (
        f"your main script creates {listed} at import time, so every spawn worker re-creates it: "
        f"create it under `if __name__ == \"__main__\":` or lazily inside a function"
    )


def worker_main(mark: None, initargs: tuple, startup: Startup, clear_names: tuple[str, ...],
                max_units: int | None, progress, index: int) -> None:
    """Process target of every pool worker: load what the pool sent, clear globals, run the
    initializer, serve tasks. (`mark` is what LoadMark left: it only reported the stage.)"""
    global _importing_main, _cell
    _importing_main = False
    unseeded = module_state.unseeded_draws(_generators) if _generators is not None else ()
    _cell = ProgressCell(progress, index)
    _watch_parent()
    loaded = _load_startup(startup)
    if loaded is None:
        return
    initializer, initargs = loaded.pop("initializer"), loaded.pop("initargs", initargs)
    preloaded = {key: loaded[name] for name, key in zip(startup.names, startup.keys) if key is not None}
    reach(StartStage.UNGUARDED)
    connecting = clear_globals(clear_names, (initializer, *preloaded.values()))
    if connecting:
        send(StartFailed(StartStage.UNGUARDED, _unguarded_message(connecting), ""))
        return
    if initializer is not None:
        reach(StartStage.INITIALIZER)
        try:
            initializer(*initargs)
        except BaseException as exc:  # noqa: BLE001 - reported to the parent, then exit
            traceback.print_exc()
            send(StartFailed(StartStage.INITIALIZER, f"{type(exc).__name__}: {exc}", traceback.format_exc()))
            return
    send(Ready(os.getpid(), unseeded))
    _serve(max_units, _cell, preloaded)


def _load_startup(startup: Startup) -> dict[str, Any] | None:
    """Unpickle the start-up parts in order, by name; None (after telling the parent which one
    failed) when one cannot be loaded here. Each part is announced first, so a death names it too."""
    unpickler = pickle.Unpickler(io.BytesIO(startup.data))
    loaded = {}
    for part, name in enumerate(startup.names):
        reach(StartStage.LOAD, part)
        try:
            loaded[name] = unpickler.load()
        except Exception as exc:  # noqa: BLE001 - reported to the parent, then exit
            send(StartFailed(StartStage.LOAD, f"{name}: {type(exc).__name__}: {exc}", traceback.format_exc()))
            return None
    return loaded


# ---------------------------------------------------------------- the task loop

class SharedRef:
    """A reference to an object installed once in each worker (see Pool.share)."""

    __slots__ = ("key",)

    def __init__(self, key: int):
        self.key = key

    def __reduce__(self):
        return (SharedRef, (self.key,))

    def __repr__(self) -> str:
        return f"SharedRef({self.key})"


class _Pickled(NamedTuple):
    """A shared object as it arrived, unpickled by the first task that uses it."""
    data: bytes


def _resolve(args: tuple, cache: dict) -> tuple:
    """The task's arguments with shared references replaced by their objects (loaded on first use)."""
    resolved = []
    for arg in args:
        if isinstance(arg, SharedRef):
            if isinstance(cache[arg.key], _Pickled):
                cache[arg.key] = pickle.loads(cache[arg.key].data)
            arg = cache[arg.key]
        resolved.append(arg)
    return tuple(resolved)


LOADING = -1  # the item index of a task whose function and arguments are being unpickled


class ProgressCell:
    """This worker's (task id, item index) cell in the pool's shared progress array.

    The parent reads it to learn which item a worker was computing when it died or hung, so
    items can travel in batches without losing track of the culprit.
    """

    def __init__(self, array, slot: int):
        self.array, self.base = array, 2 * slot
        self.slot, self.index = slot, 0

    def loading(self, task_id: int) -> None:
        """The worker is unpickling this task's function and arguments."""
        self.at(task_id, LOADING)

    def at(self, task_id: int, index: int) -> None:
        self.index = index
        self.array[self.base] = task_id
        self.array[self.base + 1] = index

    def beat(self) -> None:
        """Progress without an item: moves the item index on (for tasks that yield no items)."""
        self.index += 1
        self.array[self.base + 1] = self.index


_cell: ProgressCell | None = None


def slot() -> int:
    """This worker's slot in its pool (0..processes-1; a replacement keeps the slot)."""
    if _cell is None:
        raise RuntimeError("neatpar.parallel.workers.slot() is only available in a pool worker")
    return _cell.slot


def heartbeat() -> None:
    """Tell the pool that the running task is making progress (resets its timeout)."""
    if _cell is not None:
        _cell.beat()


BATCH_SECONDS = 0.005  # items computed within this window travel in one message


def _run_task(task_id: int, func: Callable, args: tuple, kwargs: dict, progress: ProgressCell) -> int:
    """Run one task, streaming generator items in batches; return how many work units it did."""
    progress.at(task_id, 0)
    result = func(*args, **kwargs)
    if not isinstance(result, types.GeneratorType):
        send(Done(task_id, result, []))
        return 1
    batch, units, last_sent = [], 0, time.monotonic()
    while True:
        try:
            item = next(result)
        except StopIteration as stop:
            send(Done(task_id, stop.value, batch))
            return max(units, 1)
        except BaseException:
            if batch:  # the items gathered so far go first: the failure belongs to the next one
                send(Items(task_id, batch))
            raise
        batch.append(item)
        units += 1
        progress.at(task_id, units)
        now = time.monotonic()
        if now - last_sent >= BATCH_SECONDS:
            send(Items(task_id, batch))
            batch, last_sent = [], now


def _serve(max_units: int | None, progress: ProgressCell, cache: dict[int, Any]) -> None:
    units = 0
    while True:
        try:
            message = pickle.loads(_channel.recv_bytes())
        except EOFError:
            return
        if isinstance(message, Stop):
            return
        if isinstance(message, Put):
            cache[message.key] = _Pickled(message.pickled)
        elif isinstance(message, Drop):
            cache.pop(message.key, None)
        elif isinstance(message, RunTask):
            progress.loading(message.task_id)
            try:
                func, args, kwargs = pickle.loads(message.payload)
                args = _resolve(args, cache)
            except Exception as exc:  # noqa: BLE001 - the task cannot run here: the parent says why
                send(LoadFailed(message.task_id, f"{type(exc).__name__}: {exc}", traceback.format_exc()))
                continue
            try:
                units += _run_task(message.task_id, func, args, kwargs, progress)
            except BaseException as exc:  # noqa: BLE001 - every failure goes back to the parent
                _send_error(message.task_id, exc)
            if max_units is not None and units >= max_units:
                send(Retire())
                return


def _send_error(task_id: int, exc: BaseException) -> None:
    tb = traceback.format_exc()
    try:
        payload = dumps_for_worker(exc)
        pickle.loads(payload)
    except Exception:
        payload = None
    send(Failed(task_id, f"{type(exc).__name__}: {exc}", tb, payload))
