"""The episode runner: evaluates a generation of genomes on the agents of a Unity environment.

Per step, data moves one way: observations of every behavior -> one batched call of the
population kernel -> actions. Each behavior has a role: its agents are driven by the genomes under
evaluation (`population`), by the best genome found so far (`champion`, frozen for the
generation) or by a genome loaded from a file. With more genomes than agents, genomes take turns:
when an agent's episode ends, the next waiting genome takes that agent (with a clean recurrent
state); an agent with no genome left still acts, its rewards ignored. A generation ends when
every genome has finished `episodes_per_genome` episodes; its fitness is the mean (or the
configured aggregate) of its episode returns (rewards + group rewards).

`UnityEvaluator` wraps this as a neat-python fitness callback: `population.run(ev.evaluate, n)`.
"""
from __future__ import annotations

import copy
import dataclasses
import logging
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Iterable

import numpy as np
from mlagents_envs.base_env import ActionTuple
from mlagents_envs.exception import (
    UnityCommunicatorStoppedException,
    UnityEnvironmentException,
    UnityTimeOutException,
)

from . import config as run_config
from .bridge import SimulatorBridge, SimulatorError
from .config import BehaviorRole, RunConfig
from .errors import ConfigError, NeatparError
from .genome_io import load_genome
from .inference import InProcessInference, make_inference
from .nn import FeedForwardPopulation, RecurrentPopulation

log = logging.getLogger("neatpar")
MAX_SIMULATOR_FAILURES = 3
# What a simulator that dies or stops answering raises inside mlagents-envs (and the bridge).
SIMULATOR_FAILURES = (UnityEnvironmentException, UnityCommunicatorStoppedException, UnityTimeOutException,
                      SimulatorError)

AGGREGATES = {"mean": np.mean, "min": np.min, "max": np.max, "median": np.median, "sum": np.sum}


class EnvironmentMismatch(ConfigError):
    """The environment does not fit the config (behaviors, observation or action widths)."""


@dataclass
class _Agent:
    row: int                      # state row in the kernel
    genome: int | None = None     # kernel index of the genome driving it, None = idle
    scored: bool = False          # its returns count (population role)
    episode_return: float = 0.0
    steps: int = 0


@dataclass
class GenerationStats:
    agent_steps: int = 0
    env_steps: int = 0
    seconds: float = 0.0
    episodes: int = 0

    @property
    def agent_steps_per_second(self) -> float:
        return self.agent_steps / self.seconds if self.seconds > 0 else 0.0


@dataclass
class _Plan:
    """Who drives what in one generation."""
    population: list
    fixed: dict = field(default_factory=dict)   # behavior -> kernel index (champion / file genome)


def observation_width(spec) -> int:
    return sum(int(np.prod(o.shape)) for o in spec.observation_specs)


def action_width(spec) -> int:
    return spec.action_spec.continuous_size + sum(spec.action_spec.discrete_branches)


def check_behaviors(env, roles: Iterable[BehaviorRole], num_inputs: int, num_outputs: int) -> None:
    """Every configured behavior exists and fits the genomes' inputs and outputs."""
    present = list(env.behavior_specs)
    for role in roles:
        if role.behavior not in env.behavior_specs:
            raise EnvironmentMismatch(f"behavior {role.behavior!r} is not in the environment; it has "
                                      f"{', '.join(repr(p) for p in present) or 'none'}: fix [neatpar] behaviors")
        spec = env.behavior_specs[role.behavior]
        visual = [o.shape for o in spec.observation_specs if len(o.shape) > 1]
        if visual:
            raise EnvironmentMismatch(f"behavior {role.behavior!r} has visual observations {visual}: NEAT "
                                      f"networks take vector observations only")
        width = observation_width(spec)
        if width != num_inputs:
            raise EnvironmentMismatch(f"behavior {role.behavior!r} observes {width} values but the genomes "
                                      f"have num_inputs = {num_inputs}: set num_inputs = {width}")
        actions = action_width(spec)
        if actions != num_outputs:
            raise EnvironmentMismatch(
                f"behavior {role.behavior!r} takes {actions} action values ({spec.action_spec.continuous_size} "
                f"continuous, discrete branches {tuple(spec.action_spec.discrete_branches)}) but the genomes have "
                f"num_outputs = {num_outputs}: set num_outputs = {actions}")


def outputs_to_actions(spec, outputs: np.ndarray, mask) -> ActionTuple:
    """Continuous outputs clipped to [-1, 1]; per discrete branch, the argmax over allowed actions."""
    c = spec.action_spec.continuous_size
    continuous = np.clip(outputs[:, :c], -1.0, 1.0).astype(np.float32)
    branches = spec.action_spec.discrete_branches
    discrete = np.zeros((len(outputs), len(branches)), dtype=np.int32)
    start = c
    for b, size in enumerate(branches):
        scores = outputs[:, start:start + size].copy()
        if mask is not None:
            forbidden = np.asarray(mask[b], dtype=bool)
            scores[forbidden] = -np.inf
            everything_forbidden = forbidden.all(axis=1)
            scores[everything_forbidden] = 0.0
        discrete[:, b] = np.argmax(scores, axis=1)
        start += size
    return ActionTuple(continuous=continuous if c else None, discrete=discrete if branches else None)


class EpisodeRunner:
    """Runs generations on a bridge's environment (main process only); the networks run on
    `inference` (inference.py: in this process, on the pool, or whichever is faster)."""

    def __init__(self, bridge: SimulatorBridge, run: RunConfig, neat_config: Any, inference=None):
        self.bridge, self.run, self.neat_config = bridge, run, neat_config
        self.inference = inference or InProcessInference()
        self.kernel_type = RecurrentPopulation if run.network == "recurrent" else FeedForwardPopulation
        gc = neat_config.genome_config
        self.num_inputs, self.num_outputs = gc.num_inputs, gc.num_outputs
        self._checked = False
        self.relaunches = 0
        self.heartbeat = None  # called once per environment step (env hosts report progress with it)

    def evaluate(self, genomes: list, champion=None, files: dict | None = None,
                 generation: int = 0, part: int = 0) -> tuple[list[list[float]], GenerationStats]:
        """Episode returns of each genome in `genomes` (list of genome objects).

        `part` numbers the share of a generation this call evaluates (env hosts evaluate a
        generation in parts); with a seed, the simulator is reseeded from (seed, generation, part)
        so a part's returns do not depend on which host ran it.

        A simulator that dies or stops answering mid-generation is relaunched (after 0.5, 1 s):
        episodes already finished are kept, interrupted ones are played again. After
        MAX_SIMULATOR_FAILURES failures in one generation the run stops with a SimulatorError."""
        started = time.perf_counter()
        plan, kernel = self._compile(genomes, champion, files or {})
        self.inference.install(kernel)
        returns: list[list[float]] = [[] for _ in genomes]
        stats = GenerationStats()
        failures = 0
        while True:
            try:
                env = self._start_generation(generation, part)
                self._play(env, plan, returns, stats)
                break
            except SIMULATOR_FAILURES as error:
                failures += 1
                self.bridge.close()
                if self.bridge.launches == 0:  # it never started: relaunching cannot help
                    raise
                if failures >= MAX_SIMULATOR_FAILURES:
                    raise SimulatorError(
                        f"the simulator failed {failures} times in generation {generation} (last: "
                        f"{' '.join(str(error).split())}); checkpoints written so far are intact: fix the "
                        f"environment and resume") from None
                self.relaunches += 1
                log.warning("generation %d: the simulator failed (%s); relaunching it", generation, error)
                time.sleep(0.5 * 2 ** (failures - 1))
        stats.seconds = time.perf_counter() - started
        return returns, stats

    def _start_generation(self, generation: int, part: int):
        env = self.bridge.env  # launched on first use, and again after a failure
        if self.run.seed is not None:
            self.bridge.set_parameter("seed", float((self.run.seed * 1009 + generation + part * 104729) % 2**24))
        env.reset()
        if not self._checked:
            check_behaviors(env, self.run.behaviors, self.num_inputs, self.num_outputs)
            self._checked = True
        return env

    def _compile(self, genomes: list, champion, files: dict):
        networks = list(genomes)
        fixed = {}
        for role in self.run.behaviors:
            if role.role == "champion":
                fixed[role.behavior] = len(networks)
                networks.append(champion if champion is not None else genomes[0])
            elif role.role == "file":
                fixed[role.behavior] = len(networks)
                networks.append(files[role.behavior])
        return _Plan(list(range(len(genomes))), fixed), self.kernel_type.create(networks, self.neat_config)

    def _play(self, env, plan: _Plan, returns: list[list[float]], stats: GenerationStats) -> None:
        """Play until every genome has its episodes in `returns` (which may hold some already)."""
        run = self.run
        missing = [run.episodes_per_genome - len(r) for r in returns]
        waiting = deque(g for round_ in range(run.episodes_per_genome) for g in plan.population
                        if missing[g] > round_)
        count = len(returns)
        agents: dict[tuple[str, int], _Agent] = {}
        specs = {role.behavior: env.behavior_specs[role.behavior] for role in run.behaviors}
        step_limit = stats.env_steps + run.max_steps * (run.episodes_per_genome * count + 2) + 1000

        def finish(agent: _Agent) -> None:
            if agent.scored and agent.genome is not None:
                returns[agent.genome].append(agent.episode_return)
                stats.episodes += 1
            agent.genome, agent.scored = None, False

        def assign(agent: _Agent, behavior: str) -> None:
            agent.episode_return, agent.steps = 0.0, 0
            if behavior in plan.fixed:
                agent.genome, agent.scored = plan.fixed[behavior], False
            elif waiting:
                agent.genome, agent.scored = waiting.popleft(), True
            resets.add(agent.row)  # a new episode starts from a clean recurrent state

        while any(len(r) < run.episodes_per_genome for r in returns):
            if stats.env_steps >= step_limit:
                raise NeatparError(f"no episode ended in {step_limit} steps: set [neatpar] max_steps, or make "
                                   f"the environment end its episodes")
            rows, obs, index, resets, decisions = [], [], [], set(), {}
            for behavior, spec in specs.items():
                decision, terminal = env.get_steps(behavior)
                decisions[behavior] = decision
                for i, agent_id in enumerate(terminal.agent_id):
                    agent = agents.get((behavior, int(agent_id)))
                    if agent is not None:
                        agent.episode_return += float(terminal.reward[i] + terminal.group_reward[i])
                        finish(agent)
                for i, agent_id in enumerate(decision.agent_id):
                    key = (behavior, int(agent_id))
                    agent = agents.get(key)
                    if agent is None:
                        agent = agents[key] = _Agent(row=len(agents))
                    if agent.genome is not None and agent.steps > 0:  # the reward of its last action
                        agent.episode_return += float(decision.reward[i] + decision.group_reward[i])
                    if agent.genome is not None and agent.steps >= run.max_steps:
                        finish(agent)  # cut by the runner's step limit
                    if agent.genome is None:
                        assign(agent, behavior)
                    agent.steps += 1
                    rows.append(agent.row)
                    index.append(agent.genome if agent.genome is not None else 0)
                if len(decision):
                    obs.append(np.concatenate([o.reshape(len(decision), -1) for o in decision.obs], axis=1))
            if rows:
                rows_array = np.asarray(rows, dtype=np.int64)
                outputs = self.inference.activate(np.concatenate(obs), np.asarray(index, dtype=np.int64),
                                                  rows_array, np.isin(rows_array, list(resets)))
                start = 0
                for behavior, spec in specs.items():
                    decision = decisions[behavior]
                    n = len(decision)
                    if n:
                        env.set_actions(behavior, outputs_to_actions(spec, outputs[start:start + n], decision.action_mask))
                    start += n
                stats.agent_steps += len(rows)
            env.step()
            stats.env_steps += 1
            if self.heartbeat is not None:
                self.heartbeat()


def make_bridge(run: RunConfig, log_folder: str | None, worker_id: int | None = None,
                allow_child: bool = False) -> SimulatorBridge:
    """The bridge to the simulator a run configures (nothing connects until first use)."""
    return SimulatorBridge(
        run.env, args=run.env_args, no_graphics=run.no_graphics, time_scale=run.time_scale, timeout=run.timeout,
        log_folder=log_folder, seed=run.seed or 0, env_parameters=run.env_parameters,
        worker_id=run.worker_id if worker_id is None else worker_id, allow_child=allow_child)


def aggregate(episode_returns: list[float], how: str) -> float:
    return float(AGGREGATES[how](np.asarray(episode_returns, dtype=np.float64)))


class UnityEvaluator:
    """A neat-python fitness callback that evaluates genomes in a Unity (or simulator) environment.

    evaluator = UnityEvaluator("unity_builds/ball", {"Ball3D?team=0": "population"}, max_steps=300)
    winner = population.run(evaluator.evaluate, 30)
    evaluator.close()   # or use a with block

    The environment is created lazily by the first evaluate(), in this (main) process only.
    `champion` is the best genome seen so far; behaviors with the champion role play against it.
    """

    def __init__(self, env: str | None, behaviors, *, max_steps: int = 1000, episodes_per_genome: int = 1,
                 network: str = "feedforward", fitness: str = "mean", seed: int | None = None,
                 env_args=(), time_scale: float = 20.0, no_graphics: bool = True, timeout: float = 60.0,
                 log_folder: str | None = None, worker_id: int = 0, env_parameters=(), inference: str = "inprocess",
                 workers: int = 2, envs: int = 1, backend: str = "local", address: str | None = None,
                 _run: RunConfig | None = None):
        self.run = _run or RunConfig(
            env=env, behaviors=_roles(behaviors), env_args=tuple(env_args), max_steps=max_steps,
            episodes_per_genome=episodes_per_genome, network=network, fitness=fitness, seed=seed,
            time_scale=time_scale, no_graphics=no_graphics, timeout=timeout, worker_id=worker_id,
            env_parameters=tuple(dict(env_parameters).items()), inference=inference, workers=workers,
            envs=envs, backend=backend, address=address)
        _validate(self.run)
        self.bridge = make_bridge(self.run, log_folder)
        self.files = {r.behavior: load_genome(r.genome_file) for r in self.run.behaviors if r.role == "file"}
        self.champion = None
        self.generation = 0
        self.last_stats = GenerationStats()
        self.episode_returns: dict[int, list[float]] = {}
        self._runner: EpisodeRunner | None = None
        self._inference = None  # created with the first runner, in this (main) process
        self._hosts = None      # env hosts (envs > 1 or backend = ray), started by the first evaluate

    @classmethod
    def from_config(cls, path: str, log_folder: str | None = None, **overrides) -> "UnityEvaluator":
        """Build from the [neatpar] section of a neat-python config file; keyword arguments
        override its keys (e.g. `envs=4`)."""
        _, run = run_config.load(path)
        unknown = sorted(set(overrides) - {f.name for f in dataclasses.fields(RunConfig)})
        if unknown:
            raise ConfigError(f"from_config: unknown setting {unknown[0]!r}; the [neatpar] keys are the settings")
        run = dataclasses.replace(run, **overrides)
        return cls(run.env, run.behaviors, log_folder=log_folder, _run=run)

    @property
    def hosted(self) -> bool:
        """True when env hosts (processes or Ray actors) own the simulators, not this process."""
        return self.run.envs > 1 or self.run.backend == "ray"

    def evaluate(self, genomes: list, config: Any) -> None:
        """neat-python's fitness callback: sets genome.fitness for every (key, genome) pair."""
        pairs = list(genomes)
        objects = [g for _, g in pairs]
        if self._runner is None or self._runner.neat_config is not config:
            self._runner = self._make_runner(config)
        returns, self.last_stats = self._runner.evaluate(objects, self.champion, self.files, self.generation)
        self.episode_returns = {}
        for (key, genome), episode_returns in zip(pairs, returns):
            genome.fitness = aggregate(episode_returns, self.run.fitness)
            self.episode_returns[key] = episode_returns
        best = max(objects, key=lambda g: g.fitness)
        if self.champion is None or best.fitness > self.champion.fitness:
            self.champion = copy.deepcopy(best)
        self.generation += 1

    def play(self, genome, config: Any, episodes: int = 1) -> list[float]:
        """`episodes` episode returns of one genome (the champion role, if any, is the genome itself)."""
        run = dataclasses.replace(self.run, episodes_per_genome=episodes)
        returns, self.last_stats = EpisodeRunner(self.bridge, run, config).evaluate(
            [genome], self.champion or genome, self.files, self.generation)
        return returns[0]

    def _make_runner(self, config: Any):
        if not self.hosted:
            return EpisodeRunner(self.bridge, self.run, config, self.inference)
        from .hosts import HostScheduler
        if self._hosts is None:
            self._hosts = start_hosts(self.run, self.bridge.log_folder)
        return HostScheduler(self._hosts, config)

    @property
    def hosts_note(self) -> str:
        if not self.hosted:
            return "simulator: 1, in the main process"
        where = "Ray actors" if self.run.backend == "ray" else "local processes"
        return f"simulators: {self.run.envs}, each in its own env host ({where})"

    @property
    def inference(self):
        """Where the networks run ([neatpar] inference); its pool starts with the first use."""
        if self._inference is None:
            self._inference = make_inference(self.run.inference, self.run.workers, timeout=self.run.timeout)
        return self._inference

    @property
    def inference_note(self) -> str:
        """Which inference runs, and for auto why (after the first step)."""
        reason = getattr(self._inference, "reason", "")
        if reason:
            return reason
        if self.run.inference == "pool":
            return f"inference: pool ({self.run.workers} workers)"
        return f"inference: {self.run.inference}"

    def close(self) -> None:
        try:
            if self._inference is not None:
                self._inference.close()
                self._inference = None
        finally:
            hosts, self._hosts = self._hosts, None
            try:
                if hosts is not None:
                    hosts.close()
            finally:
                self.bridge.close()

    def __enter__(self) -> "UnityEvaluator":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __reduce__(self):
        return self.bridge.__reduce__()


def start_hosts(run: RunConfig, log_folder: str | None):
    """The env hosts a run asks for: local processes or Ray actors, one simulator each."""
    from .hosts import HostSetup, LocalHosts
    setup = HostSetup(run, log_folder)
    if run.backend == "ray":
        from .ray_backend import RayHosts
        return RayHosts(setup, run.envs, run.address)
    return LocalHosts(setup, run.envs)


def _roles(behaviors) -> tuple[BehaviorRole, ...]:
    if isinstance(behaviors, str):
        return run_config._parse_behaviors(behaviors, ".")
    if isinstance(behaviors, dict):
        return run_config._parse_behaviors(", ".join(f"{k}: {v}" for k, v in behaviors.items()), ".")
    return tuple(behaviors)


def _validate(run: RunConfig) -> None:
    if run.fitness not in AGGREGATES:
        raise ConfigError(f"fitness = {run.fitness!r}: use one of {', '.join(AGGREGATES)}")
    if run.network not in run_config.NETWORKS:
        raise ConfigError(f"network = {run.network!r}: use one of {', '.join(run_config.NETWORKS)}")
    if run.inference not in run_config.INFERENCE:
        raise ConfigError(f"inference = {run.inference!r}: use one of {', '.join(run_config.INFERENCE)}")
    if not isinstance(run.workers, int) or run.workers < 1:
        raise ConfigError(f"workers = {run.workers!r}: use a positive integer")
    if not isinstance(run.envs, int) or run.envs < 1:
        raise ConfigError(f"envs = {run.envs!r}: use a positive integer")
    if run.backend not in run_config.BACKENDS:
        raise ConfigError(f"backend = {run.backend!r}: use one of {', '.join(run_config.BACKENDS)}")
    if run.envs > 1 or run.backend == "ray":
        if run.env is None:
            raise ConfigError("env = editor connects to the one Unity Editor: env hosts (envs > 1 or backend = ray) "
                              "each launch a build; set env to a build path or envs = 1")
        if run.inference == "pool":
            raise ConfigError("inference = pool with env hosts: each host runs its networks in its own process; "
                              "set inference = inprocess (or envs = 1)")
    if run.address is not None and run.backend != "ray":
        raise ConfigError(f"address = {run.address} names a Ray cluster: use it with backend = ray (--backend ray)")
    if run.backend == "ray":
        from .ray_backend import require_ray
        require_ray()
    for name, value in (("max_steps", run.max_steps), ("episodes_per_genome", run.episodes_per_genome)):
        if not isinstance(value, int) or value < 1:
            raise ConfigError(f"{name} = {value!r}: use a positive integer")
