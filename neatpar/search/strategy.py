"""The search strategies behind `search = fitness | novelty | novelty+fitness | map-elites`: one
protocol between what a generation's genomes did (their outcomes) and what neat-python selects
on (`genome.fitness`), so that a run wires every search the same way.

Per generation: play the genomes, give `score` each genome's Outcome (true fitness, descriptor);
it sets `genome.fitness` to the value neat-python's reproduction selects on and returns the
generation's SearchStats; `best` is the best genome by true fitness so far. `state()` is a plain
dict for checkpoints and `restore(state)` the strategy it came from. MAP-Elites also replaces the
reproduction class (`reproduction_type`) and must be attached to each population made or restored.
"""
from __future__ import annotations

from typing import Any, Mapping, Protocol, Sequence

import numpy as np

from ..errors import ConfigError
from .map_elites import CROSSOVER, EliteArchive, Grid, MapElitesReproduction, MapElitesSearch, parse_bins, parse_bounds
from .novelty import RANDOM_PROBABILITY, NoveltySearch
from .results import Best, Outcome, SearchStats, track_best

SEARCHES = ("fitness", "novelty", "novelty+fitness", "map-elites")


class Search(Protocol):
    """What a run needs of a search strategy."""

    name: str
    needs_descriptor: bool
    best: Best | None
    elites: EliteArchive | None    # the repertoire a run saves (archive.json): MAP-Elites' only

    def score(self, genomes: Sequence[tuple[int, Any]], outcomes: Mapping[int, Outcome],
              generation: int) -> SearchStats:
        """Set each genome's selection value (`genome.fitness`); the generation's statistics."""

    def state(self) -> dict:
        """A plain, picklable dict that `restore` turns back into an equal strategy."""

    def attach(self, population) -> None:
        """Bind the strategy to a neat.Population just made or restored (MAP-Elites gives its
        reproduction the archive; the others need nothing)."""


class FitnessSearch:
    """`search = fitness`: neat-python as it is, selecting on the true fitness."""

    name = "fitness"
    needs_descriptor = False
    elites = None

    def __init__(self):
        self.best: Best | None = None

    def score(self, genomes: Sequence[tuple[int, Any]], outcomes: Mapping[int, Outcome], generation: int) -> SearchStats:
        """Each genome's fitness is its true fitness."""
        fitness = np.array([outcomes[key].fitness for key, _ in genomes], dtype=np.float64)
        for (key, genome), value in zip(genomes, fitness.tolist()):
            genome.fitness = value
        self.best = track_best(self.best, genomes, fitness, None, generation)
        return SearchStats(generation, self.name, float(fitness.max()), float(fitness.mean()), self.best.fitness)

    def attach(self, population) -> None:
        """Nothing to bind: neat-python's own reproduction selects on the fitness."""

    def state(self) -> dict:
        """A plain, picklable dict: the best genome so far."""
        return {"search": self.name, "best": None if self.best is None else self.best.to_dict()}

    @classmethod
    def from_state(cls, state: dict) -> "FitnessSearch":
        search = cls()
        search.best = Best.from_dict(state["best"])
        return search


def make_search(search: str = "fitness", *, seed: int = 0, novelty_k: int = 15, novelty_archive: str = "threshold",
                novelty_threshold: float = 0.1, novelty_weight: float = 0.5,
                novelty_probability: float = RANDOM_PROBABILITY, descriptor_bounds: str | None = None,
                descriptor_bins: str | None = None, map_elites_crossover: float = CROSSOVER,
                qd_offset: float = 0.0) -> Search:
    """The strategy a run's settings name (the keys of `[neatpar]`, checked here)."""
    if search == "fitness":
        return FitnessSearch()
    if search in ("novelty", "novelty+fitness"):
        weight = novelty_weight if search == "novelty+fitness" else None
        return NoveltySearch(novelty_k, novelty_archive, novelty_threshold, weight, seed, novelty_probability)
    if search == "map-elites":
        if descriptor_bounds is None or descriptor_bins is None:
            raise ConfigError("search = map-elites needs descriptor_bounds (low high per dimension, e.g. -1 1, -1 1) "
                              "and descriptor_bins (bins per dimension, e.g. 8 8)")
        return MapElitesSearch(Grid(parse_bounds(descriptor_bounds), parse_bins(descriptor_bins)),
                               map_elites_crossover, qd_offset)
    raise ConfigError(f"search = {search!r} is not one of {' | '.join(SEARCHES)}")


def reproduction_type(search: str, default: type) -> type:
    """The reproduction class a run's neat.Config needs for `search`: MAP-Elites' own, else `default`."""
    return MapElitesReproduction if search == "map-elites" else default


def restore(state: dict) -> Search:
    """The strategy whose `state()` gave `state`."""
    kinds = {"fitness": FitnessSearch, "novelty": NoveltySearch, "novelty+fitness": NoveltySearch,
             "map-elites": MapElitesSearch}
    if not isinstance(state, dict) or state.get("search") not in kinds:
        raise ConfigError(f"not a search state (no known \"search\" name): {str(state)[:60]}")
    return kinds[state["search"]].from_state(state)
