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
  It drives either kind through the same small interface: count, agents, prepare, free, submit,
  wait, progress, close. A part goes to a host only when `free()` says one can run it now (a
  replacement Ray actor that no node can take yet is not free), so no part waits on a host that
  cannot run it; the generation's parts stay the same (`count` of them), whichever hosts run them.

While a part runs, its host reports after every simulator step (HostProgress): the steps show
that it is alive, the part's scored episodes and decisions so far let the main process show how
far the generation is. Each part's stats, the game's own statistics included, come back with its
returns and are added up (GenerationStats.add).
"""
from __future__ import annotations

import dataclasses
import logging
import math
import time
from collections import deque
from dataclasses import dataclass
from typing import Any, Callable, NamedTuple

from ..config.settings_model import Settings
from ..errors import HostLost, NeatparError
from ..parallel.serialize import dumps
from ..generation_stats import GenerationStats
from .environments import open_environment
from .generation_plan import Compiled, Match, compile_generation, geometry_of, needs_geometry
from .runner import EpisodeRunner
from .survey import Survey, survey

log = logging.getLogger("neatpar")

HOST_PORT_STRIDE = 4    # host i looks for a free port from worker_id + 4 i (hosts start at once)
MAX_HOST_LOSSES = 3     # a part whose host is lost this many times stops the run
PROGRESS_SECONDS = 0.25  # how often the scheduler passes the hosts' progress on, when asked to


def silence_limit(settings: Settings) -> float:
    """Seconds a busy host may go without a simulator step before it counts as hung."""
    return max(3 * settings.timeout, 10.0)


class PartProgress(NamedTuple):
    """How far a running part is: its scored episodes finished and scored decisions made."""
    episodes: int = 0
    scored_steps: int = 0


class HostProgress(NamedTuple):
    """A host's report after each simulator step: `steps` counts its steps since it started (it
    is alive while they grow); the rest says how far the part it runs is."""
    steps: int = 0
    generation: int = -1
    part: int = -1
    episodes: int = 0
    scored_steps: int = 0


class RunConfigs(NamedTuple):
    """The neat configs a host's runner plays with, sent once per run: the run's, and the
    per-behavior ones where a behavior's genomes have another (an asymmetric game's populations)."""
    neat_config: Any
    behaviors: dict


class PartResult(NamedTuple):
    """What a host returns for a part: each genome's episode returns, the part's stats, and the
    index of the host that ran it."""
    returns: list[list[float]]
    stats: GenerationStats
    host: int


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
        self.report = HostProgress()  # read by the Ray actor's `progress` while a part runs

    def evaluate(self, configs: RunConfigs, compiled: Compiled, generation: int, part: int,
                 on_step: Callable[[HostProgress], None] | None = None) -> PartResult:
        """Episode returns of the genomes of part `part` of `generation`, compiled by the main
        process (compile_generation), on this host's simulator, the stats, and this host's index;
        `on_step` gets the host's report after every step. `configs` are the run's neat configs as
        the scheduler sent them. The runner lives as long as the host (the
        genomes' inputs and outputs do not change within a run)."""
        if self._runner is None:
            self._runner = EpisodeRunner(self.environment, self.settings, configs.neat_config,
                                         configs=configs.behaviors)
        self.report = HostProgress(self.report.steps, generation, part)

        def progress(stats: GenerationStats) -> None:
            self.report = HostProgress(self.report.steps + 1, generation, part, stats.episodes, stats.scored_steps)
            if on_step is not None:
                on_step(self.report)

        self._runner.progress = progress
        returns, stats = self._runner.play(compiled, generation, part)
        return PartResult(returns, stats, self.index)

    def survey(self) -> Survey:
        """The agents of the population behaviors in this host's game, and the layouts."""
        return survey(self.environment, self.settings)

    def kill(self) -> None:
        self.environment.kill()

    def close(self) -> None:
        self.environment.close()


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
    """Evaluates generations on env hosts, with EpisodeRunner's `evaluate` signature and its
    `progress` callback (called about every PROGRESS_SECONDS with the generation's episodes and
    scored decisions so far, finished parts and running ones together)."""

    def __init__(self, hosts, settings: Settings, neat_config: Any, configs: dict | None = None):
        self.hosts, self.settings, self.neat_config = hosts, settings, neat_config
        self.configs = configs or {}   # per-behavior neat configs (EpisodeRunner)
        self.lost = 0  # hosts lost (and replaced) so far
        self.ran_on: dict[int, int] = {}  # part -> index of the host that finished it (last generation)
        self.parts: list[range] = []      # the last generation's parts
        self.progress: Callable[[GenerationStats], None] | None = None
        self.parameters: dict | None = None   # the environment parameters every part is played with (EpisodeRunner)
        self._config_sent = False
        self.geometry: Any = None   # the run's (EpisodeRunner.geometry), from a host's survey
        self.recorded_geometry: Any = None

    def evaluate(self, genomes: list, champion=None, files: dict | None = None, generation: int = 0,
                 match: Match | None = None) -> tuple[list[list[float]], GenerationStats]:
        started = time.perf_counter()
        if not self._config_sent:  # hosts read it once, for their runner: parts arrive compiled
            self.hosts.prepare(dumps(RunConfigs(self.neat_config, self.configs)))
            self._config_sent = True
        parts = self.parts = split(len(genomes), self.hosts.count, self.hosts.agents())
        if self.geometry is None and needs_geometry(self.settings):
            if not self.hosts.layouts:
                raise NeatparError(f"network = {self.settings.network} lays its networks out on the game's layouts, "
                                   f"but the env host that surveyed the game was lost before it reported them: "
                                   f"check the simulator's logs and start again")
            self.geometry = geometry_of(self.settings, self.neat_config, self.hosts.layouts, self.recorded_geometry)
        waiting = deque(range(len(parts)))
        losses = [0] * len(parts)
        returns: list = [None] * len(genomes)
        stats = GenerationStats(endings=[None] * len(genomes), descriptors=[[] for _ in genomes])
        self.ran_on = {}
        compiled: dict[int, Compiled] = {}  # part -> its networks, compiled once even if its host is lost
        running = 0
        while waiting or running:
            while waiting and self.hosts.free():  # only hosts that can run a part now take one
                part = waiting.popleft()
                # Compiled here: a kernel's arrays travel far faster than genome objects.
                if part not in compiled:
                    compiled[part] = compile_generation([genomes[i] for i in parts[part]], champion, files or {},
                                                        self.settings, self.neat_config, match, self.configs,
                                                        self.geometry)._replace(parameters=self.parameters)
                self.hosts.submit(part, compiled[part], generation, part)
                running += 1
            for finished in self.hosts.wait(timeout=PROGRESS_SECONDS if self.progress else 1.0):
                running -= 1
                part, result, error = finished.ticket, finished.result, finished.error
                if isinstance(error, HostLost):
                    self._lost(part, parts[part], losses, error, generation)
                    waiting.appendleft(part)
                elif error is not None:
                    raise error
                else:
                    self.ran_on[part] = result.host
                    for i, r, ends in zip(parts[part], result.returns, result.stats.endings):
                        returns[i], stats.endings[i] = r, ends
                    for i, described in zip(parts[part], result.stats.descriptors):
                        stats.descriptors[i] = described
                    stats.add(result.stats)
            self._report(stats)
        stats.seconds = time.perf_counter() - started
        return returns, stats

    def _report(self, finished: GenerationStats) -> None:
        """The progress callback, with the finished parts' counts and the running parts' so far."""
        if self.progress is None:
            return
        running = self.hosts.progress().values()
        self.progress(GenerationStats(scored_steps=finished.scored_steps + sum(p.scored_steps for p in running),
                                      episodes=finished.episodes + sum(p.episodes for p in running)))

    def _lost(self, part: int, genome_range: range, losses: list, error: HostLost, generation: int) -> None:
        losses[part] += 1
        self.lost += 1
        if losses[part] >= MAX_HOST_LOSSES:
            raise NeatparError(
                f"part {part} of generation {generation} (genomes {genome_range.start}..{genome_range.stop - 1}) "
                f"lost its env host {losses[part]} times (last: {error}); checkpoints written so far are "
                f"intact: check the simulator's logs and resume") from None
        log.warning("generation %d: env host lost (%s); running part %d again on the next free host", generation,
                    error, part)
