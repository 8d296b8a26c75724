"""The episode runner: plays a generation of genomes on the agents of an environment.

Per step, data moves one way: the reports of every behavior (types/environment.py) -> one batched call of
the population kernel -> actions. Each configured behavior has a role: its agents are driven by
the genomes under evaluation (`population`), by the best genome found so far (`champion`, frozen
for the generation), by past champions of a self-play league (`league`: league.py plays a
generation as several Matches, one per opponent) or by a genome loaded from a file.

A genome's episode is one of the game's episodes, from the agent's first decision in it:
- An agent of a population behavior whose episode starts takes the next waiting genome (with a
  clean recurrent or CTRNN state); with no genome waiting it still acts (driven by the first
  genome), its rewards ignored.
- Its return is the sum of the rewards and group rewards that follow its actions. The episode
  ends when the game ends it (a terminal report), or when the agent has made `max_steps`
  decisions: then the return is final, and the agent keeps playing its game episode unscored
  (same genome) until the game ends it; only then does it take the next genome. So no genome
  ever inherits another's half-played episode.
- When genomes are waiting but every agent of the population behaviors is playing such an
  unscored rest, the environment is reset (every agent starts a new episode): a game whose
  episodes are long or never end still finishes each generation.
The generation ends when every genome has `episodes_per_genome` episodes.

Behaviors appear when the game first reports them (with their first agent's first decision,
whenever that is). A configured behavior that has not reported within BEHAVIOR_WAIT_STEPS
environment steps after a (re)start is an error naming the present ones; a behavior the config
does not name is warned about once and gets the environment's neutral actions (which respect the
agents' action masks, as every action sent does). A generation that makes no progress (no decision
of a scored agent, no finished episode) for STALL_STEPS environment steps stops with an error
instead of hanging.

`EnvEvaluator` (evaluator.py) wraps this as a neat-python fitness callback.
"""
from __future__ import annotations

import enum
import logging
import time
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, NamedTuple

import numpy as np

from ..config.behaviors import Role
from ..config.settings import Settings
from ..errors import ConfigError, EnvironmentMismatch, NeatparError, SimulatorError, one_line
from ..nn.mixed import MixedPopulation
from ..nn.networks import engine, run_geometry
from ..search.descriptors import DescriptorAccumulator, parse_descriptor
from ..types.environment import Batch, Environment, Layout
from ..types.stats import EpisodeEnd, GenerationStats, ScoredEpisodes
from .inference import InProcessInference

log = logging.getLogger("neatpar")
MAX_SIMULATOR_FAILURES = 3
BEHAVIOR_WAIT_STEPS = 1000   # environment steps a configured behavior may take to first report
STALL_STEPS = 1000           # environment steps without progress before a generation stops

AGGREGATES = {"mean": np.mean, "min": np.min, "max": np.max, "median": np.median, "sum": np.sum}


class Phase(enum.IntEnum):
    """Where an agent is, as the runner sees it."""
    FREE = 0       # its next decision starts an episode: it takes a genome then
    SCORED = 1     # playing a population genome's episode
    OVERTIME = 2   # past max_steps: playing the rest of its game episode, unscored
    FIXED = 3      # driven by a champion or file genome, unscored
    IDLE = 4       # no genome was left for it: acting, unscored


@dataclass(frozen=True)
class Match:
    """Who plays the behaviors the genomes under evaluation do not drive (behavior -> genome), and
    how many episodes each genome plays against them. A run's roles give one match per generation
    (`standard_match`); self-play plays a generation as several (league.py), numbered by `round`
    so that each starts from its own simulator seed. The population plays every configured
    behavior that is not an opponent."""
    opponents: Mapping[str, Any]
    episodes: int
    round: int = 0


@dataclass(frozen=True)
class Plan:
    """Who drives what in one match: population genomes are kernel indices 0..count-1; `fixed`
    maps each opponent behavior to its genome's kernel index; each genome plays `episodes`.
    `inputs` is the kernel's input width when behaviors observe different numbers of values (the
    narrower ones are padded with zeros), else 0."""
    count: int
    fixed: dict
    episodes: int = 1
    round: int = 0
    inputs: int = 0


class Agents:
    """Per-agent state in numpy rows (a row is also the agent's recurrent-state row in the kernel).
    Rows are taken by an agent's first decision and given back when its episode ends."""

    def __init__(self):
        self.rows: dict[str, dict[int, int]] = {}   # behavior -> agent id -> row
        self.free: list[int] = []
        self.phase = np.zeros(0, np.int8)
        self.genome = np.zeros(0, np.int64)
        self.ret = np.zeros(0, np.float64)
        self.decisions = np.zeros(0, np.int64)
        self.fresh = np.zeros(0, bool)             # its recurrent state must be cleared before it acts

    def clear(self) -> None:
        self.rows.clear()
        self.free = list(range(len(self.phase)))[::-1]
        self.phase[:] = Phase.FREE

    def _grow(self, need: int) -> None:
        old = len(self.phase)
        size = max(16, 2 * old, old + need)
        for name in ("phase", "genome", "ret", "decisions", "fresh"):
            array = getattr(self, name)
            grown = np.zeros(size, array.dtype)
            grown[:old] = array
            setattr(self, name, grown)
        self.free.extend(range(size - 1, old - 1, -1))

    def lookup(self, behavior: str, ids: np.ndarray) -> np.ndarray:
        """Rows of known agents, -1 for unknown ones."""
        known = self.rows.get(behavior, {})
        return np.fromiter((known.get(i, -1) for i in ids.tolist()), np.int64, len(ids))

    def take(self, behavior: str, ids: np.ndarray) -> np.ndarray:
        """Rows of `ids`, taking a FREE row for each agent seen for the first time."""
        known = self.rows.setdefault(behavior, {})
        rows = self.lookup(behavior, ids)
        new = np.flatnonzero(rows < 0)
        if len(new):
            if len(new) > len(self.free):
                self._grow(len(new) - len(self.free))
            for position in new.tolist():
                row = self.free.pop()
                known[int(ids[position])] = row
                rows[position] = row
            self.phase[rows[new]] = Phase.FREE
        return rows

    def release(self, behavior: str, ids: np.ndarray, rows: np.ndarray) -> None:
        known = self.rows.get(behavior, {})
        for agent in ids.tolist():
            known.pop(agent, None)
        self.phase[rows] = Phase.FREE
        self.free.extend(rows.tolist())

    def live(self, behaviors) -> np.ndarray:
        """Rows of the live agents of `behaviors`."""
        rows = [row for b in behaviors for row in self.rows.get(b, {}).values()]
        return np.asarray(rows, np.int64)


class Compiled(NamedTuple):
    """A generation's networks as compile_generation makes them: which network plays what, and the
    population kernel that runs them."""
    plan: Plan
    kernel: Any
    geometry: Any = None   # what the networks are laid out on (nn/networks.py: a hyperneat run's substrate)


def standard_match(settings: Settings, champion, files: dict) -> Match:
    """The match the roles give: the champion and file behaviors' genomes as opponents."""
    opponents = {r.behavior: champion if r.role is Role.CHAMPION else files[r.behavior]
                 for r in settings.behaviors if r.role in (Role.CHAMPION, Role.FILE)}
    return Match(opponents, settings.episodes_per_genome)


def compile_generation(genomes: list, champion, files: dict, settings: Settings, neat_config: Any,
                       match: Match | None = None, configs: Mapping[str, Any] | None = None,
                       geometry: Any = None) -> Compiled:
    """The population kernel of `genomes`, followed by the opponents' genomes (of `match`, else of
    the roles: the champion is the first genome before there is one), and the Plan that says which
    is which. `configs` gives the neat config of the genomes that play a behavior where it is not
    `neat_config` (an asymmetric game's populations): genomes of other configs go into a kernel of
    their own, and the kernels run as one (MixedPopulation). `geometry` is the run's (run_geometry:
    a hyperneat run's substrate, None for other kinds)."""
    if match is None:
        match = standard_match(settings, champion if champion is not None else genomes[0], files)
    configs = configs or {}
    population = [r.behavior for r in settings.behaviors if r.behavior not in match.opponents]
    groups = [(configs.get(population[0], neat_config) if population else neat_config, list(genomes))]
    places = {}
    for behavior, genome in match.opponents.items():
        config = configs.get(behavior, neat_config)
        number = next((n for n, (c, _) in enumerate(groups) if c is config), len(groups))
        if number == len(groups):
            groups.append((config, []))
        places[behavior] = (number, len(groups[number][1]))
        groups[number][1].append(genome)
    starts = np.cumsum([0] + [len(networks) for _, networks in groups])
    fixed = {behavior: int(starts[number]) + position for behavior, (number, position) in places.items()}
    if len(groups) == 1:
        kernel = population_kernel(groups[0][1], settings, groups[0][0], geometry)
        return Compiled(Plan(len(genomes), fixed, match.episodes, match.round), kernel, geometry)
    kernel = MixedPopulation([population_kernel(networks, settings, config, geometry) for config, networks in groups])
    return Compiled(Plan(len(genomes), fixed, match.episodes, match.round, kernel.num_inputs), kernel, geometry)


def population_kernel(genomes: list, settings: Settings, neat_config: Any, geometry: Any = None):
    """The population kernel of the settings' network kind for `genomes` (its engine, nn/networks.py),
    on the run's `geometry` (run_geometry)."""
    return engine(settings.network_kind).kernel(genomes, neat_config, settings, geometry)


def needs_geometry(settings: Settings) -> bool:
    """The settings' network kind lays its networks out on the game's layout (nn/networks.py)."""
    return engine(settings.network_kind).geometry is not None


def driving_behaviors(settings: Settings) -> list[str]:
    """The configured behaviors: every one is driven by a network on the run's geometry (the
    genomes', the champion's, a league's or a genome file's)."""
    return [r.behavior for r in settings.behaviors]


def geometry_of(settings: Settings, neat_config: Any, layouts: dict, recorded: Any = None) -> Any:
    """The run's geometry from the behaviors' layouts (nn/networks.py: run_geometry); a resumed
    run's must be the one it `recorded` (its run folder's substrate.json)."""
    geometry = run_geometry(settings, neat_config, layouts, driving_behaviors(settings))
    if recorded is not None and geometry != recorded:
        raise ConfigError(f"the run folder's substrate.json is not the substrate the settings and the game make now "
                          f"({_difference(recorded, geometry)}): resume with the substrate the run started with (its "
                          f"settings and coordinates file), or start a new run")
    return geometry


def _difference(old: Any, new: Any) -> str:
    """What differs between two substrates, in words (the first of sizes, activation, query, coordinates)."""
    for what in ("sizes", "activation", "query", "io"):
        if getattr(old, what) != getattr(new, what):
            return f"its {what} {getattr(old, what)} would be {getattr(new, what)}"
    return "its node coordinates differ"


class Arrivals:
    """Which behaviors have reported to a runner: the configured ones whose first report was
    checked (their layout fits the genomes), and the reported ones the config does not name
    (warned about once every configured one has come)."""

    def __init__(self, configured: Iterable[str]):
        self.configured = list(configured)
        self.checked: set[str] = set()
        self.unlisted: set[str] = set()

    def complete(self) -> bool:
        """Every configured behavior has reported."""
        return len(self.checked) == len(self.configured)

    def missing(self) -> list[str]:
        return [b for b in self.configured if b not in self.checked]

    def take_unlisted(self) -> list[str]:
        """The unlisted behaviors seen since the last call, sorted."""
        found, self.unlisted = sorted(self.unlisted), set()
        return found


class EpisodeRunner:
    """Runs generations on an environment (types/environment.py); the networks run on `inference`
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
                                      self.configs, self.network_geometry())
        returns, stats = self.play(compiled, generation, part)
        stats.seconds = time.perf_counter() - started  # the compilation included
        return returns, stats

    def play(self, compiled: Compiled, generation: int = 0, part: int = 0) -> tuple[list[list[float]], GenerationStats]:
        """`evaluate` for genomes already compiled (compile_generation): env hosts receive their
        part compiled by the main process."""
        started = time.perf_counter()
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
        seed = None
        if self.settings.seed is not None:
            seed = (self.settings.seed * 1009 + generation + part * 104729 + round_ * 7919) % 2**24
        self.environment.reset(seed)
        self.started_once = True

    def network_geometry(self) -> Any:
        """The run's geometry (nn/networks.py), made once from a survey of the environment's
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


class Generation:
    """One generation's play on the runner's environment (see the module docstring)."""

    def __init__(self, runner: EpisodeRunner, plan: Plan, returns: list[list[float]], stats: GenerationStats):
        self.runner, self.plan, self.returns, self.stats = runner, plan, returns, stats
        self.env = runner.environment
        self.settings = runner.settings
        # Genomes waiting for an episode, round by round (returns may already hold some episodes).
        self.queue = [g for round_ in range(plan.episodes) for g in range(plan.count) if len(returns[g]) <= round_]
        self.next = 0
        self.remaining = len(self.queue)  # episodes still to finish
        self.population = [b for b in runner.roles if b not in plan.fixed]
        self.agents = Agents()
        self.steps_since_start = 0
        self.steps_since_progress = 0
        self.descriptors: dict[str, DescriptorAccumulator] = {}   # population behavior -> its agents' rows

    def done(self) -> bool:
        """Every genome has its episodes."""
        return self.remaining == 0

    def finished(self) -> bool:
        """Done, and every configured behavior has reported."""
        return self.remaining == 0 and self.runner.arrivals.complete()

    def play(self) -> None:
        """Step until every genome has its episodes and every configured behavior has reported
        at least once (a generation that finishes early waits for a late behavior, within
        BEHAVIOR_WAIT_STEPS, so that a behavior that never comes is always an error)."""
        while not self.finished():
            self._check_behaviors_arrived()
            if self.steps_since_progress >= STALL_STEPS and not self.done():
                raise NeatparError(self._stall_message())
            batches = self.env.poll()
            deciding = [(b, batch) for b, batch in batches.items() if self._driven(b)]
            progress = False
            for behavior, batch in deciding:
                progress |= self._end_episodes(behavior, batch)
            if self.finished():
                break
            rows_of = {}
            for behavior, batch in deciding:
                rows_of[behavior], scored_decisions = self._decide(behavior, batch)
                progress |= scored_decisions
            self._act(deciding, rows_of)
            self._warn_unlisted()
            if self.finished():
                break
            self.steps_since_progress = 0 if progress else self.steps_since_progress + 1
            if self._everyone_in_overtime():
                self.env.reset(None)
                self.agents.clear()
                self.stats.resets += 1
            else:
                self.env.step()
            self.stats.env_steps += 1
            self.steps_since_start += 1
            if self.runner.progress is not None:
                self.runner.progress(self.stats)

    # ------------------------------------------------------------ one step

    def _driven(self, behavior: str) -> bool:
        """True for a configured behavior (checked at its first report); unlisted ones are left to
        the environment's neutral actions, with a warning."""
        runner, arrivals = self.runner, self.runner.arrivals
        if behavior not in runner.roles:
            arrivals.unlisted.add(behavior)
            return False
        if behavior not in arrivals.checked:
            layout = self.env.layout(behavior)
            runner.check_layout(behavior, layout)
            arrivals.checked.add(behavior)
            self.stats.layouts[behavior] = layout
        return True

    def _end_episodes(self, behavior: str, batch: Batch) -> bool:
        """Terminal reports: scored episodes end with their last reward; the agents' rows are freed."""
        if not len(batch.terminal_ids):
            return False
        agents = self.agents
        rows = agents.lookup(behavior, batch.terminal_ids)
        known = rows >= 0
        rows, rewards, interrupted = rows[known], batch.terminal_rewards[known], batch.interrupted[known]
        scored = agents.phase[rows] == Phase.SCORED
        finals = batch.terminal_observations
        finals = [None] * int(scored.sum()) if finals is None else finals[known][scored]
        for row, reward, cut, final in zip(rows[scored].tolist(), rewards[scored].tolist(),
                                           interrupted[scored].tolist(), finals):
            self._record(behavior, row, agents.ret[row] + reward, EpisodeEnd(reward, bool(cut)), final)
        agents.release(behavior, batch.terminal_ids[known], rows)
        return bool(scored.any())

    def _decide(self, behavior: str, batch: Batch) -> tuple[np.ndarray, bool]:
        """Decision reports: rewards to scored episodes, max_steps cuts, genomes for agents whose
        episode starts. Returns the agents' rows and whether a scored agent decided."""
        agents, max_steps = self.agents, self.settings.max_steps
        rows = agents.take(behavior, batch.decision_ids)
        if not len(rows):
            return rows, False
        scored = agents.phase[rows] == Phase.SCORED
        scored_rows, rewards = rows[scored], batch.decision_rewards[scored]
        agents.ret[scored_rows] += rewards
        at_limit = agents.decisions[scored_rows] >= max_steps
        cut = scored_rows[at_limit]
        finals = batch.observations[scored][at_limit]   # the observation the cut comes with is its last
        for row, reward, final in zip(cut.tolist(), rewards[at_limit].tolist(), finals):
            self._record(behavior, row, agents.ret[row], EpisodeEnd(reward, True), final)
            agents.phase[row] = Phase.OVERTIME
        if len(cut):
            self.runner.warn_once(
                "overtime", "an agent of %r was still in its game episode after max_steps = %d decisions: its "
                "genome's episode ends there and the agent plays the rest of the game episode unscored before it "
                "takes the next genome; set max_steps to the game's episode length (in decisions) to waste no "
                "steps", behavior, max_steps)
        starting = rows[agents.phase[rows] == Phase.FREE]
        if len(starting):
            self._assign(behavior, starting)
        scored = agents.phase[rows] == Phase.SCORED
        playing = rows[scored]
        agents.decisions[playing] += 1
        tracker = self._descriptors(behavior)
        if tracker is not None and len(playing):
            tracker.decide(playing, batch.observations[scored])
        self.stats.scored_steps += len(playing)
        if self.runner.on_decisions is not None and len(playing):
            self.runner.on_decisions(behavior, batch.decision_ids[scored], agents.genome[playing])
        return rows, bool(len(playing))

    def _assign(self, behavior: str, rows: np.ndarray) -> None:
        """Agents whose episode starts take a genome: the behavior's fixed one, or the next waiting."""
        agents = self.agents
        agents.ret[rows] = 0.0
        agents.decisions[rows] = 0
        agents.fresh[rows] = True
        fixed = self.plan.fixed.get(behavior)
        if fixed is not None:
            agents.genome[rows], agents.phase[rows] = fixed, Phase.FIXED
            return
        take = min(len(rows), len(self.queue) - self.next)
        agents.genome[rows[:take]] = self.queue[self.next:self.next + take]
        agents.phase[rows[:take]] = Phase.SCORED
        tracker = self._descriptors(behavior)
        if tracker is not None:
            tracker.clear(rows[:take])
        self.next += take
        agents.genome[rows[take:]], agents.phase[rows[take:]] = 0, Phase.IDLE

    def _descriptors(self, behavior: str) -> DescriptorAccumulator | None:
        """The descriptor tracker of a population behavior's agent rows (None without [neatpar]
        descriptor); made at its first use, for the behavior's observation width."""
        spec = self.runner.descriptor
        if spec is None or behavior in self.plan.fixed:
            return None
        tracker = self.descriptors.get(behavior)
        if tracker is None:
            try:
                bound = spec.bind(self.env.layout(behavior).inputs)
            except NeatparError as error:
                raise type(error)(f"behavior {behavior!r}: {error}") from None
            tracker = self.descriptors[behavior] = DescriptorAccumulator(bound, 0)
        tracker.grow(len(self.agents.phase))
        return tracker

    def _record(self, behavior: str, row: int, value: float, end: EpisodeEnd,
                final: np.ndarray | None = None) -> None:
        """A scored episode ends: its return and ending (and its descriptor, `final` the last
        observation when the report carries one) go to its genome."""
        genome = int(self.agents.genome[row])
        tracker = self._descriptors(behavior)
        if tracker is not None:
            finals = None if final is None else np.asarray(final)[None]
            self.stats.descriptors[genome].append(tracker.end(np.array([row]), finals)[0])
        self.returns[genome].append(float(value))
        self.stats.endings[genome].append(end)
        self.stats.episodes += 1
        episodes = self.stats.scored.setdefault(behavior, ScoredEpisodes())
        episodes.returns.append(float(value))
        episodes.lengths.append(int(self.agents.decisions[row]))
        self.remaining -= 1

    def _act(self, deciding: list, rows_of: dict) -> None:
        """One batched kernel call for every deciding agent; outputs back to each behavior."""
        parts = [(behavior, batch, rows_of[behavior]) for behavior, batch in deciding if len(rows_of[behavior])]
        if not parts:
            return
        agents = self.agents
        rows = np.concatenate([r for _, _, r in parts])
        if self.plan.inputs:   # behaviors of different widths: each padded to the kernel's
            obs = np.concatenate([_padded(b.observations, self.plan.inputs) for _, b, _ in parts])
        else:
            obs = parts[0][1].observations if len(parts) == 1 else np.concatenate([b.observations for _, b, _ in parts])
        reset = agents.fresh[rows]
        agents.fresh[rows] = False
        outputs = self.runner.inference.activate(obs, agents.genome[rows], rows, reset)
        start = 0
        for behavior, _, behavior_rows in parts:
            self.env.act(behavior, outputs[start:start + len(behavior_rows)])
            start += len(behavior_rows)
        self.stats.agent_steps += len(rows)

    # ------------------------------------------------------------ guards

    def _everyone_in_overtime(self) -> bool:
        """Genomes wait, and every live agent of the population behaviors plays an unscored rest."""
        if self.next >= len(self.queue):
            return False
        rows = self.agents.live(self.population)
        return bool(len(rows)) and bool((self.agents.phase[rows] == Phase.OVERTIME).all())

    def _warn_unlisted(self) -> None:
        """Once every configured behavior has reported (else the error that lists the present ones
        says it all), a warning for each behavior the config does not name."""
        runner = self.runner
        if runner.arrivals.unlisted and runner.arrivals.complete():
            for behavior in runner.arrivals.take_unlisted():
                runner.warn_once(f"unlisted {behavior}", "behavior %r is in the environment but not in [neatpar] "
                                 "behaviors: its agents get neutral actions (zeros; for a discrete branch, the first "
                                 "action their mask allows)", behavior)

    def _check_behaviors_arrived(self) -> None:
        if self.steps_since_start < BEHAVIOR_WAIT_STEPS:
            return
        missing = self.runner.arrivals.missing()
        if missing:
            present = sorted(set(self.env.poll()))
            raise EnvironmentMismatch(
                f"behavior {missing[0]!r} is not in the environment: no agent of it asked for a decision in "
                f"{self.steps_since_start} environment steps; it has {', '.join(repr(p) for p in present) or 'none'}: "
                f"fix [neatpar] behaviors")

    def _stall_message(self) -> str:
        waiting = len(self.queue) - self.next
        rows = self.agents.live(self.population)
        playing = int((self.agents.phase[rows] == Phase.SCORED).sum()) if len(rows) else 0
        return (f"no progress in {STALL_STEPS} environment steps: {waiting} genome episodes are waiting and "
                f"{playing} agents of the population behaviors are in a scored episode, but none of them asked "
                f"for a decision or ended an episode; check that the game's agents keep requesting decisions "
                f"(DecisionRequester) and end their episodes")


def _padded(observations: np.ndarray, width: int) -> np.ndarray:
    """Observations with zero columns added up to `width`."""
    if observations.shape[1] == width:
        return observations
    padded = np.zeros((len(observations), width), observations.dtype)
    padded[:, :observations.shape[1]] = observations
    return padded


SURVEY_STEPS = 20   # a Unity DecisionRequester's period is at most 20 academy steps


@dataclass(frozen=True)
class Survey:
    """What a short look at an environment found."""
    agents: int                  # agents of the population behaviors at once
    layouts: dict                # behavior -> Layout, of the behaviors that reported


def survey(environment: Environment, settings: Settings) -> Survey:
    """Reset, then step with neutral actions for SURVEY_STEPS steps (longer while a configured
    behavior has not reported, up to BEHAVIOR_WAIT_STEPS), counting the population behaviors'
    agents that asked for a decision and are still there, and reading every reported behavior's
    layout. Env hosts size the parts of a generation by the count; `neatpar export` without a run
    folder's record takes the layouts."""
    population = set(settings.population_behaviors)
    if not population:   # asymmetric self-play: the populations take turns on the league behaviors
        population = {settings.with_role(Role.LEAGUE)[0]}
    configured = {r.behavior for r in settings.behaviors}
    environment.reset(None)
    live: set[tuple[str, int]] = set()
    reported: set[str] = set()
    for step in range(BEHAVIOR_WAIT_STEPS):
        batches = environment.poll()
        reported.update(batches)
        for behavior in population & set(batches):
            batch = batches[behavior]
            live.difference_update((behavior, int(i)) for i in batch.terminal_ids)
            live.update((behavior, int(i)) for i in batch.decision_ids)
        if step + 1 >= SURVEY_STEPS and configured <= reported:
            break
        environment.step()
    return Survey(len(live), {b: environment.layout(b) for b in sorted(reported)})


def aggregate(episode_returns: list[float], how: str) -> float:
    return float(AGGREGATES[how](np.asarray(episode_returns, dtype=np.float64)))
