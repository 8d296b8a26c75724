"""Env hosts: several simulators, each created by and owned by exactly one host process.

With `[neatpar] envs = N` (N >= 2) or the Ray backend, the main process keeps neat-python's loop,
the reporters and the run folder, and never connects to a simulator. It splits each generation
into parts and hands them out one at a time to N hosts; a host that finishes early takes the next
part. Each host creates its own simulator connection lazily (its own port), compiles the part's
genomes into its own population kernel and returns episode returns and stats.

A host that dies or stops reporting progress is replaced, its simulator is killed by PID, and its
part runs again from the start: with a seed, a part's simulator seed depends on (generation,
part) only, so the results do not depend on which host ran which part, or how often.

- `HostState`: the host side (one per host process), shared by both backends.
- `LocalHosts`: hosts as spawn processes of a neatpar Pool (this module).
- `RayHosts`: hosts as Ray actors (ray_backend.py).
- `HostScheduler`: the main side; hands out parts, gathers results, replaces lost hosts.
"""
from __future__ import annotations

import atexit
import dataclasses
import logging
import math
import multiprocessing
import os
import signal
import time
from collections import deque
from dataclasses import dataclass
from typing import Any

from . import workers
from .config import RunConfig
from .errors import NeatparError, RemoteError, WorkerDied
from .pool import Pool
from .runner import EpisodeRunner, GenerationStats, make_bridge
from .serialize import dumps

log = logging.getLogger("neatpar")

PARTS_PER_HOST = 2      # parts per host per generation: enough for a fast host to take more
HOST_PORT_STRIDE = 4    # host i looks for a free port from worker_id + 4 i (hosts start at once)
MAX_HOST_LOSSES = 3     # a part whose host is lost this many times stops the run


def silence_limit(run: RunConfig) -> float:
    """Seconds a busy host may go without a simulator step before it counts as hung."""
    return max(3 * run.timeout, 10.0)


class HostLost(NeatparError, RuntimeError):
    """The host running a part died or stopped reporting progress; the part runs again."""


@dataclass(frozen=True)
class HostSetup:
    """What every host needs to create its simulator: the run's settings and the log folder."""
    run: RunConfig
    log_folder: str | None = None


# ---------------------------------------------------------------- host side

class HostState:
    """One host's simulator connection (created on first use) and episode runner."""

    def __init__(self, setup: HostSetup, index: int, on_launch=None):
        # Networks run in the host itself: its kernel copy serves only its own simulator.
        self.run = dataclasses.replace(setup.run, inference="inprocess")
        worker_id = self.run.worker_id + HOST_PORT_STRIDE * index
        self.bridge = make_bridge(self.run, setup.log_folder, worker_id=worker_id, allow_child=True)
        self.bridge.on_launch = on_launch
        self.index = index
        self._runner: EpisodeRunner | None = None

    def evaluate(self, config: Any, plan: tuple, genomes: list, generation: int, part: int,
                 heartbeat=None) -> tuple[list[list[float]], GenerationStats, int]:
        """Episode returns of `genomes` (part `part` of `generation`) on this host's simulator,
        the stats, and this host's index."""
        if self._runner is None or self._runner.neat_config is not config:
            self._runner = EpisodeRunner(self.bridge, self.run, config)
        self._runner.heartbeat = heartbeat
        champion, files = plan
        returns, stats = self._runner.evaluate(genomes, champion, files, generation, part)
        return returns, stats, self.index

    def kill(self) -> None:
        self.bridge.kill()

    def close(self) -> None:
        self.bridge.close()


_host: HostState | None = None


def process_start_time(pid: int) -> int | None:
    """The start time of process `pid` (clock ticks since boot), to tell it from a later one with
    the same PID; None if it is gone or unknown."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[19])
    except (OSError, IndexError, ValueError):
        return None


def _host_init(setup: HostSetup, cells) -> None:
    """Pool initializer of a local env host: its state, and cleanup on every way out."""
    global _host
    index = workers.slot()

    def publish(pid: int) -> None:
        cells[2 * index], cells[2 * index + 1] = pid, process_start_time(pid) or 0

    _host = HostState(setup, index, on_launch=publish)
    signal.signal(signal.SIGTERM, _on_sigterm)
    workers.on_parent_exit(_host.kill)
    atexit.register(_host.close)


def _on_sigterm(signum, frame) -> None:
    if _host is not None:
        _host.kill()
    os._exit(128 + signum)


def _host_part(config, plan, genomes: list, generation: int, part: int):
    """A pool task in a local env host."""
    return _host.evaluate(config, plan, genomes, generation, part, heartbeat=workers.heartbeat)


# ---------------------------------------------------------------- main side: local hosts

class LocalHosts:
    """N env hosts as spawn processes of a neatpar Pool (one simulator each)."""

    def __init__(self, setup: HostSetup, count: int):
        self.count = count
        self.timeout = silence_limit(setup.run)  # a host beats once per simulator step
        self._cells = multiprocessing.get_context("spawn").RawArray("q", 2 * count)  # per host: sim PID, start
        self.pool = Pool(count, _host_init, (setup, self._cells))
        self._refs: tuple = ()
        self._running: dict = {}  # AsyncResult -> ticket

    def prepare(self, config_bytes: bytes, plan: Any) -> None:
        """The generation's config and (champion, files), sent once to each host that needs them."""
        for ref in self._refs:
            self.pool.unshare(ref)
        self._refs = (self.pool.share(None, pickled=config_bytes), self.pool.share(plan))

    def submit(self, ticket: Any, genomes: list, generation: int, part: int) -> None:
        result = self.pool.apply_async(_host_part, (*self._refs, genomes, generation, part), timeout=self.timeout)
        self._running[result] = ticket

    def wait(self, timeout: float) -> list[tuple[Any, Any, BaseException | None]]:
        """(ticket, value, error) of the parts that finished; a lost host's error is HostLost."""
        done = self.pool.wait(list(self._running), timeout=timeout, return_when_any=True)
        out = []
        for result in done:
            ticket = self._running.pop(result)
            error = result.error
            if isinstance(error, WorkerDied):
                self._kill_simulator(error.worker)
                error = HostLost(str(error))
            elif isinstance(error, RemoteError) and isinstance(error.__cause__, NeatparError):
                error = error.__cause__  # a one-line error raised in the host (bad config, simulator failed)
            out.append((ticket, None if error else result.get(), error))
        return out

    def _kill_simulator(self, index: int) -> None:
        """Kill the simulator host `index` had started, if it still runs (checked by PID and start
        time, so a later process that got the same PID is left alone)."""
        pid, started = self._cells[2 * index], self._cells[2 * index + 1]
        self._cells[2 * index] = 0
        if pid and process_start_time(pid) == started:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    @property
    def pids(self) -> list[int]:
        """PIDs of the live host processes."""
        return self.pool.pids

    @property
    def simulator_pids(self) -> list[int]:
        """PIDs of the simulators the hosts have started (0 where none runs)."""
        return [self._cells[2 * i] for i in range(self.count)]

    def close(self) -> None:
        """Idle hosts close their simulators and exit; busy ones are stopped at once."""
        try:
            if self._running:
                self.pool.terminate()
            else:
                self.pool.close()
        finally:
            self._running.clear()
            for index in range(self.count):  # whatever a host could not close on its way out
                self._kill_simulator(index)


# ---------------------------------------------------------------- main side: the scheduler

def split(count: int, hosts: int) -> list[range]:
    """The parts of a generation of `count` genomes: PARTS_PER_HOST per host, in order."""
    size = max(1, math.ceil(count / (PARTS_PER_HOST * hosts)))
    return [range(start, min(count, start + size)) for start in range(0, count, size)]


class HostScheduler:
    """Evaluates generations on env hosts, with EpisodeRunner's `evaluate` signature."""

    def __init__(self, hosts, neat_config: Any):
        self.hosts = hosts
        self.neat_config = neat_config
        self.lost = 0  # hosts lost (and replaced) so far
        self.ran_on: dict[int, int] = {}  # part -> index of the host that finished it (last generation)

    def evaluate(self, genomes: list, champion=None, files: dict | None = None,
                 generation: int = 0) -> tuple[list[list[float]], GenerationStats]:
        started = time.perf_counter()
        self.hosts.prepare(dumps(self.neat_config), (champion, files or {}))
        parts = split(len(genomes), self.hosts.count)
        waiting = deque(range(len(parts)))
        losses = [0] * len(parts)
        returns: list = [None] * len(genomes)
        stats = GenerationStats()
        self.ran_on = {}
        running = 0
        while waiting or running:
            while waiting and running < self.hosts.count:
                part = waiting.popleft()
                self.hosts.submit(part, [genomes[i] for i in parts[part]], generation, part)
                running += 1
            for part, value, error in self.hosts.wait(timeout=1.0):
                running -= 1
                if isinstance(error, HostLost):
                    self._lost(part, parts[part], losses, error, generation)
                    waiting.appendleft(part)
                elif error is not None:
                    raise error
                else:
                    part_returns, part_stats, self.ran_on[part] = value
                    for i, r in zip(parts[part], part_returns):
                        returns[i] = r
                    _add(stats, part_stats)
        stats.seconds = time.perf_counter() - started
        return returns, stats

    def _lost(self, part: int, genome_range: range, losses: list, error: HostLost, generation: int) -> None:
        losses[part] += 1
        self.lost += 1
        if losses[part] >= MAX_HOST_LOSSES:
            raise NeatparError(
                f"part {part} of generation {generation} (genomes {genome_range.start}..{genome_range.stop - 1}) "
                f"lost its env host {losses[part]} times (last: {error}); checkpoints written so far are "
                f"intact: check the simulator's logs and resume") from None
        log.warning("generation %d: env host lost (%s); running part %d again on a new host", generation, error, part)


def _add(total: GenerationStats, part: GenerationStats) -> None:
    total.agent_steps += part.agent_steps
    total.env_steps += part.env_steps
    total.episodes += part.episodes
