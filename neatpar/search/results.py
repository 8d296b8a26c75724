"""The records a search hands out: a genome's outcome (true fitness and behaviour descriptor), the
best genome by true fitness, and a generation's statistics (one flat row, None where a field does
not apply to the search)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np


@dataclass(frozen=True)
class Outcome:
    """What playing a genome gave: its true fitness and, for searches that need one, its behaviour
    descriptor (float64, averaged over its episodes)."""
    fitness: float
    descriptor: np.ndarray | None = None


@dataclass(frozen=True)
class Best:
    """The genome with the highest true fitness seen so far, with its descriptor and generation."""
    genome: Any
    fitness: float
    descriptor: np.ndarray | None
    generation: int

    def to_dict(self) -> dict:
        """A plain dict for checkpoints (the genome pickles as it is)."""
        return {"genome": self.genome, "fitness": self.fitness, "descriptor": self.descriptor,
                "generation": self.generation}

    @classmethod
    def from_dict(cls, data: dict | None) -> "Best | None":
        """The record `to_dict` made (None stays None)."""
        return None if data is None else cls(data["genome"], data["fitness"], data["descriptor"], data["generation"])


@dataclass(frozen=True)
class SearchStats:
    """One generation of a search. Fitness fields are true fitness (what the game scored), whatever
    the genomes were selected on; archive fields count the novelty archive's descriptors or
    MAP-Elites' filled cells."""
    generation: int
    search: str
    best_fitness: float            # this generation's best true fitness
    mean_fitness: float            # this generation's mean true fitness
    best_fitness_ever: float       # the best true fitness of every generation so far
    archive_size: int = 0          # novelty: descriptors in the archive; MAP-Elites: filled cells
    archive_added: int = 0         # novelty: descriptors admitted; MAP-Elites: cells filled or improved
    mean_novelty: float | None = None   # novelty searches: this generation's mean novelty
    max_novelty: float | None = None
    threshold: float | None = None      # novelty with archive = threshold: the threshold after this generation
    coverage: float | None = None       # MAP-Elites: filled cells / all cells
    qd_score: float | None = None       # MAP-Elites: sum over filled cells of (fitness - qd_offset)


def track_best(best: Best | None, genomes: Sequence[tuple[int, Any]], fitness: np.ndarray,
               descriptors: np.ndarray | None, generation: int) -> Best:
    """`best`, or this generation's best genome by true fitness if it is higher (the first of
    equal bests in the generation's order; an equal fitness keeps the earlier genome)."""
    i = int(np.argmax(fitness))
    if best is not None and not fitness[i] > best.fitness:
        return best
    descriptor = None if descriptors is None else descriptors[i].copy()
    return Best(genomes[i][1], float(fitness[i]), descriptor, generation)
