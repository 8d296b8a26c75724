"""EnvEvaluator: a neat-python fitness callback that plays genomes in an environment (a Unity
build or copies of a Gymnasium environment), either in this process or on env hosts (several
environments, local processes or Ray actors). `UnityEvaluator` is the same class under its
earlier name.
"""
from __future__ import annotations

import copy
import dataclasses
import time
from typing import Any, Callable, Mapping

import numpy as np

from ..config.behaviors import Role
from ..config.files import load
from ..config.readers import Source
from ..config.settings_model import Settings
from ..errors import LiveHandleError, NeatparError
from ..search.results import Best, Outcome, SearchStats
from ..search.strategy import Search, make_search, restore
from ..genome_file import load_genome
from ..run_state import RunState
from ..generation_stats import GenerationStats
from .environments import check_environment, gym_setup, open_environment
from .hosts import HostScheduler, HostSetup
from .local_hosts import LocalHosts
from .ray_hosts import RayHosts
from .inference import make_inference
from .league import SelfPlay
from .curriculum import Curriculum
from .aggregates import aggregate
from .generation_plan import Match, standard_match
from .runner import EpisodeRunner, simulator_seed
from .validation import VALIDATION_ROUND, ValidationState, WinnerPin, WinnerValidation


class EnvEvaluator:
    """Evaluates genomes on the agents of an environment; `population.run(ev.evaluate, n)`.

        evaluator = EnvEvaluator("gymnasium:LunarLander-v3", agents=32, max_steps=1000)
        evaluator = EnvEvaluator("unity_builds/ball", {"Ball3D?team=0": "population"}, max_steps=300)
        winner = population.run(evaluator.evaluate, 30)
        evaluator.close()   # or use a with block

    Keyword arguments are the settings of neatpar.Settings (the keys of a config file's
    [neatpar] section), checked the same way. `EnvEvaluator.from_config(path, **changes)` reads
    them from a config file, `EnvEvaluator.from_settings(settings)` takes them ready-made.
    `behaviors` is required for Unity builds; a Gymnasium environment has one behavior, its copies.

    The environment is created lazily by the first evaluate(), in this (main) process only, or
    by env hosts when envs > 1 or backend = ray (then this process never creates one). Simulator
    logs go to `log_folder`, which may be set until then. `champion` is the best genome seen so far;
    behaviors with the champion role play against it. With league roles, `selfplay` holds the
    leagues (league.py): each generation is played in rounds against opponents drawn from them.
    With two league behaviors (an asymmetric game) each is a population of its own: `configs`
    maps each to its population's neat config, and each generation's genomes must be those of the
    population whose turn it is (neatpar evolve takes the turns, run/alternation.py).

    Each generation is scored through the search `[neatpar] search` names (`search`,
    search/strategy.py): `genome.fitness` becomes what selection climbs (the fitness itself,
    novelty, a blend), the true fitness of the last generation is `fitness` (key -> value) and the
    champion is the genome of the best true fitness seen. A run with search = map-elites breeds
    from the search's archive: its neat config's reproduction is MapElitesReproduction, and
    `attach(population)` gives it the archive (after each population made or restored).

    A run that continues (from a checkpoint) or reports progress says so once, before its first
    generation, with `begin_run`; `run_state()` is what a checkpoint keeps of the evaluator.
    """

    def __init__(self, env: Any, behaviors=None, *, log_folder: str | None = None, **settings: Any):
        self._setup(Settings.create({"env": env, "behaviors": behaviors, **settings}), log_folder)

    @classmethod
    def from_settings(cls, settings: Settings, log_folder: str | None = None,
                      configs: Mapping[str, Any] | None = None, display=None) -> "EnvEvaluator":
        """An evaluator for ready-made settings (e.g. `neatpar.settings.load(path)[1]`); `configs`
        are an asymmetric game's populations' neat configs (behavior -> config); `display` (a
        Unity build's `envs.unity.bridge.Display`) launches this process's game with graphics, in
        a window, at real-time speed, for a person to watch."""
        evaluator = cls.__new__(cls)
        evaluator._setup(settings, log_folder, configs)
        evaluator.display = display
        return evaluator

    @classmethod
    def from_config(cls, path: str, log_folder: str | None = None, **changes: Any) -> "EnvEvaluator":
        """Settings from the [neatpar] section of a neat-python config file; keyword arguments
        change them (e.g. `envs=4`)."""
        _, settings = load(path)
        return cls.from_settings(settings.with_changes(Source.KEYWORD, **changes), log_folder)

    def _setup(self, settings: Settings, log_folder: str | None, configs: Mapping[str, Any] | None = None) -> None:
        check_environment(settings)
        self.settings = settings
        self.log_folder = log_folder
        self._environment = None
        self.files = {r.behavior: load_genome(r.genome_file) for r in settings.behaviors if r.role is Role.FILE}
        self.champion = None
        self.generation = 0
        self.selfplay = SelfPlay(settings) if settings.with_role(Role.LEAGUE) else None
        self.configs: dict = dict(configs or {})   # behavior -> its population's neat config (asymmetric self-play)
        self.last_stats = GenerationStats()
        self.episode_returns: dict[int, list[float]] = {}
        self.search: Search = search_of(settings)
        self.search_stats: SearchStats | None = None   # the last generation's
        self.validation = WinnerValidation(settings.winner_candidates, settings.winner_episodes,
                                           settings.winner_interval, settings.fitness)
        self.fitness: dict[int, float] = {}            # the last generation's true fitness, by genome key
        # The environment parameters' lessons (a parameter file's; empty without one): curriculum.py.
        self.curriculum = Curriculum(settings.env_parameters if not isinstance(settings.env_parameters, tuple)
                                     else None, settings.seed, list(settings.population_behaviors))
        self._runner = None
        self.progress = None  # called during evaluate() with the generation's stats so far
        self._inference = None  # created with the first runner, in this (main) process
        self._hosts = None      # env hosts (envs > 1 or backend = ray), started by the first evaluate
        self.display = None     # a Unity game's window, for a person to watch (from_settings)
        # A resumed run's geometry as its folder recorded it (substrate.json): the runner refuses another.
        self.recorded_geometry = None

    def begin_run(self, log_folder: str | None, progress: Callable[[GenerationStats], None] | None = None,
                  state: RunState | None = None, source: str = "the checkpoint") -> None:
        """Before a run's first generation: where the simulators' logs go, the callback that sees
        each generation's stats so far, and, for a run that continues, the state it continues
        from (`source` names it in errors: leagues of another run are refused)."""
        self.log_folder, self.progress = log_folder, progress
        if state is not None:
            self.champion, self.generation = state.champion, state.generation
            if state.selfplay is not None and self.selfplay is not None:
                self.selfplay.restore(state.selfplay, source)
            if state.search is not None:
                self.search = restore(state.search)
            self.validation.restore(getattr(state, "validation", None))   # None in earlier checkpoints
            self.curriculum.restore(getattr(state, "curriculum", None))

    def attach(self, population) -> None:
        """Bind the search to a neat.Population just made or restored (MAP-Elites' reproduction
        breeds from the search's archive), and make its `run` return the winner chosen on fresh
        episodes (winner_episodes > 0; validation.py)."""
        self.search.attach(population)
        if self.validation.enabled and self.selfplay is None and \
                not any(isinstance(r, WinnerPin) for r in population.reporters.reporters):
            population.add_reporter(WinnerPin(population, self.validation, self.check_winner))

    def run_state(self) -> RunState:
        """What a checkpoint keeps of this evaluator (see RunState)."""
        return RunState(self.champion, self.generation, None if self.selfplay is None else self.selfplay.state(),
                        self.search.state(), self.validation.state, self.curriculum.record())

    @property
    def environment(self):
        """This process's environment (environment.py), created on first use; never with env hosts."""
        if self._environment is None:
            self._environment = open_environment(self.settings, self.log_folder, display=self.display)
        return self._environment

    @property
    def hosted(self) -> bool:
        """True when env hosts (processes or Ray actors) own the simulators, not this process."""
        return self.settings.hosted

    def evaluate(self, genomes: list, config: Any) -> None:
        """neat-python's fitness callback: sets genome.fitness for every (key, genome) pair."""
        pairs = list(genomes)
        objects = [g for _, g in pairs]
        if self._runner is None or not any(c is config for c in (self._runner.neat_config, *self.configs.values())):
            self.settings.check_neat_config(config)
            self._runner = self._make_runner(config)
        self._runner.progress = self.progress
        self._runner.parameters = self.curriculum.values()   # the lessons this generation plays
        if self.curriculum.take_beginning():   # scores of earlier lessons are not this task's
            self.champion = None
            self.validation.restore(ValidationState())
        if self.selfplay is None:
            returns, self.last_stats = self._runner.evaluate(objects, self.champion, self.files, self.generation)
        else:
            side = self.selfplay.learner(self.generation)
            if self.selfplay.asymmetric and self.configs.get(side) is not config:
                raise NeatparError(f"generation {self.generation} is the turn of {side!r}'s population (team_change = "
                                   f"{self.settings.team_change}), but these genomes have another neat config: "
                                   f"evaluate each population in its turns, with its own config (evaluator.configs)")
            self.selfplay.start(side, objects[0])
            champion = self.champion or objects[0]
            played = self.selfplay.play(self._round, objects, side, champion, self.files)
            returns, self.last_stats = played.returns, played.stats
        self.episode_returns = {}
        described = self.last_stats.descriptors
        outcomes = {}
        for i, ((key, genome), episode_returns) in enumerate(zip(pairs, returns)):
            descriptor = np.mean(np.asarray(described[i]), axis=0) if i < len(described) and described[i] else None
            outcomes[key] = Outcome(aggregate(episode_returns, self.settings.fitness), descriptor)
            self.episode_returns[key] = episode_returns
        self.search_stats = self.search.score(pairs, outcomes, self.generation)
        self.fitness = {key: outcome.fitness for key, outcome in outcomes.items()}
        found = self.search.best
        if self.curriculum:   # this generation's best: the search's best seen may be of earlier lessons
            key = max(self.fitness, key=self.fitness.get)
            found = Best(dict(pairs)[key], self.fitness[key], None, self.generation)
        if self.champion is None or found.fitness > self.champion.fitness:
            self.champion = copy.deepcopy(found.genome)
            self.champion.fitness = found.fitness   # its true fitness (genome.fitness is what selection climbs)
        best = max(objects, key=lambda g: g.fitness)
        best_key = max(self.fitness, key=self.fitness.get)   # the generation's champion, by true fitness
        champion_returns = self.episode_returns[best_key]
        self.curriculum.end_generation(self.generation, self.settings.generations,
                                       float(np.mean(champion_returns)) if champion_returns else None)
        if self.selfplay is not None:
            games = self.selfplay.rating_games(self._round, best, side, played.rounds, champion, self.files)
            self.selfplay.record(side, games, best)
        self.generation += 1
        self.validation.seconds = 0.0
        if self.selfplay is None and self.validation.enabled:
            self.validation.offer([(genome, self.fitness[key]) for key, genome in pairs])
            if self.validation.due(self.generation - 1):
                self.check_winner()

    def check_winner(self) -> None:
        """Play the candidates offered since the last check and the winner on fresh episodes, now
        (validation.py); a run's end calls it for the candidates of its last generations."""
        if self._runner is None or not self.validation.state.pending:
            return
        started = time.perf_counter()
        generation = self.generation - 1
        opponents = standard_match(self.settings, self.champion, self.files).opponents

        def play(genomes: list, episodes: int) -> tuple[list[list[float]], int | None]:
            progress, self._runner.progress = self._runner.progress, None
            try:
                returns, _ = self._runner.evaluate(genomes, self.champion, self.files, generation,
                                                   match=Match(opponents, episodes, VALIDATION_ROUND))
            finally:
                self._runner.progress = progress
            return returns, simulator_seed(self.settings.seed, generation, 0, VALIDATION_ROUND)

        self.validation.check(play, generation)
        self.validation.seconds += time.perf_counter() - started

    def _round(self, genomes: list, match: Match, so_far: GenerationStats | None) -> tuple:
        """One match of a self-play generation; progress counts the rounds before it too (rating
        games, with `so_far` None, show none)."""
        progress = self.progress
        self._runner.progress = None
        if progress is not None and so_far is not None:
            self._runner.progress = lambda stats: progress(GenerationStats(
                scored_steps=so_far.scored_steps + stats.scored_steps, episodes=so_far.episodes + stats.episodes))
        return self._runner.evaluate(genomes, generation=self.generation, match=match)

    def final_round_robin(self) -> None:
        """A self-play run's end: its leagues' members play each other, and their results choose
        the winners (league.py); nothing without league_final_games or before any generation."""
        if self.selfplay is not None and self._runner is not None and self.settings.league_final_games:
            self.selfplay.final(self._round, self.champion, self.files)

    @property
    def best_so_far(self):
        """The winner as the run stands, read before it ends; None while there is none (no genome
        scored yet, or a self-play league still empty)."""
        if self.champion is None or (self.selfplay is not None and not self.selfplay.has_members()):
            return None
        return self.winner

    @property
    def winner(self):
        """The genome a run ends with: a self-play run's league winner (the final round-robin's, or
        the best-rated member: results against the same opponents, unlike raw fitness), else the
        champion."""
        if self.selfplay is not None:
            return self.selfplay.winner(self.selfplay.sides[0]).genome
        return self.validation.winner or self.champion

    def play(self, genome, config: Any, episodes: int = 1, opponents: dict | None = None) -> list[float]:
        """`episodes` episode returns of one genome. The champion and league behaviors are played
        by the genome itself, unless `opponents` (behavior -> genome) names theirs (an asymmetric
        game's other population, with its config in `configs`)."""
        returns, self.last_stats = self.play_episodes(genome, config, episodes, opponents)
        return returns

    def play_episodes(self, genome, config: Any, episodes: int = 1, opponents: dict | None = None, *,
                      environment=None, on_decisions=None) -> tuple[list[float], GenerationStats]:
        """`play`'s episodes and their stats, changing nothing of the evaluator: on `environment`
        (default: this process's), with `on_decisions` watching the genome's decisions
        (EpisodeRunner.on_decisions; the genome is index 0)."""
        settings = dataclasses.replace(self.settings, episodes_per_genome=episodes, league_swap_sides=False)
        match = None
        if opponents:
            match = Match({**standard_match(settings, self.champion or genome, self.files).opponents, **opponents},
                          episodes)
        runner = EpisodeRunner(environment or self.environment, settings, config, configs=self.configs)
        runner.geometry = self.geometry
        runner.on_decisions = on_decisions
        returns, stats = runner.evaluate([genome], self.champion or genome, self.files, self.generation, match=match)
        return returns[0], stats

    @property
    def geometry(self):
        """What the run's networks are laid out on (nn/network_engines.py: a hyperneat run's substrate),
        once the first generation has made it; None before, and for kinds without one."""
        return getattr(self._runner, "geometry", None)

    def _make_runner(self, config: Any):
        if not self.hosted:
            runner = EpisodeRunner(self.environment, self.settings, config, self.inference, self.configs)
        else:
            if self._hosts is None:
                self._hosts = start_hosts(self.settings, self.log_folder)
            runner = HostScheduler(self._hosts, self.settings, config, self.configs)
        runner.recorded_geometry = self.recorded_geometry
        return runner

    @property
    def hosts_note(self) -> str:
        where = "Ray actors" if self.settings.backend == "ray" else "local processes"
        if self.settings.gym is not None:
            setup = gym_setup(self.settings)
            copies = f"{setup.copies} copies of {self.settings.behaviors[0].behavior}"
            if not self.hosted:
                return f"environment: {copies}, in the main process"
            return f"environments: {self.settings.envs} env hosts ({where}), each playing {copies}"
        if not self.hosted:
            return "simulator: 1, in the main process"
        return f"simulators: {self.settings.envs}, each in its own env host ({where})"

    @property
    def inference(self):
        """Where the networks run ([neatpar] inference); its pool starts with the first use."""
        if self._inference is None:
            self._inference = make_inference(self.settings.inference, self.settings.workers,
                                             timeout=self.settings.timeout)
        return self._inference

    @property
    def inference_note(self) -> str:
        """Which inference runs, and for auto why (after the first step)."""
        reason = getattr(self._inference, "reason", "")
        if reason:
            return reason
        if self.settings.inference == "pool":
            return f"inference: pool ({self.settings.workers} workers)"
        return f"inference: {self.settings.inference}"

    def kill(self) -> None:
        """Stop at once what this evaluator started (environment, env hosts, pool workers), without
        the clean shutdown; for a second Ctrl+C."""
        for part in (self._inference, self._hosts, self._environment):
            if part is not None:
                part.kill() if hasattr(part, "kill") else part.close()
        self._inference = self._hosts = self._environment = None

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
                environment, self._environment = self._environment, None
                if environment is not None:
                    environment.close()

    def __enter__(self) -> "EnvEvaluator":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __reduce__(self):
        name = type(self).__name__
        article = "an" if name[0] in "AEIOU" else "a"
        raise LiveHandleError(f"{article} {name} cannot be pickled or sent to another process: it owns its "
                              f"environment (a simulator connection, or Gymnasium environments), which belongs to "
                              f"the process that made it")


UnityEvaluator = EnvEvaluator  # the earlier name (documented), for Unity builds and Gymnasium runs alike


def search_of(settings: Settings) -> Search:
    """The search strategy the settings name ([neatpar] search and its keys)."""
    return make_search(settings.search, seed=settings.seed or 0, novelty_k=settings.novelty_k,
                       novelty_archive=settings.novelty_archive, novelty_threshold=settings.novelty_threshold,
                       novelty_weight=settings.novelty_weight, novelty_probability=settings.novelty_probability,
                       descriptor_bounds=_grid_text(settings.descriptor_bounds, lambda d: f"{d[0]!r} {d[1]!r}", ", "),
                       descriptor_bins=_grid_text(settings.descriptor_bins, str, " "),
                       map_elites_crossover=settings.map_elites_crossover, qd_offset=settings.qd_offset)


def _grid_text(values, write, separator: str) -> str | None:
    """A grid key's value as its text form (search/map_elites.py parses that form)."""
    return None if values is None else separator.join(write(v) for v in values)


def start_hosts(settings: Settings, log_folder: str | None):
    """The env hosts a run asks for: local processes or Ray actors, one simulator each."""
    setup = HostSetup(settings, log_folder)
    if settings.backend == "ray":
        return RayHosts(setup, settings.envs, settings.address)
    return LocalHosts(setup, settings.envs)
