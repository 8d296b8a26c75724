"""Winners chosen on fresh episodes ([neatpar] winner_candidates, winner_episodes, winner_interval).

A genome's training fitness is a few noisy episodes; the best one ever seen is the luckiest as
often as the best. So every `interval` generations the `candidates` best genomes by training
fitness since the last check, and the current winner, play `episodes` fresh episodes together
(one batch of the runner, on a simulator seed of their own: VALIDATION_ROUND). The winner is
scored over the fresh episodes it has played (its latest KEPT_RETURNS), which grow with each check; a candidate takes
its place by scoring more, by the run's fitness aggregate, on this check's episodes. Training is
untouched: the champion that champion-role behaviors play against is still the best by training
fitness.

    training fitness -> offer() keeps the best `candidates` -> due()? -> check(): the winner and
    the candidates on fresh episodes -> winner, its FreshScore
"""
from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field
from typing import Any, Callable

import neat

from ..generation_stats import WinnerValues
from .aggregates import aggregate

# The simulator seed's round number of fresh episodes (runner.simulator_seed): apart from
# training's rounds, which number a generation's self-play matches from 0.
VALIDATION_ROUND = 1000
# The winner's score is over its latest this many fresh episodes: what a generation records and a
# checkpoint keeps does not grow with a run whose winner stays.
KEPT_RETURNS = 1024


@dataclass(frozen=True)
class FreshCheck:
    """One check on fresh episodes: the generation after which it was played and the simulator
    seed its episodes began from (None: an unseeded run)."""
    generation: int
    seed: int | None


@dataclass(frozen=True)
class FreshScore:
    """A genome's score on fresh episodes: `fitness` (the run's aggregate of their returns, what
    winners are compared by), `mean_return`, how many `episodes`, and the `checks` they were
    played in."""
    fitness: float
    mean_return: float
    episodes: int
    checks: tuple[FreshCheck, ...]

    @classmethod
    def of(cls, returns: list[float], how: str, checks: tuple[FreshCheck, ...]) -> "FreshScore":
        return cls(aggregate(returns, how), math.fsum(returns) / len(returns), len(returns), checks)

    def describe(self) -> dict:
        """winner.json's `fresh` record."""
        return {"fitness": self.fitness, "mean_return": self.mean_return, "episodes": self.episodes,
                "checks": [{"generation": c.generation, "seed": c.seed} for c in self.checks]}


@dataclass
class ValidationState:
    """What a checkpoint keeps of the validation: the winner (a frozen copy, its training fitness
    as `fitness`), its returns on fresh episodes (the latest KEPT_RETURNS), the checks they come
    from (as many) and its score over them, and the candidates offered since the last check, best first."""
    winner: Any = None
    returns: list = field(default_factory=list)
    checks: tuple = ()
    pending: list = field(default_factory=list)
    score: FreshScore | None = None


PlayFresh = Callable[[list, int], "tuple[list[list[float]], int | None]"]


class WinnerValidation:
    """The winner of a run chosen on fresh episodes; `enabled` is False with episodes = 0 (the
    winner is then the best training fitness, the champion)."""

    def __init__(self, candidates: int, episodes: int, interval: int, fitness: str):
        self.candidates, self.episodes, self.interval, self.fitness = candidates, episodes, interval, fitness
        self.state = ValidationState()
        self.seconds = 0.0   # spent on fresh episodes in the last generation

    @property
    def enabled(self) -> bool:
        return self.episodes > 0

    @property
    def winner(self):
        return self.state.winner

    def offer(self, scored: list[tuple[Any, float]]) -> None:
        """A generation's genomes with their training fitness: the best `candidates` of them and of
        those offered since the last check stay (frozen copies; the first of equals stays first)."""
        best = sorted(scored, key=lambda pair: -pair[1])[: self.candidates]
        offered = self.state.pending + [_frozen(genome, value) for genome, value in best]
        offered.sort(key=lambda genome: -genome.fitness)   # stable: earlier offers first among equals
        kept: dict = {}
        for genome in offered:   # a genome that lives on (an elite) is offered again: its best offer
            kept.setdefault(genome.key, genome)
        self.state.pending = list(kept.values())[: self.candidates]

    def due(self, generation: int) -> bool:
        """Whether generation `generation` (counted from 0) ends with a check: every `interval`
        generations. A run's end checks the candidates left (EnvEvaluator.check_winner), after its
        last checkpoint, so that a run continued from that checkpoint equals one run straight."""
        return self.enabled and bool(self.state.pending) and (generation + 1) % self.interval == 0

    def check(self, play: PlayFresh, generation: int) -> None:
        """Play the winner and the pending candidates on the same fresh episodes (`play(genomes,
        episodes)`: each genome's returns and the first simulator seed). The winner's score is
        over all its fresh episodes so far; a candidate takes its place only by scoring more on
        this check's."""
        state = self.state
        contenders = ([state.winner] if state.winner is not None else []) + [
            genome for genome in state.pending if state.winner is None or genome.key != state.winner.key]
        returns, seed = play(contenders, self.episodes)
        check = FreshCheck(generation, seed)
        best, best_returns, checks = contenders[0], state.returns + list(returns[0]), state.checks + (check,)
        for genome, played in zip(contenders[1:], returns[1:]):
            if aggregate(played, self.fitness) > aggregate(best_returns, self.fitness):
                best, best_returns, checks = genome, list(played), (check,)
        kept = best_returns[-KEPT_RETURNS:]
        checks = checks[-math.ceil(KEPT_RETURNS / self.episodes):]
        self.state = ValidationState(best, kept, checks, [], FreshScore.of(kept, self.fitness, checks))

    @property
    def score(self) -> FreshScore | None:
        """The winner's score on its fresh episodes (computed at its check); None before the first."""
        return self.state.score

    def values(self) -> WinnerValues | None:
        """The winner as stats.csv shows it; None before its first check."""
        score = self.score
        if score is None:
            return None
        return WinnerValues(self.state.winner.fitness, score.fitness, round(self.seconds, 3))

    def restore(self, state: ValidationState | None) -> None:
        if state is not None:
            self.state = state


def _frozen(genome, fitness: float):
    """A copy of `genome` that later generations cannot change, with its training fitness."""
    frozen = copy.deepcopy(genome)
    frozen.fitness = fitness
    return frozen


class WinnerPin(neat.reporting.BaseReporter):
    """Makes a neat.Population's `best_genome`, what `population.run` returns, the validated winner:
    set after each generation and when the run ends on a solution (checked first then)."""

    def __init__(self, population, validation: WinnerValidation, check: Callable[[], None]):
        self.population, self.validation, self.check = population, validation, check

    def __reduce__(self):
        # neat-python's species set keeps the reporters, so checkpoints pickle them: this one holds
        # the live evaluator's validation and is attached again with the evaluator.
        return (neat.reporting.BaseReporter, ())

    def end_generation(self, config, population, species_set):
        self._pin()

    def found_solution(self, config, generation, best):
        self.check()
        self._pin()

    def _pin(self) -> None:
        if self.validation.winner is not None:
            self.population.best_genome = self.validation.winner
