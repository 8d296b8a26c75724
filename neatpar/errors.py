"""Every exception neatpar raises on purpose, in one place: each names what went wrong and how
to fix it, in one line (`one_line` makes another library's text fit). (The simulator builds in
neatpar_sim are a separate program with their own.)"""
from __future__ import annotations

import re
import signal


class NeatparError(Exception):
    """Base class of every error neatpar raises on purpose."""


# ---------------------------------------------------------------- input and settings

class ConfigError(NeatparError, ValueError):
    """A bad option, config key or value."""


class FolderTaken(ConfigError):
    """The run folder asked for holds a run already, or another neatpar run holds it now."""


class EnvironmentMismatch(ConfigError):
    """The environment does not fit the config (behaviors, observation or action widths)."""


class ExportError(ConfigError):
    """A genome cannot be written as the requested model (an unsupported function, a bad layout)."""


class FramesUnavailable(ConfigError):
    """An environment cannot give pictures of its agents (a real Unity game; a Gymnasium environment
    without an rgb_array render mode)."""


# ---------------------------------------------------------------- pool workers

class WorkerStartError(NeatparError, RuntimeError):
    """A pool worker died or raised before it was ready to take tasks."""


class UnguardedScriptError(WorkerStartError):
    """The main script creates live handles at import time, so every spawn worker re-creates them."""


class WorkerDied(NeatparError, RuntimeError):
    """The worker running a task exited (killed, crashed, os._exit) before finishing it.

    `partial` holds the items that arrived; `position` is the index of the item the worker was
    computing when it died (items between the two were computed but lost with the worker), None
    when that is not known; `worker` is the pool slot it ran in.
    """

    def __init__(self, message: str, partial: list | None = None, exitcode: int | None = None,
                 position: int | None = None, worker: int | None = None):
        super().__init__(message)
        self.partial = partial or []
        self.exitcode = exitcode
        self.position = position
        self.worker = worker


class TaskTimeout(WorkerDied, TimeoutError):
    """A task made no progress within its timeout; its worker was killed."""


class PoolProtocolError(NeatparError, RuntimeError):
    """A pool worker sent a message its state does not accept (out of turn, or of another task
    than the one it runs); the pool stops, since it and the worker no longer agree."""


class RemoteError(NeatparError, RuntimeError):
    """An exception raised inside a worker, carrying the worker's traceback text."""

    def __init__(self, message: str, remote_traceback: str = "", partial: list | None = None):
        super().__init__(f"{message}\n\nWorker traceback:\n{remote_traceback}" if remote_traceback else message)
        self.remote_traceback = remote_traceback
        self.partial = partial or []


class ClearedGlobalError(NeatparError, RuntimeError):
    """A worker touched a main-module global that neatpar cleared because it belongs to the parent."""


class LiveHandleError(NeatparError, TypeError):
    """A live handle (simulator connection, socket, ...) was about to be sent to another process."""


class TransferError(NeatparError, TypeError):
    """An object cannot travel to a pool worker: it does not pickle here, or cannot be loaded there."""


# ---------------------------------------------------------------- fitness evaluation

class GenomeEvaluationError(NeatparError, RuntimeError):
    """The fitness function failed for a genome (raised, crashed its worker twice, or timed out)."""


class FitnessError(NeatparError, TypeError):
    """The fitness function returned something that is not a finite number."""


class DescriptorError(NeatparError, ValueError):
    """A genome's behaviour descriptor is missing, of the wrong length or not finite (the search
    needs one of the same width for every genome)."""


# ---------------------------------------------------------------- environments and runs

class SimulatorError(NeatparError, RuntimeError):
    """The simulator could not be started or stopped answering."""


class VideoError(NeatparError, RuntimeError):
    """A video could not be encoded (its encoder failed)."""


class HostLost(NeatparError, RuntimeError):
    """The env host running a part died or stopped reporting progress; the part runs again."""


class StaleStepError(NeatparError, RuntimeError):
    """Shared memory held data of another step than the one being read."""


class FastWireError(NeatparError, ImportError):
    """The fast wire cannot be put in effect; the message says why and what to do."""


class Terminated(BaseException):
    """SIGTERM (or another stop signal but Ctrl+C: SIGHUP, SIGBREAK), turned into an exception so
    that an interrupted run saves its checkpoint; `signum` is the signal."""

    def __init__(self, signum: int = signal.SIGTERM):
        super().__init__(signum)
        self.signum = signum


class Interrupted(KeyboardInterrupt):
    """Ctrl+C in a run: a KeyboardInterrupt that can be watched (run/interrupts.py)."""


_COLOUR = re.compile(r"\x1b\[[0-9;]*m")   # a terminal's colour codes


def one_line(text: str | BaseException, first: bool = False, limit: int | None = None) -> str:
    """Text for a one-line error message: every run of whitespace (newlines included) made one
    space, terminal colour codes removed; an exception without text is named by its type. `first`
    keeps only the first line (Ray's errors carry whole tracebacks); `limit` cuts the line."""
    raw = _COLOUR.sub("", str(text)).strip()
    if first:
        raw = raw.splitlines()[0] if raw else ""
    line = " ".join(raw.split())
    if not line and isinstance(text, BaseException):
        line = type(text).__name__
    return line if limit is None else line[:limit]
