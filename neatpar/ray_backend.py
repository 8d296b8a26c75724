"""The Ray backend: env hosts as Ray actors, and ParallelEvaluator's genomes as Ray tasks.

Ray is an optional extra (`pip install 'neatpar[ray]'`); asking for it without Ray installed is a
ConfigError that says so. neatpar joins the cluster at `address` (or RAY_ADDRESS), or starts a
local Ray instance, and shuts down only an instance it started itself.

- `RayHosts`: one actor per simulator; each actor owns a HostState (hosts.py), so each
  simulator connection is created inside the actor that uses it, on whichever node runs it.
  The actor's methods run in threads (max_concurrency=2) so that `stop` can kill the
  simulator while a part is running.
- `RayTasks`: chunks of genomes as Ray tasks, at most `num_workers` at a time; the config
  travels pickled by neatpar (never through neat-python's own pickling, which changes it), once
  per change. Ray does not stream a chunk's results, so when a worker dies or a chunk times out
  its genomes run again one per task, which names the culprit exactly.
"""
from __future__ import annotations

import contextlib
import logging
import os
import pickle
import random
import time
import uuid
from collections import deque
from typing import Any, Callable

from .errors import ConfigError, LiveHandleError, NeatparError, RemoteError, TaskTimeout, WorkerDied
from .handles import handle_kind

# hosts.py pulls in mlagents-envs and gRPC; the env-host code imports it when used, so that
# ParallelEvaluator's Ray tasks do not.

RAY_PIN = "ray==2.60.0"
STOP_SECONDS = 10.0
log = logging.getLogger("neatpar")


def require_ray():
    """The ray module, or a ConfigError that says what to install."""
    try:
        import ray
    except ImportError:
        raise ConfigError(f"the Ray backend needs Ray, which is not installed: pip install 'neatpar[ray]' "
                          f"(installs {RAY_PIN})") from None
    return ray


@contextlib.contextmanager
def _global_random_kept():
    """ray.init and ray.shutdown draw from the global `random`, which neat-python's reproduction
    uses: without this, a seeded run would depend on the backend."""
    saved = random.getstate()
    try:
        yield
    finally:
        random.setstate(saved)


def connect(address: str | None):
    """Join the Ray cluster at `address` (or RAY_ADDRESS), else start a local instance.
    Returns (ray, started): `started` is True when this call started the instance."""
    ray = require_ray()
    if ray.is_initialized():
        return ray, False
    try:
        with _global_random_kept():
            ray.init(address=address, include_dashboard=False, logging_level=logging.WARNING,
                     configure_logging=False)
    except ConnectionError as exc:
        raise ConfigError(f"cannot reach the Ray cluster at {address or os.environ.get('RAY_ADDRESS')}: "
                          f"{' '.join(str(exc).split())[:300]}; start it with `ray start --head` or fix "
                          f"--address") from None
    return ray, True


def shutdown(ray) -> None:
    """Stop the Ray instance this process started."""
    with _global_random_kept():
        ray.shutdown()


_config_read: tuple = (b"", None)


def _config_from(payload: bytes) -> Any:
    """The neat config `payload` holds, unpickled once per Ray worker while the bytes stay the same."""
    global _config_read
    if payload != _config_read[0]:
        _config_read = (payload, pickle.loads(payload))
    return _config_read[1]


# ---------------------------------------------------------------- env hosts as actors

class EnvHostActor:
    """The body of an env host actor (wrapped by ray.remote in RayHosts)."""

    def __init__(self, setup, index: int):
        from .hosts import HostState
        self.state = HostState(setup, index)
        self.beats = 0  # simulator steps so far; read by `progress` while a part runs

    def evaluate(self, config_bytes: bytes, plan, genomes: list, generation: int, part: int):
        return self.state.evaluate(_config_from(config_bytes), plan, genomes, generation, part, heartbeat=self._beat)

    def _beat(self) -> None:
        self.beats += 1

    def progress(self) -> int:
        return self.beats

    def where(self) -> tuple[str, int, int | None]:
        """(node address, actor PID, simulator PID or None)."""
        import ray
        return ray.util.get_node_ip_address(), os.getpid(), self.state.bridge.process_pid

    def stop(self, graceful: bool) -> None:
        """Close the simulator (graceful) or kill it (while a part may be running)."""
        (self.state.close if graceful else self.state.kill)()


class RayHosts:
    """N env hosts as Ray actors, one simulator each; the scheduler's backend (see hosts.py)."""

    def __init__(self, setup, count: int, address: str | None = None):
        from .hosts import silence_limit
        self.ray, self._started = connect(address)
        cpus = int(self.ray.cluster_resources().get("CPU", 0))
        if count > cpus:
            self._shutdown()
            raise ConfigError(f"envs = {count} env hosts need a CPU each but the Ray cluster has {cpus}: "
                              f"lower --envs, or add nodes to the cluster")
        self._actor_class = self.ray.remote(num_cpus=1, max_restarts=0, max_concurrency=2)(EnvHostActor)
        self.setup, self.count = setup, count
        self._actors = [self._new_actor(i) for i in range(count)]
        self._idle = deque(range(count))
        self._running: dict = {}  # ObjectRef -> (ticket, actor index)
        self._refs: tuple = ()
        self.timeout = silence_limit(setup.run)
        self._heard: dict[int, tuple[int, float]] = {}  # busy actor -> (beats, when they last changed)
        self._next_check = 0.0

    def _new_actor(self, index: int):
        return self._actor_class.remote(self.setup, index)

    def prepare(self, config_bytes: bytes, plan: Any) -> None:
        self._refs = (self.ray.put(config_bytes), self.ray.put(plan))

    def submit(self, ticket: Any, genomes: list, generation: int, part: int) -> None:
        index = self._idle.popleft()
        ref = self._actors[index].evaluate.remote(*self._refs, genomes, generation, part)
        self._running[ref] = (ticket, index)
        self._heard[index] = (-1, time.monotonic())

    def wait(self, timeout: float) -> list[tuple[Any, Any, BaseException | None]]:
        ray = self.ray
        ready, _ = ray.wait(list(self._running), num_returns=1, timeout=timeout)
        self._kill_hung()
        out = []
        for ref in ready:
            ticket, index = self._running.pop(ref)
            value, error = None, None
            try:
                value = ray.get(ref)
            except ray.exceptions.RayActorError as exc:
                from .hosts import HostLost
                error = HostLost(f"env host {index} (Ray actor) died: {_first_line(exc)}")
                self._actors[index] = self._new_actor(index)
            except ray.exceptions.RayTaskError as exc:
                cause = getattr(exc, "cause", None)
                error = cause if isinstance(cause, NeatparError) else RemoteError(_first_line(exc), str(exc))
            self._idle.append(index)
            out.append((ticket, value, error))
        return out

    def _kill_hung(self) -> None:
        """Ask each busy actor how many simulator steps it has made (about once a second); one
        that made none for `timeout` seconds, or does not answer, is killed (its part then fails
        with RayActorError and runs again on a new actor)."""
        now = time.monotonic()
        if now < self._next_check:
            return
        self._next_check = now + 1.0
        busy = {index for _, index in self._running.values()}
        probes = {self._actors[index].progress.remote(): index for index in busy}
        ready, _ = self.ray.wait(list(probes), num_returns=len(probes), timeout=2.0)
        for ref in ready:
            index = probes[ref]
            try:
                beats = self.ray.get(ref)
            except self.ray.exceptions.RayActorError:
                continue  # died: its part reports that
            if beats != self._heard[index][0]:
                self._heard[index] = (beats, now)
        for index in busy:
            if now - self._heard[index][1] > self.timeout:
                log.warning("env host %d (Ray actor) made no progress for %.0f s; replacing it", index, self.timeout)
                self.ray.kill(self._actors[index])
                self._heard[index] = (-1, float("inf"))

    def actor_locations(self) -> list[tuple[str, int, int | None]]:
        """(node, actor PID, simulator PID) of each host."""
        return self.ray.get([actor.where.remote() for actor in self._actors], timeout=STOP_SECONDS)

    def close(self) -> None:
        """Close each simulator (killed if a part is running), then end the actors."""
        ray, graceful = self.ray, not self._running
        try:
            stops = [actor.stop.remote(graceful) for actor in self._actors]
            ray.wait(stops, num_returns=len(stops), timeout=STOP_SECONDS)
        finally:
            for actor in self._actors:
                ray.kill(actor)
            self._actors, self._running = [], {}
            self._shutdown()

    def _shutdown(self) -> None:
        if self._started:
            shutdown(self.ray)
            self._started = False


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:300] if text else type(exc).__name__


# ---------------------------------------------------------------- ParallelEvaluator on Ray

_initialized: set[str] = set()


def _ray_chunk(eval_function: Callable, init: tuple, config_bytes: bytes, seed: int | None,
               genomes: list) -> list[tuple]:
    """A Ray task: the initializer once per worker process, then the chunk's outcomes."""
    from .evaluator import evaluate_chunk
    token, initializer, initargs = init
    if initializer is not None and token not in _initialized:
        initializer(*initargs)
        _initialized.add(token)
    return list(evaluate_chunk(eval_function, _config_from(config_bytes), seed, genomes))


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
        self._remote = self.ray.remote(num_cpus=1, max_retries=0)(_ray_chunk)
        self._function_ref = self.ray.put(eval_function)
        self._init = (uuid.uuid4().hex, initializer, tuple(initargs))
        self._config: tuple = ()
        self._waiting: deque[RayJob] = deque()
        self._running: dict = {}  # ObjectRef -> RayJob

    def put_config(self, key: bytes, payload: bytes):
        """The config in the object store, put again only when its digest `key` changes."""
        if not self._config or self._config[0] != key:
            self._config = (key, self.ray.put(payload))
        return self._config[1]

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
        ray = self.ray
        if self._running:
            ready, _ = ray.wait(list(self._running), num_returns=1, timeout=timeout)
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
                                   f"{_first_line(exc)}", [], None, _known_position(job))
        except ray.exceptions.RayTaskError as exc:
            job.error = RemoteError(_first_line(exc), str(exc))

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


def _known_position(job: RayJob) -> int | None:
    """Which genome of a lost chunk was running: known only for a chunk of one."""
    return 0 if len(job.chunk) == 1 else None


def _refuse_live_globals(eval_function: Callable) -> None:
    """Ray sends a main-script function by value, with the globals it uses: refuse live handles
    among them (a simulator connection must never be copied into a worker)."""
    code = getattr(eval_function, "__code__", None)
    namespace = getattr(eval_function, "__globals__", {})
    for name in (code.co_names if code is not None else ()):
        kind = handle_kind(namespace.get(name))
        if kind:
            raise LiveHandleError(f"eval_function uses the global {name!r} ({kind}), which Ray would copy into "
                              f"every worker: create it inside the function (lazily, once per worker) instead")
