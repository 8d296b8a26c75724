"""ParallelEvaluator's Ray backend: chunks of genomes as Ray tasks, at most `num_workers` at once.

The config travels pickled by neatpar (never through neat-python's own pickling, which changes
it), put into the object store once per change. Ray does not stream a chunk's results, so when a
worker dies or a chunk times out the evaluator runs its genomes again one per task, which names
the culprit exactly. A function of the main script travels by value with the globals it uses, so
a function whose globals hold a live handle is refused.
"""
from __future__ import annotations

import sys
import time
import uuid
from collections import deque
from typing import Callable

from ..errors import LiveHandleError, RemoteError, TaskTimeout, WorkerDied
from .chunks import GenomeResult, evaluate_chunk
from .handles import find_handle, used_globals
from .serialize import found_by_name
from .ray_cluster import Kept, config_from, connect, first_line, shutdown

_initialized: set[str] = set()


def _ray_chunk(eval_function: Callable, init: tuple, config_bytes: bytes, seed: int | None,
               genomes: list) -> list[GenomeResult]:
    """A Ray task: the initializer once per worker process, then the chunk's outcomes."""
    token, initializer, initargs = init
    if initializer is not None and token not in _initialized:
        initializer(*initargs)
        _initialized.add(token)
    return list(evaluate_chunk(eval_function, config_from(config_bytes), seed, genomes))


class RayJob:
    """One chunk in flight; `partial` and `error` as on a pool's AsyncResult (Ray gives no partial
    results, so a lost chunk of several genomes does not know which one was running)."""

    def __init__(self, args: tuple, chunk: list):
        self.args, self.chunk = args, chunk
        self.ref = None
        self.deadline: float | None = None
        self.partial: list = []
        self.error: BaseException | None = None


class RayTasks:
    """ParallelEvaluator's chunks on a Ray cluster, at most `num_workers` running at once."""

    def __init__(self, num_workers: int, eval_function: Callable, address: str | None = None,
                 initializer: Callable | None = None, initargs: tuple = (), timeout: float | None = None):
        _refuse_live_globals(eval_function)
        self.ray, self._started = connect(address)
        self.num_workers, self.timeout = num_workers, timeout
        self.eval_function = eval_function
        self._remote = self.ray.remote(num_cpus=1, max_retries=0)(_ray_chunk)
        self._function_ref = self.ray.put(eval_function)
        self._init = (uuid.uuid4().hex, initializer, tuple(initargs))
        self._config: Kept | None = None
        self._waiting: deque[RayJob] = deque()
        self._running: dict = {}  # ObjectRef -> RayJob

    def share_config(self, payload: bytes, digest: bytes):
        """The config in the object store, put again only when its digest changes."""
        if self._config is None or self._config.key != digest:
            self._config = Kept(digest, self.ray.put(payload))
        return self._config.value

    def default_chunksize(self, count: int) -> int:
        # Ray returns a chunk's results only at its end, so a timeout is exact only per genome.
        if self.timeout is not None:
            return 1
        return max(1, -(-count // (4 * self.num_workers)))

    def submit(self, config_ref, seed: int | None, chunk: list) -> RayJob:
        job = RayJob((self._function_ref, self._init, config_ref, seed, chunk), chunk)
        self._waiting.append(job)
        self._start_waiting()
        return job

    def _start_waiting(self) -> None:
        while self._waiting and len(self._running) < self.num_workers:
            job = self._waiting.popleft()
            job.ref = self._remote.remote(*job.args)
            if self.timeout is not None:
                job.deadline = time.monotonic() + self.timeout * len(job.chunk)
            self._running[job.ref] = job

    def wait(self, jobs, timeout: float) -> list[RayJob]:
        """Drive the running chunks for up to `timeout` s; return the finished ones among `jobs`."""
        if self._running:
            ready, _ = self.ray.wait(list(self._running), num_returns=1, timeout=timeout)
            for ref in ready:
                self._finish(self._running.pop(ref))
            self._expire()
        self._start_waiting()
        return [job for job in jobs if job.ref is not None and job.ref not in self._running]

    def _finish(self, job: RayJob) -> None:
        ray = self.ray
        try:
            job.partial = ray.get(job.ref)
        except (ray.exceptions.WorkerCrashedError, ray.exceptions.NodeDiedError,
                ray.exceptions.TaskCancelledError) as exc:
            job.error = WorkerDied(f"the Ray worker running genomes {[g.key for g in job.chunk]} died: "
                                   f"{first_line(exc)}", [], None, _known_position(job))
        except ray.exceptions.RayTaskError as exc:
            job.error = RemoteError(first_line(exc), str(exc))

    def _expire(self) -> None:
        now = time.monotonic()
        for ref, job in list(self._running.items()):
            if job.deadline is not None and now > job.deadline:
                self.ray.cancel(ref, force=True)
                del self._running[ref]
                job.error = TaskTimeout(f"genomes {[g.key for g in job.chunk]} did not finish within "
                                        f"{self.timeout} s each; their Ray worker was stopped", [], None,
                                        _known_position(job))

    def close(self) -> None:
        for ref in list(self._running):
            self.ray.cancel(ref, force=True)
        self._running.clear()
        self._waiting.clear()
        if self._started:
            shutdown(self.ray)
            self._started = False

    terminate = close


def _known_position(job: RayJob) -> int | None:
    """Which genome of a lost chunk was running: known only for a chunk of one."""
    return 0 if len(job.chunk) == 1 else None


def _refuse_live_globals(eval_function: Callable) -> None:
    """Ray sends a main-script function by value, with the globals it uses: refuse live handles
    among them (a simulator connection must never be copied into a worker)."""
    code = getattr(eval_function, "__code__", None)
    namespace = getattr(eval_function, "__globals__", {})
    for name in (used_globals(code) if code is not None else ()):
        found = find_handle(namespace.get(name), name, _sent_by_value)
        if found is not None:
            where = "" if found.path == name else f" at {found.path}"
            raise LiveHandleError(f"eval_function uses the global {name!r} ({found.kind}{where}), which Ray would "
                                  f"copy into every worker: create it inside the function (lazily, once per worker) "
                                  f"instead")


def _sent_by_value(function: Callable) -> bool:
    """Whether Ray (cloudpickle) sends a function by value: one of the main module, or one no
    module has at its name (a lambda, a nested function)."""
    module = getattr(function, "__module__", None)
    return module == "__main__" or not found_by_name(sys.modules.get(module or ""), function)
