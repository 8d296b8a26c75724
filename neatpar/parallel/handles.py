"""Live handles: recognising objects that must never be copied into a worker, and the placeholder
that stands in for them there.

A live handle is an object bound to a resource of the process that made it: an environment's
connection (declared by its adapter, see declarations.py), a socket, a gRPC server or channel, a
multiprocessing connection, an open file, a child process. Copying one into another process (by
fork, or by spawn's re-import of the main module) is the failure this project exists to prevent.
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
from . import declarations
from .declarations import HandleClass

# Handles of the standard library and gRPC, matched by module and class name against an object's
# MRO (so that recognising one never imports gRPC); the layers above declare their own
# (declarations.py).
_BUILT_IN = (
    HandleClass("grpc", "Server", "gRPC server", connecting=True),
    HandleClass("grpc", "Channel", "gRPC channel", connecting=False),
    HandleClass("multiprocessing.connection", "Connection", "multiprocessing connection", connecting=False),
    HandleClass("multiprocessing.pool", "Pool", "multiprocessing pool", connecting=False),
    HandleClass("neatpar.parallel.pool", "Pool", "neatpar pool", connecting=False),
)


def _handle_classes() -> tuple[HandleClass, ...]:
    return _BUILT_IN + declarations.handle_classes()


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
    classes = _handle_classes()
    for cls in type(obj).__mro__:
        module = getattr(cls, "__module__", "") or ""
        for declared in classes:
            if cls.__name__ == declared.name and module.startswith(declared.module):
                return declared.kind
    return None


def is_connecting(kind: str) -> bool:
    """True for handle kinds whose creation launches a program (a simulator) or binds a port."""
    return any(declared.kind == kind and declared.connecting for declared in _handle_classes())


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


def _run_exit_hooks() -> None:
    """Run the declared exit hooks (each, say, closing connections whose threads would otherwise
    keep Python's exit waiting)."""
    for hook in declarations.exit_hooks():
        try:
            hook()
        except Exception:  # noqa: BLE001 - best effort at exit
            pass


def install_exit_hooks() -> None:
    """Register the declared exit hooks with threading's exit hooks (which run before its thread
    joins). Called by the first pool and by whoever opens such a connection; idempotent."""
    import concurrent.futures.thread  # noqa: F401 - registers its thread joins first: ours then run before
    import threading
    register = getattr(threading, "_register_atexit", None)
    if register is not None and not getattr(install_exit_hooks, "done", False):
        register(_run_exit_hooks)
        install_exit_hooks.done = True
