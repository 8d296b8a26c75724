"""The episode runner: plays generations of genomes on an environment's agents (generation.py steps
each), restarting a simulator that fails mid-generation; evaluators and env hosts call it."""
from __future__ import annotations

import logging
import time
from typing import Any, Callable, Mapping

import numpy as np

from ..config.parameter_file import moved_draws
from ..config.settings_model import Settings
from ..environment import Environment, Layout
from ..errors import EnvironmentMismatch, SimulatorError, one_line
from ..generation_stats import GenerationStats
from ..search.descriptors import parse_descriptor
from .arrivals import Arrivals
from .generation import Generation
from .generation_plan import Compiled, Match, compile_generation, geometry_of, needs_geometry
from .inference import InProcessInference
from .survey import survey

log = logging.getLogger("neatpar")
MAX_SIMULATOR_FAILURES = 3


def simulator_seed(seed: int | None, generation: int, part: int = 0, round_: int = 0) -> int | None:
    """The seed the environment is reset with for a part of a generation's match (None: unseeded)."""
    if seed is None:
        return None
    return (seed * 1009 + generation + part * 104729 + round_ * 7919) % 2**24


class EpisodeRunner:
    """Runs generations on an environment (environment.py); the networks run on `inference`
    (inference.py: in this process, on the pool, or whichever is faster)."""

    def __init__(self, environment: Environment, settings: Settings, neat_config: Any, inference=None,
                 configs: Mapping[str, Any] | None = None):
        self.environment, self.settings, self.neat_config = environment, settings, neat_config
        # The neat config of the genomes that play a behavior, where it is not neat_config (the
        # populations of an asymmetric game, compile_generation).
        self.configs = dict(configs or {})
        self.inference = inference or InProcessInference()
        self.roles = {r.behavior: r for r in settings.behaviors}
        # Called once per step with the generation's stats so far (progress bars; env hosts report
        # that they are alive and how far they are with it).
        self.progress: Callable[[GenerationStats], None] | None = None
        # Called at each step with a behavior's agents that decide in a scored episode, their ids
        # and the genomes (indices) they play, before they act: a clip takes their pictures there.
        self.on_decisions: Callable[[str, np.ndarray, np.ndarray], None] | None = None
        self.arrivals = Arrivals(self.roles)   # checked again after a simulator restart
        # [neatpar] descriptor: each scored episode's behaviour descriptor, read from the
        # population agents' observations (GenerationStats.descriptors)
        self.descriptor = parse_descriptor(settings.descriptor) if settings.descriptor else None
        # What the networks are laid out on (a hyperneat run's substrate): made from the layouts
        # of a survey before the first generation (or given), None for kinds without one.
        self.geometry: Any = None
        self.recorded_geometry: Any = None   # a resumed run's (geometry_of)
        self._warned: set[str] = set()
        self.started_once = False   # the environment has reset successfully at least once
        # The environment parameters' values every part is played with (curriculum.py: the
        # current lessons'), None without a parameter file.
        self.parameters: Mapping[str, Any] | None = None

    def evaluate(self, genomes: list, champion=None, files: dict | None = None, generation: int = 0,
                 part: int = 0, match: Match | None = None) -> tuple[list[list[float]], GenerationStats]:
        """Episode returns of each genome in `genomes` (genome objects), and the stats; the
        opponents are those of `match`, else of the roles (champion, files).

        `part` numbers the share of a generation this call evaluates (env hosts evaluate a
        generation in parts); with a seed, the environment is reseeded from (seed, generation,
        part, the match's round) so a part's returns do not depend on which host ran it.

        An environment that dies or stops answering mid-generation is restarted (after 0.5, 1 s):
        episodes already finished are kept, interrupted ones are played again. After
        MAX_SIMULATOR_FAILURES failures in one generation the run stops with a SimulatorError."""
        started = time.perf_counter()
        compiled = compile_generation(genomes, champion, files or {}, self.settings, self.neat_config, match,
                                      self.configs, self.network_geometry())._replace(parameters=self.parameters)
        returns, stats = self.play(compiled, generation, part)
        stats.seconds = time.perf_counter() - started  # the compilation included
        return returns, stats

    def play(self, compiled: Compiled, generation: int = 0, part: int = 0) -> tuple[list[list[float]], GenerationStats]:
        """`evaluate` for genomes already compiled (compile_generation): env hosts receive their
        part compiled by the main process, with the environment parameters' values to play it with."""
        started = time.perf_counter()
        if compiled.parameters is not None:   # sent before the part's reset, as ML-Agents sends them
            # a generation's first round as the trainer sends them; its other rounds (self-play's
            # matches, the winner's check on fresh episodes) with the samplers' seeds moved on
            offset = simulator_seed(0, generation, part, compiled.plan.round) if compiled.plan.round else 0
            self.environment.set_parameters(moved_draws(compiled.parameters, offset))
        plan, kernel = compiled.plan, compiled.kernel
        if compiled.geometry is not None:
            self.geometry = compiled.geometry
        self.inference.install(kernel)
        returns: list[list[float]] = [[] for _ in range(plan.count)]
        stats = GenerationStats(endings=[[] for _ in range(plan.count)], descriptors=[[] for _ in range(plan.count)])
        self.environment.take_game_stats()  # what the game recorded before this generation is not its
        failures = 0
        while True:
            try:
                self.environment.expect(sum(max(0, plan.episodes - len(r)) for r in returns))
                self._start(generation, part, plan.round)
                Generation(self, plan, returns, stats).play()
                break
            except SimulatorError as error:
                failures += 1
                self.environment.close()
                self.arrivals.checked.clear()
                if not self.started_once:  # it never started: restarting cannot help
                    raise
                if failures >= MAX_SIMULATOR_FAILURES:
                    raise SimulatorError(
                        f"the simulator failed {failures} times in generation {generation} (last: "
                        f"{one_line(error)}); checkpoints written so far are intact: fix the "
                        f"environment and resume") from None
                log.warning("generation %d: the simulator failed (%s); relaunching it", generation, error)
                time.sleep(0.5 * 2 ** (failures - 1))
        stats.game.record(self.environment.take_game_stats(), part)
        stats.seconds = time.perf_counter() - started
        return returns, stats

    def _start(self, generation: int, part: int, round_: int = 0) -> None:
        self.environment.reset(simulator_seed(self.settings.seed, generation, part, round_))
        self.started_once = True

    def network_geometry(self) -> Any:
        """The run's geometry (nn/network_engines.py), made once from a survey of the environment's
        layouts (None for kinds without one)."""
        if self.geometry is None and needs_geometry(self.settings):
            layouts = survey(self.environment, self.settings).layouts
            self.geometry = geometry_of(self.settings, self.neat_config, layouts, self.recorded_geometry)
        return self.geometry

    def check_layout(self, behavior: str, layout: Layout) -> None:
        """A configured behavior's first report: its sizes must fit the genomes that play it (or
        the run's geometry, which the genomes' networks are laid out on)."""
        if self.geometry is not None:
            if (layout.inputs, layout.outputs) != (self.geometry.num_inputs, self.geometry.num_outputs):
                raise EnvironmentMismatch(
                    f"behavior {behavior!r} observes {layout.inputs} values and takes {layout.outputs} action values "
                    f"({layout.describe_actions()}) but the run's {self.settings.network} networks are laid out for "
                    f"{self.geometry.num_inputs} and {self.geometry.num_outputs}: play it with the game the run "
                    f"started with")
            return
        gc = self.configs.get(behavior, self.neat_config).genome_config
        if layout.inputs != gc.num_inputs:
            raise EnvironmentMismatch(f"behavior {behavior!r} observes {layout.inputs} values but the genomes have "
                                      f"num_inputs = {gc.num_inputs}: set num_inputs = {layout.inputs} (sensor "
                                      f"sizes {list(layout.observation_sizes)})")
        if layout.outputs != gc.num_outputs:
            raise EnvironmentMismatch(
                f"behavior {behavior!r} takes {layout.outputs} action values ({layout.describe_actions()}) but "
                f"the genomes have num_outputs = {gc.num_outputs}: set num_outputs = {layout.outputs}")

    def warn_once(self, key: str, message: str, *args) -> None:
        if key not in self._warned:
            self._warned.add(key)
            log.warning(message, *args)
