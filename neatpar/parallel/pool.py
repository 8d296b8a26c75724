"""A spawn-context process pool with `apply_async`, driven by an explicit state machine: one
table (TRANSITIONS, worker_states.py) says which messages a worker may send in each of its states
and where each leads; every message is checked against it, and every change of a worker's state
goes through it.

Unlike multiprocessing.Pool it knows which task each worker runs, so it can tell a task whose
worker died (SIGKILL, segfault, os._exit) or hung apart from the others, replace only that
worker, and report the loss to the caller instead of waiting forever. Workers are always started
with the spawn method, their main-module globals that hold live handles are cleared, and a worker
that cannot start ends in a clear error rather than a respawn loop.

Everything is driven from the calling thread: results arrive while the caller waits in
`AsyncResult.get()` or `Pool.wait()`.
"""
from __future__ import annotations

import itertools
import multiprocessing
import os
import pickle
import sys
import time
import warnings
from collections import deque
from multiprocessing import connection
from typing import Any, Callable, Iterable, Mapping

from ..errors import LiveHandleError, PoolProtocolError, RemoteError, TaskTimeout, WorkerDied, WorkerStartError
from . import module_state, worker_errors, workers
from .handles import install_exit_hooks
from .async_result import AsyncResult
from .messages import Done, Drop, Failed, Items, LoadFailed, Put, Reached, Ready, Retire, StartFailed, Stop
from .serialize import dumps
from .transfer import dumps_checked, pickle_startup, pickle_task
from .worker_states import Dispatched, Ended, PoolTask, PoolWorker, WorkerState, check_turn, step
from .workers import LOADING, LoadMark, SharedRef


class Pool:
    """A pool of spawn workers. `apply_async(func, args, worker=None, timeout=None)`.

    - `worker=i` pins a task to worker slot i (its installed state, e.g. networks, lives there).
    - `timeout` bounds the time between progress messages of a task; past it the worker is killed
      and the task fails with TaskTimeout.
    - A generator function streams its items (`AsyncResult.partial`); a task whose worker died
      fails with WorkerDied carrying the items that arrived.
    - `share(obj)` pickles `obj` once and installs it in each worker before its first task that
      passes the returned reference as an argument.
    - `preload={"name": obj}` installs objects in every worker before it is ready (so one that
      cannot be loaded there is a start failure); `preloaded["name"]` is its reference.

    Functions (tasks, the initializer, preloaded ones) that a spawn worker cannot import (defined
    in a notebook, the REPL, `python -c` or stdin; lambdas, closures) travel by value with what
    they use; a live handle among that is refused. `initargs` travel as multiprocessing sends
    process arguments (shared arrays and pipes included).
    """

    def __init__(self, processes: int, initializer: Callable | None = None, initargs: tuple = (),
                 maxtasksperchild: int | None = None, *, clear_globals: Iterable[str] = (),
                 start_timeout: float = 120.0, preload: Mapping[str, Any] | None = None):
        if not isinstance(processes, int) or processes < 1:
            raise ValueError(f"processes must be a positive int, got {processes!r}")
        if maxtasksperchild is not None and (not isinstance(maxtasksperchild, int) or maxtasksperchild < 1):
            raise ValueError(f"maxtasksperchild must be a positive int or None, got {maxtasksperchild!r}")
        if initializer is not None and not callable(initializer):
            raise TypeError(f"initializer must be callable or None, got {initializer!r}")
        install_exit_hooks()
        self._ctx = multiprocessing.get_context("spawn")
        self._ids = itertools.count()
        self.preloaded = {name: SharedRef(next(self._ids)) for name in (preload or {})}
        self._initializer = initializer
        startup = pickle_startup(tuple(initargs), initializer, dict(preload or {}), self.preloaded)
        self._startup_names = startup.names
        initargs = () if "initargs" in startup.names else tuple(initargs)  # else multiprocessing sends them
        self._worker_args = (initargs, startup, tuple(clear_globals), maxtasksperchild)
        self._progress = self._ctx.RawArray("q", 2 * processes)  # per slot: task id, item index
        self._start_timeout = start_timeout
        self._queue: deque[PoolTask] = deque()
        self._shared: dict[int, bytes] = {}
        self._workers: list[PoolWorker] = []
        # What the pool waits on, each worker's channel and process handle, and what each is of:
        # multiprocessing's own wait, which waits on pipes and processes on every platform (a
        # selector waits only on sockets on Windows).
        self._waitables: dict[Any, tuple[str, PoolWorker]] = {}
        self._closed = False
        self._warned = False
        self.started = 0  # worker processes started over the pool's life (replacements included)
        try:
            self._workers = [self._start_worker(i) for i in range(processes)]
            self._wait_started()
        except BaseException:
            self.terminate()
            raise

    # ------------------------------------------------------------ public API

    @property
    def processes(self) -> int:
        return len(self._workers)

    @property
    def pids(self) -> list[int]:
        """PIDs of the live worker processes."""
        return [w.process.pid for w in self._workers if w.state is not WorkerState.GONE]

    def apply_async(self, func: Callable, args: tuple = (), kwds: dict | None = None, *,
                    worker: int | None = None, timeout: float | None = None) -> AsyncResult:
        """Queue `func(*args, **kwds)`; returns at once with an AsyncResult."""
        self._check_open()
        if worker is not None and not 0 <= worker < len(self._workers):
            raise ValueError(f"worker must be in [0, {len(self._workers)}), got {worker}")
        task_id = next(self._ids)
        payload = pickle_task(task_id, func, tuple(args), dict(kwds or {}))
        refs = [a.key for a in args if isinstance(a, SharedRef)]
        preloaded = {ref.key for ref in self.preloaded.values()}
        missing = [k for k in refs if k not in self._shared and k not in preloaded]
        if missing:
            raise ValueError(f"shared references {missing} were unshared or belong to another pool")
        result = AsyncResult(self, task_id)
        refs = [k for k in refs if k not in preloaded]  # every worker has those from its start
        self._queue.append(PoolTask(task_id, payload, refs, worker, timeout, result))
        self._dispatch()
        return result

    def share(self, obj: Any, *, pickled: bytes | None = None) -> SharedRef:
        """Pickle `obj` once (by value; or pass its `pickled` bytes); each worker receives it at
        most once, before its first task that uses the returned reference."""
        self._check_open()
        key = next(self._ids)
        self._shared[key] = pickled if pickled is not None else dumps_checked(obj, "shared object")
        return SharedRef(key)

    def unshare(self, ref: SharedRef) -> None:
        """Forget a shared object here and in the workers that hold it."""
        if ref in self.preloaded.values():
            raise ValueError(f"{ref} was preloaded: every worker loads it at start")
        self._shared.pop(ref.key, None)
        for w in self._workers:
            if ref.key in w.refs and w.state is not WorkerState.GONE:
                w.refs.discard(ref.key)
                self._send(w, Drop(ref.key))

    def wait(self, results: Iterable[AsyncResult], timeout: float | None = None,
             return_when_any: bool = False) -> list[AsyncResult]:
        """Drive the pool until all (or any) of `results` are ready or `timeout` passes."""
        results = list(results)
        deadline = None if timeout is None else time.monotonic() + timeout
        try:
            while True:
                done = [r for r in results if r.ready()]
                if (return_when_any and done) or len(done) == len(results):
                    return done
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    return done
                self._pump(remaining)
        except BaseException:
            self.terminate()
            raise

    def close(self) -> None:
        """Let the workers finish their current task, then stop them."""
        if self._closed:
            return
        self._closed = True
        for w in self._workers:
            if w.state is not WorkerState.GONE:
                self._send(w, Stop())  # read after the task the worker is running, if any
        self.join(timeout=5.0)

    def terminate(self) -> None:
        """Stop every worker now (terminate, then kill: SIGTERM and SIGKILL, or TerminateProcess on
        Windows), by the processes this pool started."""
        self._closed = True
        for w in self._workers:
            if w.process.is_alive():
                w.process.terminate()
        self.join(timeout=2.0)

    def join(self, timeout: float | None = None) -> None:
        """Wait for the workers to exit; kill those still running after `timeout`."""
        deadline = None if timeout is None else time.monotonic() + timeout
        for w in self._workers:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            w.process.join(left)
            if w.process.is_alive():
                w.process.kill()
                w.process.join()
            self._stopped_running(w)
            self._forget(w)
        for task in self._queue:
            task.result._finish(error=WorkerDied("the pool was stopped before the task ran", position=0))
        self._queue.clear()

    def _stopped_running(self, w: PoolWorker) -> None:
        """The task `w` ran when the pool stopped it: its result if it finished before the worker
        exited, else WorkerDied; never left waiting for a worker that is gone."""
        if w.task is None or w.state is WorkerState.GONE:
            return
        task = w.task
        try:
            self._drain(w)
        except PoolProtocolError as error:   # the pool is stopping: the task ends with the error
            task.result._finish(error=error)
        task = w.task
        if task is not None and not task.result.ready():
            task.result._finish(error=WorkerDied(f"the pool was stopped while worker {w.index} ran task {task.id}",
                                                 list(task.result.partial), w.process.exitcode,
                                                 self._position(w, task), w.index))

    def __enter__(self) -> "Pool":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        self.terminate() if exc_type is not None else self.close()

    def __del__(self) -> None:
        if getattr(self, "_workers", None) and not self._closed:
            self.terminate()

    def __reduce__(self):
        raise LiveHandleError("a neatpar Pool cannot be sent to another process: it owns live worker processes")

    # ------------------------------------------------------------ workers

    def _start_worker(self, index: int) -> PoolWorker:
        parent_conn, child_conn = self._ctx.Pipe(duplex=True)
        self._progress[2 * index] = -1
        process = workers.start_process(self._ctx, child_conn, workers.worker_main,
                                        (LoadMark(),) + self._worker_args + (self._progress, index),
                                        name=f"neatpar-worker-{index}")
        self.started += 1
        child_conn.close()
        w = PoolWorker(index, process, parent_conn)
        w.refs.update(ref.key for ref in self.preloaded.values())
        self._waitables[parent_conn] = ("message", w)
        self._waitables[process.sentinel] = ("exit", w)
        return w

    def _wait_started(self) -> None:
        deadline = time.monotonic() + self._start_timeout
        while any(w.state is WorkerState.STARTING for w in self._workers):
            if time.monotonic() > deadline:
                raise WorkerStartError(f"pool workers did not start within {self._start_timeout:.0f} s; {worker_errors.START_ADVICE}")
            self._pump(deadline - time.monotonic())

    def _replace(self, w: PoolWorker) -> None:
        """Start a fresh worker in the slot of `w` (which is gone)."""
        if self._closed:
            return
        fresh = self._start_worker(w.index)
        self._workers[w.index] = fresh

    def _kill(self, w: PoolWorker) -> None:
        if w.process.is_alive():
            w.process.kill()
        w.process.join()
        self._forget(w)

    def _forget(self, w: PoolWorker) -> None:
        """Mark a worker whose process has exited as gone and release its handles."""
        if w.state is WorkerState.GONE:
            return
        step(w, Ended())
        for handle in (w.conn, w.process.sentinel):
            self._waitables.pop(handle, None)
        w.conn.close()

    def _check_open(self) -> None:
        if self._closed:
            raise ValueError("the pool is closed")

    def _send(self, w: PoolWorker, message: tuple | bytes) -> bool:
        data = message if isinstance(message, bytes) else dumps(message)
        try:
            w.conn.send_bytes(data)
            return True
        except (BrokenPipeError, ConnectionResetError, OSError):
            return False  # the worker is dying; its sentinel reports it

    # ------------------------------------------------------------ the state machine

    def _pump(self, timeout: float | None) -> None:
        """Wait for one round of events (messages, exits, deadlines) and handle them."""
        if not any(w.state is not WorkerState.GONE for w in self._workers):
            raise WorkerStartError("every pool worker is gone")
        wait_for = min(x for x in (timeout, self._next_deadline(), 1.0) if x is not None)
        ready = connection.wait(list(self._waitables), max(0.0, wait_for))
        exits = []
        for handle in ready:
            what, w = self._waitables[handle]
            if w.state is WorkerState.GONE:
                continue
            if what == "exit":
                exits.append(w)
            else:
                self._read_one(w)
        for w in exits:
            if w.state is not WorkerState.GONE:
                self._on_exit(w)
        self._expire_deadlines()
        self._dispatch()

    def _next_deadline(self) -> float | None:
        now = time.monotonic()
        left = [w.last_progress + w.task.timeout - now for w in self._workers
                if w.state is WorkerState.BUSY and w.task.timeout is not None]
        return max(0.0, min(left)) if left else None

    def _read_one(self, w: PoolWorker) -> None:
        try:
            data = w.conn.recv_bytes()
        except (EOFError, OSError):
            return  # the worker is gone; its sentinel tells the rest
        self._on_message(w, pickle.loads(data))

    def _drain(self, w: PoolWorker) -> None:
        """Read every message a worker sent before it exited."""
        try:
            while w.state is not WorkerState.GONE and w.conn.poll():
                self._on_message(w, pickle.loads(w.conn.recv_bytes()))
        except (EOFError, OSError):
            pass

    def _on_message(self, w: PoolWorker, message) -> None:
        """A worker's message, checked against its state (TRANSITIONS), handled, and the worker
        moved on to the state the table gives (unless handling it ended the worker)."""
        w.last_progress = time.monotonic()
        check_turn(w, message)
        self._HANDLERS[type(message)](self, w, message)
        if w.state is not WorkerState.GONE:
            step(w, message)

    def _on_reached(self, w: PoolWorker, message: Reached) -> None:
        w.reached = message

    def _on_ready(self, w: PoolWorker, message: Ready) -> None:
        if message.unseeded and not self._warned:
            self._warned = True
            warnings.warn(module_state.warning_text(message.unseeded), RuntimeWarning, stacklevel=_caller_level())

    def _on_load_failed(self, w: PoolWorker, message: LoadFailed) -> None:
        self._finish_task(w, error=worker_errors.task_not_loaded(w.index, message))

    def _on_items(self, w: PoolWorker, message: Items) -> None:
        w.task.result.partial.extend(message.items)

    def _on_done(self, w: PoolWorker, message: Done) -> None:
        w.task.result.partial.extend(message.items)
        self._finish_task(w, value=message.value)

    def _on_failed(self, w: PoolWorker, message: Failed) -> None:
        error = RemoteError(message.summary, message.traceback, list(w.task.result.partial))
        if message.pickled_error is not None:
            error.__cause__ = pickle.loads(message.pickled_error)
        self._finish_task(w, error=error)

    def _on_retire(self, w: PoolWorker, message: Retire) -> None:
        """maxtasksperchild reached: a task sent meanwhile never started and is queued again."""
        if w.task is not None:
            self._queue.appendleft(w.task)
        self._kill(w)
        self._replace(w)

    def _on_start_error(self, w: PoolWorker, message: StartFailed) -> None:
        """Raise the one-line error for a worker that could not start (its traceback went to stderr)."""
        self._kill(w)
        error = worker_errors.start_failed(message)
        error.remote_traceback = message.traceback
        raise error

    _HANDLERS: dict[type, Callable] = {Reached: _on_reached, Ready: _on_ready, LoadFailed: _on_load_failed,
                                       Items: _on_items, Done: _on_done, Failed: _on_failed, Retire: _on_retire,
                                       StartFailed: _on_start_error}

    def _on_exit(self, w: PoolWorker) -> None:
        self._drain(w)
        if w.state is WorkerState.GONE:
            return
        starting = w.state is WorkerState.STARTING
        task = w.task
        self._kill(w)
        code = w.process.exitcode
        what = f"signal {-code}" if code is not None and code < 0 else f"exit code {code}"
        if starting:
            part = w.reached.part
            raise worker_errors.died_starting(f"pool worker {w.index} (pid {w.process.pid}) exited with {what}",
                                              w.reached.stage, "initargs" if part < 0 else self._startup_names[part],
                                              self._initializer)
        if task is not None:
            doing = "loading" if self._loading(w, task) else "running"  # a kill from outside can land while loading
            task.result._finish(error=WorkerDied(
                f"worker {w.index} (pid {w.process.pid}) died with {what} while {doing} task {task.id}",
                list(task.result.partial), code, self._position(w, task), w.index))
        self._replace(w)

    def _position(self, w: PoolWorker, task: PoolTask) -> int:
        """Index of the item `w` was computing for `task`, from the shared progress array."""
        if self._progress[2 * w.index] == task.id and not self._loading(w, task):
            return int(self._progress[2 * w.index + 1])
        return len(task.result.partial)

    def _loading(self, w: PoolWorker, task: PoolTask) -> bool:
        """Whether `w` is unpickling `task`'s function and arguments."""
        return self._progress[2 * w.index] == task.id and self._progress[2 * w.index + 1] == LOADING

    def _expire_deadlines(self) -> None:
        now = time.monotonic()
        for w in list(self._workers):
            task = w.task
            if w.state is not WorkerState.BUSY or task.timeout is None:
                continue
            position = self._position(w, task)
            if position != w.seen_position:  # a batched item finished: that is progress
                w.seen_position, w.last_progress = position, now
            elif now - w.last_progress > task.timeout:
                self._kill(w)
                still = " (its worker was still loading it)" if self._loading(w, task) else ""
                task.result._finish(error=TaskTimeout(
                    f"task {task.id} made no progress for {task.timeout} s{still}; worker {w.index} "
                    f"(pid {w.process.pid}) was killed", list(task.result.partial), None, position, w.index))
                self._replace(w)

    def _finish_task(self, w: PoolWorker, value: Any = None, error: BaseException | None = None) -> None:
        task, w.task = w.task, None
        task.result._finish(value, error)

    def _dispatch(self) -> None:
        """Hand queued tasks to idle workers, installing the shared objects each one needs."""
        if not self._queue:
            return
        idle = [w for w in self._workers if w.state is WorkerState.IDLE]
        for w in idle:
            task = self._take_task_for(w)
            if task is None:
                continue
            for key in task.refs:
                if key not in w.refs:
                    self._send(w, Put(key, self._shared[key]))
                    w.refs.add(key)
            step(w, Dispatched())
            w.task, w.last_progress, w.seen_position = task, time.monotonic(), 0
            self._send(w, task.payload)

    def _take_task_for(self, w: PoolWorker) -> PoolTask | None:
        for i, task in enumerate(self._queue):
            if task.worker is None or task.worker == w.index:
                del self._queue[i]
                return task
        return None


def _caller_level() -> int:
    """The `stacklevel` of the first frame outside neatpar, so a warning points at the user's line."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_code.co_filename.startswith(package + os.sep):
        frame, level = frame.f_back, level + 1
    return level


