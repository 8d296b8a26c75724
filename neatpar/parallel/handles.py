"""Live handles: recognising objects that must never be copied into a worker, and the placeholder
that stands in for them there.

A live handle is an object bound to a resource of the process that made it: a Unity/ML-Agents
environment connection, a socket, a gRPC server or channel, a multiprocessing connection, an open
file, a child process. Copying one into another process (by fork, or by spawn's re-import of the
main module) is the failure this project exists to prevent.
"""
from __future__ import annotations

import dis
import functools
import io
import socket
import subprocess
from types import CodeType, FunctionType, MethodType, ModuleType
from typing import Any, Callable, NamedTuple

from ..errors import ClearedGlobalError

# (module prefix, class name) pairs matched against an object's MRO, so that recognising an
# mlagents or gRPC object never imports mlagents or gRPC.
_HANDLE_CLASSES = {
    ("mlagents_envs.base_env", "BaseEnv"): "ML-Agents environment connection",
    ("mlagents_envs.environment", "UnityEnvironment"): "Unity environment connection",
    ("grpc", "Server"): "gRPC server",
    ("grpc", "Channel"): "gRPC channel",
    ("multiprocessing.connection", "Connection"): "multiprocessing connection",
    ("multiprocessing.pool", "Pool"): "multiprocessing pool",
    ("neatpar.parallel.pool", "Pool"): "neatpar pool",
}
# Handles that launch a simulator or bind a port when created: re-creating one in a worker is the
# failure of an unguarded script, so finding one there is an error, not just something to clear.
_CONNECTING_KINDS = {"ML-Agents environment connection", "Unity environment connection", "gRPC server"}


def handle_kind(obj: Any) -> str | None:
    """Name the kind of live handle `obj` is, or None if it is not one."""
    if isinstance(obj, type) or isinstance(obj, ModuleType):
        return None
    if isinstance(obj, socket.socket):
        return None if obj.fileno() == -1 else "socket"
    if isinstance(obj, subprocess.Popen):
        return "child process"
    if isinstance(obj, io.IOBase):
        return None if obj.closed else "open file"
    for cls in type(obj).__mro__:
        module = getattr(cls, "__module__", "") or ""
        for (prefix, name), kind in _HANDLE_CLASSES.items():
            if cls.__name__ == name and module.startswith(prefix):
                return kind
    return None


def is_connecting(kind: str) -> bool:
    """True for handle kinds whose creation launches a simulator or binds a port."""
    return kind in _CONNECTING_KINDS


def find_live_handles(namespace: dict) -> dict[str, str]:
    """Map each global name in `namespace` that holds a live handle to the handle's kind."""
    found = {}
    for name, value in list(namespace.items()):
        if name.startswith("__"):
            continue
        kind = handle_kind(value)
        if kind is not None:
            found[name] = kind
    return found


class FoundHandle(NamedTuple):
    """A live handle found inside an object: where it sits, and what it is."""
    path: str        # e.g. "args[0]['conn']" or "eval_function's global 'env'"
    kind: str        # e.g. "socket"
    type_name: str   # the handle's class name

    def __str__(self) -> str:
        return f"{self.path} ({self.kind}, {self.type_name})"


def find_handle(obj: Any, path: str, descend: Callable[[FunctionType], bool], depth: int = 0,
                seen: set | None = None) -> FoundHandle | None:
    """Where a live handle sits inside `obj`: in containers and attributes a few levels deep, and,
    in functions that `descend` accepts (those that travel by value), in the globals they use,
    their closure and their defaults. None when there is none."""
    kind = handle_kind(obj)
    if kind is not None:
        return FoundHandle(path, kind, type(obj).__name__)
    seen = set() if seen is None else seen
    if depth > 4 or id(obj) in seen or isinstance(obj, (type, ModuleType, str, bytes, int, float)):
        return None
    seen.add(id(obj))
    for child_path, child in parts(obj, path, descend):
        found = find_handle(child, child_path, descend, depth + 1, seen)
        if found is not None:
            return found
    return None


def parts(obj: Any, path: str, descend: Callable[[FunctionType], bool]) -> list[tuple[str, Any]]:
    """What `obj` holds, with readable paths: items of containers, attributes, and for functions
    that `descend` accepts, the globals they use, their closure variables and defaults."""
    if isinstance(obj, FunctionType):
        if not descend(obj):
            return []
        space = obj.__globals__
        held = [(f"{path}'s global {name!r}", space[name]) for name in used_globals(obj.__code__) if name in space]
        for name, cell in zip(obj.__code__.co_freevars, obj.__closure__ or ()):
            try:
                held.append((f"{path}'s closure variable {name!r}", cell.cell_contents))
            except ValueError:  # an empty cell
                pass
        defaults = list(obj.__defaults__ or ()) + list((obj.__kwdefaults__ or {}).values())
        return held + [(f"{path}'s default {i}", value) for i, value in enumerate(defaults)]
    if isinstance(obj, MethodType):
        return [(f"{path}.__self__", obj.__self__), (path, obj.__func__)]
    if isinstance(obj, functools.partial):
        return [(f"{path}.func", obj.func)] + parts(obj.args, f"{path}.args", descend) + \
            parts(obj.keywords, f"{path}.keywords", descend)
    if isinstance(obj, dict):
        return [(f"{path}[{key!r}]", value) for key, value in obj.items()]
    if isinstance(obj, (list, tuple, set, frozenset)):
        return [(f"{path}[{i}]", value) for i, value in enumerate(obj)]
    attributes = getattr(obj, "__dict__", None)
    return [(f"{path}.{key}", value) for key, value in attributes.items()] if isinstance(attributes, dict) else []


_GLOBAL_OPS = {dis.opmap[name] for name in ("LOAD_GLOBAL", "STORE_GLOBAL", "DELETE_GLOBAL")}


def used_globals(code: CodeType) -> list[str]:
    """The global names a function's code (nested functions' included) reads or writes: what
    a by-value pickle of it carries along."""
    names = dict.fromkeys(i.argval for i in dis.get_instructions(code) if i.opcode in _GLOBAL_OPS)
    for const in code.co_consts:
        if isinstance(const, CodeType):
            names.update(dict.fromkeys(used_globals(const)))
    return list(names)


def close_quietly(obj: Any) -> None:
    """Best-effort close of a worker's own copy of a handle (never raises)."""
    for method in ("close", "stop"):
        fn = getattr(obj, method, None)
        if callable(fn):
            try:
                fn(None) if method == "stop" else fn()
            except Exception:
                pass
            return


class ClearedGlobal:
    """Stands in for a main-module global cleared in a worker; any use raises a clear error."""

    __slots__ = ("_name", "_kind")

    def __init__(self, name: str, kind: str):
        object.__setattr__(self, "_name", name)
        object.__setattr__(self, "_kind", kind)

    def _fail(self, *_args, **_kwargs):
        name = object.__getattribute__(self, "_name")
        kind = object.__getattribute__(self, "_kind")
        raise ClearedGlobalError(
            f"global {name!r} ({kind}) of your main module was cleared in this neatpar worker: it "
            f"belongs to the main process. Pass what the worker needs as an argument (or with "
            f"initializer/initargs), or create it inside the function that runs in the worker."
        )

    def __getattr__(self, _attr):
        self._fail()

    __call__ = __iter__ = __len__ = __getitem__ = __setattr__ = __bool__ = __enter__ = _fail

    def __repr__(self) -> str:
        return f"<cleared global {object.__getattribute__(self, '_name')!r}>"

    def __reduce__(self):
        return (ClearedGlobal, (object.__getattribute__(self, "_name"), object.__getattribute__(self, "_kind")))


def _close_environments_before_thread_shutdown() -> None:
    """Close every open mlagents UnityEnvironment before Python joins its threads at exit.

    mlagents-envs 0.28 closes an environment from an atexit handler, but Python first joins the
    gRPC server's worker threads, one of which waits for the main thread's next reply to the game:
    a script that ends (often by an exception) without env.close() hangs forever at exit. Closing
    first answers the game with "quit" and lets the thread end, as env.close() would.
    """
    import gc
    import sys
    environment = sys.modules.get("mlagents_envs.environment")
    if environment is None:
        return
    for obj in gc.get_objects():
        if isinstance(obj, environment.UnityEnvironment) and getattr(obj, "_loaded", False):
            try:
                obj._close(timeout=5)
            except Exception:  # noqa: BLE001 - best effort at exit
                pass


def install_exit_guard() -> None:
    """Register the guard above with threading's exit hooks (which run before its thread joins)."""
    import concurrent.futures.thread  # noqa: F401 - registers its thread joins first: ours then run before
    import threading
    register = getattr(threading, "_register_atexit", None)
    if register is not None and not getattr(install_exit_guard, "done", False):
        register(_close_environments_before_thread_shutdown)
        install_exit_guard.done = True
