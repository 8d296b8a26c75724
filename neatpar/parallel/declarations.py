"""What the layers above declare to the pool, so that parallel/ names no library of theirs.

An adapter declares the classes of its live handles (cleared in workers, refused by the pickler;
matched by module and class name, so recognising one never imports its library), the classes a
worker refuses to construct while spawn re-imports the main script, and what must run before
Python's exit joins threads. Declarations are plain records in lists of this module: declaring
changes nothing outside neatpar; the pool puts them in effect when it starts.
"""
from __future__ import annotations

from typing import Callable, NamedTuple


class HandleClass(NamedTuple):
    """A class whose instances are live handles."""
    module: str       # the defining module's name, or a prefix of it
    name: str         # the class name
    kind: str         # what to call an instance in messages, e.g. "gRPC server"
    connecting: bool  # creating one launches a program or binds a port


class ImportRefusal(NamedTuple):
    """A class that a pool worker refuses to construct while spawn re-imports the main script
    (checked before any global is found, so before a second connection is even tried)."""
    module: str     # the module defining the class, guarded when a worker imports it
    attribute: str  # the class's name in that module
    message: str    # the error raised in the worker


_handle_classes: list[HandleClass] = []
_import_refusals: list[ImportRefusal] = []
_exit_hooks: list[Callable[[], None]] = []


def declare_handle_class(declared: HandleClass) -> None:
    """Count instances of this class as live handles (idempotent)."""
    if declared not in _handle_classes:
        _handle_classes.append(declared)


def declare_import_refusal(declared: ImportRefusal) -> None:
    """Make pool workers refuse to construct this class during the main re-import (idempotent)."""
    if declared not in _import_refusals:
        _import_refusals.append(declared)


def declare_exit_hook(hook: Callable[[], None]) -> None:
    """Run `hook` (quick, never raising) at exit before Python joins non-daemon threads (idempotent)."""
    if hook not in _exit_hooks:
        _exit_hooks.append(hook)


def handle_classes() -> tuple[HandleClass, ...]:
    return tuple(_handle_classes)


def import_refusals() -> tuple[ImportRefusal, ...]:
    return tuple(_import_refusals)


def exit_hooks() -> tuple[Callable[[], None], ...]:
    return tuple(_exit_hooks)
