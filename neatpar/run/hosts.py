"""Env hosts: several simulators, each created by and owned by exactly one host process.

With `[neatpar] envs = N` (N >= 2) or the Ray backend, the main process keeps neat-python's loop,
the reporters and the run folder, and never connects to a simulator. Each host creates its own
simulator connection lazily (its own port), compiles a part's genomes into its own population
kernel and returns episode returns and stats.

Work is cut so that no simulator's agents sit idle while genomes wait: each generation is cut into
one part per host (contiguous, sizes differing by at most one genome), so every host's agents
take genomes in turns from its part until the part is done, and the hosts finish together; a
generation too small to fill more than k hosts' agents (k < N) is cut into k parts, so that no two
simulators each run a handful of genomes where one could run them all. The agent count (A, fixed
by the game) is counted once, by one host, before the first generation. Parts are handed out as
hosts become free; a lost host's part runs again on the next free one.

A host that dies or stops reporting progress is replaced, its simulator is killed by PID, and its
part runs again from the start: with a seed, a part's simulator seed depends on (generation,
part) only, so the results do not depend on which host ran which part, or how often.

- `HostState` (here): the host side, one per host process, shared by both kinds of host.
- `LocalHosts` (local_hosts.py): hosts as spawn processes of a neatpar Pool.
- `RayHosts` (ray_hosts.py): hosts as Ray actors.
- `HostScheduler` (here): the main side; hands out parts, gathers results, replaces lost hosts.
  It drives either kind through the same small interface: count, prepare, submit, wait, close.
"""
from __future__ import annotations

import dataclasses
import logging
import math
import time
from collections import deque
from dataclasses import dataclass
from typing import Any

from ..errors import HostLost, NeatparError
from ..parallel.serialize import dumps
from ..settings import Settings
from .environments import open_environment
from .runner import EpisodeRunner, GenerationStats, survey

log = logging.getLogger("neatpar")

HOST_PORT_STRIDE = 4    # host i looks for a free port from worker_id + 4 i (hosts start at once)
MAX_HOST_LOSSES = 3     # a part whose host is lost this many times stops the run


def silence_limit(settings: Settings) -> float:
    """Seconds a busy host may go without a simulator step before it counts as hung."""
    return max(3 * settings.timeout, 10.0)


@dataclass(frozen=True)
class HostSetup:
    """What every host needs to create its simulator: the run's settings and the log folder."""
    settings: Settings
    log_folder: str | None = None


# ---------------------------------------------------------------- host side

class HostState:
    """One host's environment (created on first use) and episode runner."""

    def __init__(self, setup: HostSetup, index: int, on_launch=None):
        # Networks run in the host itself: its kernel copy serves only its own simulator.
        self.settings = dataclasses.replace(setup.settings, inference="inprocess")
        worker_id = self.settings.worker_id + HOST_PORT_STRIDE * index
        self.environment = open_environment(self.settings, setup.log_folder, worker_id=worker_id,
                                            allow_child=True, on_launch=on_launch)
        self.index = index
        self._runner: EpisodeRunner | None = None

    def evaluate(self, config: Any, plan: tuple, genomes: list, generation: int, part: int,
                 heartbeat=None) -> tuple[list[list[float]], GenerationStats, int]:
        """Episode returns of `genomes` (part `part` of `generation`) on this host's simulator,
        the stats, and this host's index."""
        if self._runner is None or self._runner.neat_config is not config:
            self._runner = EpisodeRunner(self.environment, self.settings, config)
        self._runner.heartbeat = heartbeat
        champion, files = plan
        returns, stats = self._runner.evaluate(genomes, champion, files, generation, part)
        return returns, stats, self.index

    def survey(self) -> int:
        """The number of agents of the population behaviors in this host's game."""
        return survey(self.environment, self.settings)

    def kill(self) -> None:
        self.environment.kill()

    def close(self) -> None:
        self.environment.close()


def process_start_time(pid: int) -> int | None:
    """The start time of process `pid` (clock ticks since boot), to tell it from a later one with
    the same PID; None if it is gone or unknown."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[19])
    except (OSError, IndexError, ValueError):
        return None


# ---------------------------------------------------------------- main side: the scheduler

def split(count: int, hosts: int, agents: int | None) -> list[range]:
    """The parts of a generation of `count` genomes, in order: one per host, or as many as it takes
    to give `count` genomes to hosts of `agents` agents each when that is fewer (agents unknown:
    one per host); sizes differ by at most one."""
    parts = hosts if not agents else min(hosts, math.ceil(count / agents))
    parts = max(1, min(parts, count))
    bounds = [round(i * count / parts) for i in range(parts + 1)]
    return [range(bounds[i], bounds[i + 1]) for i in range(parts)]


class HostScheduler:
    """Evaluates generations on env hosts, with EpisodeRunner's `evaluate` signature."""

    def __init__(self, hosts, neat_config: Any):
        self.hosts = hosts
        self.neat_config = neat_config
        self.lost = 0  # hosts lost (and replaced) so far
        self.ran_on: dict[int, int] = {}  # part -> index of the host that finished it (last generation)
        self.parts: list[range] = []      # the last generation's parts

    def evaluate(self, genomes: list, champion=None, files: dict | None = None,
                 generation: int = 0) -> tuple[list[list[float]], GenerationStats]:
        started = time.perf_counter()
        self.hosts.prepare(dumps(self.neat_config), (champion, files or {}))
        parts = self.parts = split(len(genomes), self.hosts.count, self.hosts.agents())
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
                    stats.add(part_stats)
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
