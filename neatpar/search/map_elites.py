"""MAP-Elites (Mouret and Clune, "Illuminating search spaces by mapping elites", 2015) over NEAT
genomes: a grid over the behaviour descriptor keeps the best genome of every cell, and each
generation's children are bred from those elites.

The grid (`descriptor_bounds = -1 1, -1 1`: low and high per dimension; `descriptor_bins = 8 8`)
cuts each dimension into equal bins; a descriptor outside the bounds counts in the edge cell. A
genome takes its cell when the cell is empty or its true fitness is strictly higher than the
elite's (a tie keeps the elite already there); a generation's genomes are offered in ascending key.

It plugs into neat-python as a reproduction class, so `neat.Population.run` drives it unchanged:
`reproduce` returns `pop_size` children made from the archive, never from the population (which
only brought its genomes to the archive through `MapElitesSearch.score`). Per child it draws, from
the `random` module's generator neat-python draws from and in this order: parent 1, uniform over
the filled cells (in ascending cell index); whether to cross over (`random.random() <
crossover`); if so parent 2, the same way (else parent 2 is parent 1); then it makes the child
with exactly DefaultReproduction's calls: `config.genome_type(key)`,
`configure_crossover(parent1, parent2, genome_config)` (with one parent twice, a clone) and
`mutate(genome_config)`. So neatpar's NEAT-step genomes give neat-python's children draw for
draw, and a checkpoint's random state carries the parent draws too. The species set still
speciates the children (species stay harmless bookkeeping for the reports: no selection, no
stagnation), and the species dict is left as the last speciation made it, so neat-python never
sees an extinction.
"""
from __future__ import annotations

import math
import random
import re
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from ..errors import ConfigError
from ..evolution.reproduction import DefaultReproduction as _Reproduction
from .descriptors import descriptor_matrix
from .results import Best, Outcome, SearchStats, track_best

CROSSOVER = 0.5   # default probability that a child has two parents


def parse_bounds(text: str) -> tuple[tuple[float, float], ...]:
    """`descriptor_bounds = -1 1, -1 1`: a low and a high per dimension, dimensions separated by commas."""
    dims = []
    for part in str(text).split(","):
        values = part.split()
        try:
            low, high = (float(v) for v in values) if len(values) == 2 else (math.nan, math.nan)
        except ValueError:
            low = high = math.nan
        if not (math.isfinite(low) and math.isfinite(high) and low < high):
            raise ConfigError(f"descriptor_bounds = {text!r}: each dimension needs two numbers, low below high, "
                              f"dimensions separated by commas (e.g. -1 1, -1 1)")
        dims.append((low, high))
    return tuple(dims)


def parse_bins(text: str) -> tuple[int, ...]:
    """`descriptor_bins = 8 8`: the number of bins of each dimension (whole numbers, at least 1)."""
    values = str(text).split()
    if not values or not all(re.fullmatch(r"\d+", v) and int(v) >= 1 for v in values):
        raise ConfigError(f"descriptor_bins = {text!r}: give one whole number of at least 1 per dimension (e.g. 8 8)")
    return tuple(int(v) for v in values)


@dataclass(frozen=True)
class Grid:
    """Equal bins per dimension between each dimension's low and high."""
    bounds: tuple[tuple[float, float], ...]
    bins: tuple[int, ...]

    def __post_init__(self):
        if len(self.bounds) != len(self.bins):
            raise ConfigError(f"descriptor_bounds has {len(self.bounds)} dimensions but descriptor_bins has "
                              f"{len(self.bins)}: give both one entry per descriptor value")

    @property
    def cells(self) -> int:
        """The number of cells."""
        return int(np.prod(self.bins))

    def index(self, descriptors: np.ndarray) -> np.ndarray:
        """(n, dims) bin indices of each descriptor, outside values in the edge bins."""
        values = np.asarray(descriptors, dtype=np.float64)
        if values.ndim != 2 or values.shape[1] != len(self.bins):
            raise ConfigError(f"the descriptors have {values.shape[-1]} values but the grid has {len(self.bins)} "
                              f"dimensions: make descriptor_bounds and descriptor_bins match the descriptor")
        low = np.array([b[0] for b in self.bounds])
        high = np.array([b[1] for b in self.bounds])
        bins = np.array(self.bins)
        scaled = np.floor((values - low) / (high - low) * bins)
        return np.clip(scaled, 0, bins - 1).astype(np.int64)

    def cell(self, descriptors: np.ndarray) -> np.ndarray:
        """(n,) flat cell numbers (C order of the bin indices)."""
        index = self.index(descriptors)
        return np.ravel_multi_index(tuple(index.T), self.bins).astype(np.int64)


@dataclass(frozen=True)
class Elite:
    """A cell's best genome: its descriptor, true fitness and the generation it was found in."""
    genome: Any
    fitness: float
    descriptor: np.ndarray
    generation: int


class EliteArchive:
    """The grid's cells and their elites."""

    def __init__(self, grid: Grid):
        self.grid = grid
        self.cells: dict[int, Elite] = {}

    def offer(self, genomes: Sequence[tuple[int, Any]], fitness: np.ndarray, descriptors: np.ndarray,
              generation: int) -> int:
        """Offer a generation's genomes (ascending key); returns the cells filled or improved."""
        cells = self.grid.cell(descriptors)
        changed = set()
        for i in sorted(range(len(genomes)), key=lambda i: genomes[i][0]):
            cell, value = int(cells[i]), float(fitness[i])
            elite = self.cells.get(cell)
            if elite is None or value > elite.fitness:
                self.cells[cell] = Elite(genomes[i][1], value, descriptors[i].copy(), generation)
                changed.add(cell)
        return len(changed)

    def filled(self) -> list[int]:
        """The filled cells, ascending."""
        return sorted(self.cells)

    @property
    def coverage(self) -> float:
        """Filled cells over all cells."""
        return len(self.cells) / self.grid.cells

    def qd_score(self, offset: float = 0.0) -> float:
        """The sum over filled cells of (elite fitness - offset): with the offset at or below the
        lowest possible fitness, every filled cell adds, and the score only grows. Added in
        ascending cell order, so that a restored archive gives the same bits."""
        total = 0.0
        for cell in self.filled():
            total += self.cells[cell].fitness - offset
        return total

    def state(self) -> dict:
        """A plain, picklable dict: the grid and each cell's elite (genome objects as they are)."""
        return {"bounds": self.grid.bounds, "bins": self.grid.bins,
                "cells": {cell: {"genome": e.genome, "fitness": e.fitness, "descriptor": e.descriptor,
                                 "generation": e.generation} for cell, e in sorted(self.cells.items())}}

    @classmethod
    def from_state(cls, state: dict) -> "EliteArchive":
        archive = cls(Grid(tuple(map(tuple, state["bounds"])), tuple(state["bins"])))
        archive.cells = {int(cell): Elite(e["genome"], e["fitness"], np.asarray(e["descriptor"]), e["generation"])
                         for cell, e in state["cells"].items()}
        return archive


class DefaultReproduction(_Reproduction):
    """A drop-in for `[DefaultReproduction]` (the section is read unchanged; elitism, survival and
    species sizes go unused) whose children come from a MAP-Elites archive (see the module
    docstring); `MapElitesSearch.attach` gives it the archive."""

    elites: EliteArchive | None = None
    crossover: float = CROSSOVER

    def reproduce(self, config, species, pop_size, generation):
        config.genome_config.innovation_tracker = self.innovation_tracker
        self.innovation_tracker.reset_generation()
        if self.elites is None:
            raise ConfigError("MAP-Elites' reproduction has no archive: call MapElitesSearch.attach(population) "
                              "after making the population")
        filled = self.elites.filled()
        if not filled:
            raise ConfigError("MAP-Elites' archive is empty: score a generation (MapElitesSearch.score) before "
                              "neat-python reproduces")
        children = {}
        for _ in range(pop_size):
            parent1 = self.elites.cells[random.choice(filled)].genome
            parent2 = self.elites.cells[random.choice(filled)].genome if random.random() < self.crossover else parent1
            key = next(self.genome_indexer)
            child = config.genome_type(key)
            child.configure_crossover(parent1, parent2, config.genome_config)
            child.mutate(config.genome_config)
            children[key] = child
            self.ancestors[key] = (parent1.key, parent2.key)
        return children


MapElitesReproduction = DefaultReproduction


class MapElitesSearch:
    """`search = map-elites`: genomes keep their true fitness as `genome.fitness`; each generation
    fills the archive, from which the reproduction (attached with `attach`) breeds the next."""

    name = "map-elites"
    needs_descriptor = True

    def __init__(self, grid: Grid, crossover: float = CROSSOVER, qd_offset: float = 0.0):
        if not 0 <= crossover <= 1:
            raise ConfigError(f"map_elites_crossover must be from 0 to 1, got {crossover!r}")
        self.archive = EliteArchive(grid)
        self.crossover, self.qd_offset = float(crossover), float(qd_offset)
        self.best: Best | None = None

    @property
    def elites(self) -> EliteArchive:
        """The repertoire a run saves: this search's archive."""
        return self.archive

    def attach(self, population) -> None:
        """Give a neat.Population's reproduction (MapElitesReproduction) this archive; again after
        every restore, since a population's reproduction is made anew."""
        reproduction = population.reproduction
        if not isinstance(reproduction, DefaultReproduction):
            raise ConfigError(f"search = map-elites needs the population's reproduction to be MapElitesReproduction, "
                              f"not {type(reproduction).__module__}.{type(reproduction).__qualname__}")
        reproduction.elites = self.archive
        reproduction.crossover = self.crossover

    def score(self, genomes: Sequence[tuple[int, Any]], outcomes: Mapping[int, Outcome], generation: int) -> SearchStats:
        """Set each genome's fitness to its true fitness and offer it to the archive."""
        keys = [key for key, _ in genomes]
        descriptors = descriptor_matrix(outcomes, keys, len(self.archive.grid.bins))
        fitness = np.array([outcomes[key].fitness for key in keys], dtype=np.float64)
        for (key, genome), value in zip(genomes, fitness.tolist()):
            genome.fitness = value
        self.best = track_best(self.best, genomes, fitness, descriptors, generation)
        added = self.archive.offer(genomes, fitness, descriptors, generation)
        return SearchStats(generation, self.name, float(fitness.max()), float(fitness.mean()), self.best.fitness,
                           archive_size=len(self.archive.cells), archive_added=added,
                           coverage=self.archive.coverage, qd_score=self.archive.qd_score(self.qd_offset))

    def state(self) -> dict:
        """A plain, picklable dict (archive, parameters, best genome) for checkpoints."""
        return {"search": self.name, "crossover": self.crossover, "qd_offset": self.qd_offset,
                "archive": self.archive.state(), "best": None if self.best is None else self.best.to_dict()}

    @classmethod
    def from_state(cls, state: dict) -> "MapElitesSearch":
        archive = EliteArchive.from_state(state["archive"])
        search = cls(archive.grid, state["crossover"], state["qd_offset"])
        search.archive = archive
        search.best = Best.from_dict(state["best"])
        return search
