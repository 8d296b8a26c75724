"""Ctrl+C, SIGTERM and a closed terminal (SIGHUP; Windows' SIGBREAK: Ctrl+Break, or the console
closing) during a run (`neatpar evolve`, neatpar.evolve() in a script, or a notebook's kernel
interrupt): one state machine in the main thread.

    RUNNING --signal--> STOPPING --seen()--> SAVING --release()--> RELEASED
                         |      ^
                         +------+  the exception died unseen: the watcher thread sends the
                                   signal again

RUNNING:  a signal raises Interrupted (a KeyboardInterrupt; Ctrl+C) or Terminated (any other stop
          signal) where the main thread is.
STOPPING: the exception is on its way to the run's except block. C code that clears every error
          it meets (numpy's look-up of __array_ufunc__ on an operand's type does: numpy gh-14801)
          can swallow it; the exception is then freed unseen, a weak reference notices, and the
          watcher thread sends the signal again, so that it is raised again somewhere else.
SAVING:   the run's except block has it (`seen`): the checkpoint is being written; a second
          signal waits for the write to end.
RELEASED: a second signal kills what the run started and ends the process at once (130 / 129 /
          143, processes.exit_status); in a run started from Python (`exit_on_second` False: a
          notebook's kernel must live on) it raises its exception again instead.

A run started from another thread than the main one installs no handlers: Python delivers
signals to the main thread only.

A closed terminal's SIGHUP first sends what the run still prints to the null device
(processes.quiet_hung_up_terminal): a write to that terminal would fail before the checkpoint.

`held()` holds signals back for a block and raises the first one after it: C extensions (numpy's,
gRPC's, protobuf's) turn a KeyboardInterrupt raised inside their initialization into an
ImportError, lose it, or crash.
"""
from __future__ import annotations

import contextlib
import enum
import os
import signal
import threading
import weakref
from typing import Callable, Iterator

from .. import processes
from ..errors import Interrupted, Terminated

SIGNALS = processes.stop_signals()


def exit_status(stop: BaseException) -> int:
    """The exit status of a command a stop signal ended: `stop` is its exception (a
    KeyboardInterrupt for Ctrl+C, or Terminated)."""
    return processes.exit_status(stop.signum if isinstance(stop, Terminated) else signal.SIGINT)


class State(enum.Enum):
    RUNNING = "running"
    STOPPING = "stopping"
    SAVING = "saving"
    RELEASED = "released"
    CLOSED = "closed"


class Interrupts:
    """The run's handlers of the stop signals (processes.stop_signals), installed by `with
    Interrupts():` in the main thread; the handlers found are put back on exit. `exit_on_second`:
    a second signal after the checkpoint ends the process (the command), else raises again."""

    def __init__(self, exit_on_second: bool = True):
        self.exit_on_second = exit_on_second
        self.state = State.RUNNING
        self._previous: dict = {}
        self._held: list[int] | None = None   # the signals held back by `held`, while it holds
        self._pending: int | None = None      # a second signal, waiting for the checkpoint
        self._kill: Callable[[], None] | None = None
        self._raised = None                   # a weak reference to the exception on its way up
        self._lost: int | None = None         # the signal whose exception died unseen
        self._wake = threading.Event()
        self._watcher = threading.Thread(target=self._watch, name="neatpar-interrupts", daemon=True)
        self._main = threading.main_thread().ident

    def __enter__(self) -> Interrupts:
        if threading.get_ident() == self._main:
            self._previous = {sig: signal.signal(sig, self._on_signal) for sig in SIGNALS}
            self._watcher.start()
        return self

    def __exit__(self, *exc) -> None:
        self.state = State.CLOSED
        for sig, previous in self._previous.items():
            signal.signal(sig, previous)
        self._wake.set()
        if self._watcher.is_alive():
            self._watcher.join()

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        """Signals noted, not raised, for the block; the first one raised after it."""
        self._held = []
        try:
            yield
        finally:
            held, self._held = self._held, None
        if held:
            raise self._exception(held[0])

    def seen(self, kill: Callable[[], None]) -> None:
        """The run's except block has the exception: a second signal now waits for `release`,
        then calls `kill` and ends the process."""
        self.state, self._kill = State.SAVING, kill

    def release(self) -> None:
        """The checkpoint is written: a second signal (one that came already, or a later one) ends
        the process at once."""
        self.state = State.RELEASED
        if self._pending is not None:
            self._quit(self._pending)

    # ------------------------------------------------------------ in the main thread

    def _on_signal(self, signum: int, frame) -> None:
        if processes.is_hangup(signum):
            processes.quiet_hung_up_terminal()
        if self._held is not None:
            self._held.append(signum)
        elif self.state in (State.RUNNING, State.STOPPING):
            raise self._exception(signum)
        elif self.state is State.SAVING:
            self._pending = signum
        elif self.state is State.RELEASED:
            self._quit(signum)

    def _exception(self, signum: int) -> BaseException:
        """The signal's exception, watched: when it is freed before the run has seen it, it was lost."""
        self.state = State.STOPPING
        stop = Interrupted() if signum == signal.SIGINT else Terminated(signum)
        self._raised = weakref.ref(stop, lambda ref: self._on_freed(ref, signum))
        return stop

    def _on_freed(self, ref, signum: int) -> None:
        if self.state is State.STOPPING and ref is self._raised:
            self._lost = signum
            self._wake.set()

    def _quit(self, signum: int) -> None:
        if self._kill is not None:
            self._kill()
        if not self.exit_on_second:
            self._pending = None
            raise Interrupted() if signum == signal.SIGINT else Terminated(signum)
        os._exit(processes.exit_status(signum))

    # ------------------------------------------------------------ in the watcher thread

    def _watch(self) -> None:
        """Sends a lost signal again, to the main thread, until the run sees one."""
        while True:
            self._wake.wait()
            self._wake.clear()
            if self.state is State.CLOSED:
                return
            lost, self._lost = self._lost, None
            if lost is not None and self.state is State.STOPPING:
                processes.signal_thread(self._main, lost)
