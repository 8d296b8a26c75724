"""Novelty search (Lehman and Stanley, "Abandoning Objectives", Evolutionary Computation 19(2),
2011): genomes are selected on how far their behaviour is from what was seen, not on fitness.

A genome's novelty is the mean Euclidean distance from its descriptor to the k nearest among the
generation's other descriptors and the archive's (knn.py), computed against the archive as it was
before the generation. Then the archive admits descriptors:

- `threshold`: every genome whose novelty exceeds the threshold, which adapts to the rate of
  admissions as Lehman and Stanley's does: after a generation that admitted more than
  RAISE_ABOVE (4) it is multiplied by RAISE (1.2); after QUIET (5) generations in a row that
  admitted none, by LOWER (0.95) (never below FLOOR times the initial value).
- `random`: each genome with probability `probability` (0.02), one draw per genome in ascending
  genome key, from the search's own `random.Random` (seeded from the run's seed, kept in its
  state), never from the `random` module's generator that neat-python draws from.

`novelty+fitness` selects on a blend: weight * rank(novelty) + (1 - weight) * rank(fitness), each
rank normalised to [0, 1] over the generation (0 the lowest, 1 the highest, tied values sharing
their mean rank; a generation of one genome ranks 0.5).

The selection value becomes `genome.fitness` (neat-python's reproduction and stagnation select on
it); the true fitness stays in the outcomes, the statistics and `best`.
"""
from __future__ import annotations

import random
from typing import Mapping, Sequence

import numpy as np

from ..errors import ConfigError
from .knn import novelty as knn_novelty
from .results import Best, Outcome, SearchStats, track_best
from .descriptors import descriptor_matrix

ARCHIVES = ("threshold", "random")
RAISE_ABOVE = 4       # more admissions than this in one generation raise the threshold
RAISE = 1.2
QUIET = 5             # this many generations in a row without admissions lower it
LOWER = 0.95
FLOOR = 0.01          # the threshold never falls below FLOOR x its initial value
RANDOM_PROBABILITY = 0.02


class NoveltyArchive:
    """The descriptors novelty is measured against, with the rule that admits new ones."""

    def __init__(self, kind: str = "threshold", threshold: float = 0.1, probability: float = RANDOM_PROBABILITY,
                 seed: int = 0):
        if kind not in ARCHIVES:
            raise ConfigError(f"novelty_archive = {kind!r} is not one of {', '.join(ARCHIVES)}")
        if not threshold > 0:
            raise ConfigError(f"novelty_threshold must be above 0, got {threshold!r}")
        if not 0 <= probability <= 1:
            raise ConfigError(f"the random archive's probability must be from 0 to 1, got {probability!r}")
        self.kind, self.initial, self.threshold, self.probability = kind, float(threshold), float(threshold), probability
        self.rng = random.Random(f"neatpar-novelty-archive:{seed}")
        self.quiet = 0
        self._rows = np.zeros((0, 0))
        self.size = 0

    @property
    def descriptors(self) -> np.ndarray:
        """(size, width) float64: the archived descriptors, in order of admission."""
        return self._rows[:self.size]

    def admit(self, keys: Sequence[int], descriptors: np.ndarray, novelty: np.ndarray) -> int:
        """Admit this generation's descriptors by the archive's rule; returns how many entered."""
        order = np.argsort(np.asarray(keys), kind="stable")
        if self.kind == "threshold":
            chosen = [i for i in order if novelty[i] > self.threshold]
            self._adapt(len(chosen))
        else:
            chosen = [i for i in order if self.rng.random() < self.probability]
        self._append(descriptors[chosen])
        return len(chosen)

    def _adapt(self, admitted: int) -> None:
        self.quiet = 0 if admitted else self.quiet + 1
        if admitted > RAISE_ABOVE:
            self.threshold *= RAISE
        elif self.quiet >= QUIET:
            self.threshold = max(self.threshold * LOWER, FLOOR * self.initial)
            self.quiet = 0

    def _append(self, rows: np.ndarray) -> None:
        if not len(rows):
            return
        if self._rows.shape[1] != rows.shape[1]:
            if self.size:
                raise ValueError(f"the archive holds descriptors of {self._rows.shape[1]} values, not {rows.shape[1]}")
            self._rows = np.zeros((0, rows.shape[1]))
        needed = self.size + len(rows)
        if needed > len(self._rows):   # grows by doubling: appending stays linear
            grown = np.zeros((max(needed, 2 * len(self._rows), 64), rows.shape[1]))
            grown[:self.size] = self._rows[:self.size]
            self._rows = grown
        self._rows[self.size:needed] = rows
        self.size = needed

    def state(self) -> dict:
        """A plain, picklable dict that `from_state` turns back into this archive."""
        return {"kind": self.kind, "initial": self.initial, "threshold": self.threshold,
                "probability": self.probability, "rng": self.rng.getstate(), "quiet": self.quiet,
                "descriptors": self.descriptors.copy()}

    @classmethod
    def from_state(cls, state: dict) -> "NoveltyArchive":
        archive = cls(state["kind"], state["initial"], state["probability"])
        archive.threshold, archive.quiet = state["threshold"], state["quiet"]
        archive.rng.setstate(state["rng"])
        archive._append(np.asarray(state["descriptors"], dtype=np.float64))
        return archive


def normalised_ranks(values: np.ndarray) -> np.ndarray:
    """Each value's rank among `values` scaled to [0, 1] (0 the lowest), ties sharing their mean rank."""
    n = len(values)
    if n == 1:
        return np.array([0.5])
    order = np.argsort(values, kind="stable")
    ranks = np.empty(n)
    ranks[order] = np.arange(n, dtype=np.float64)
    sorted_values = values[order]
    start = 0
    for end in range(1, n + 1):     # runs of equal values share their mean rank
        if end == n or sorted_values[end] != sorted_values[start]:
            ranks[order[start:end]] = (start + end - 1) / 2.0
            start = end
    return ranks / (n - 1)


class NoveltySearch:
    """`search = novelty` (weight None) or `novelty+fitness` (weight in [0, 1]): sets each genome's
    selection value, keeps the archive, the true fitness and the best genome by true fitness."""

    needs_descriptor = True
    elites = None    # its archive holds descriptors, not a repertoire to save

    def __init__(self, k: int = 15, archive: str = "threshold", threshold: float = 0.1, weight: float | None = None,
                 seed: int = 0, probability: float = RANDOM_PROBABILITY):
        if not isinstance(k, int) or k < 1:
            raise ConfigError(f"novelty_k must be a whole number of at least 1, got {k!r}")
        if weight is not None and not 0 <= weight <= 1:
            raise ConfigError(f"novelty_weight must be from 0 to 1, got {weight!r}")
        self.k, self.weight = k, weight
        self.archive = NoveltyArchive(archive, threshold, probability, seed)
        self.best: Best | None = None
        self.novelty: dict[int, float] = {}   # the last generation's, by genome key

    @property
    def name(self) -> str:
        return "novelty" if self.weight is None else "novelty+fitness"

    def score(self, genomes: Sequence[tuple[int, object]], outcomes: Mapping[int, Outcome], generation: int) -> SearchStats:
        """Set every genome's selection value (`genome.fitness`) from its outcome, admit descriptors
        to the archive; returns the generation's statistics."""
        keys = [key for key, _ in genomes]
        width = self.archive.descriptors.shape[1] if self.archive.size else None
        descriptors = descriptor_matrix(outcomes, keys, width)
        fitness = np.array([outcomes[key].fitness for key in keys], dtype=np.float64)
        novelty = knn_novelty(descriptors, self.archive.descriptors if self.archive.size else None, self.k)
        selection = novelty if self.weight is None else \
            self.weight * normalised_ranks(novelty) + (1.0 - self.weight) * normalised_ranks(fitness)
        for (key, genome), value in zip(genomes, selection.tolist()):
            genome.fitness = value
        self.novelty = dict(zip(keys, novelty.tolist()))
        self.best = track_best(self.best, genomes, fitness, descriptors, generation)
        added = self.archive.admit(keys, descriptors, novelty)
        return SearchStats(generation, self.name, float(fitness.max()), float(fitness.mean()), self.best.fitness,
                           archive_size=self.archive.size, archive_added=added,
                           mean_novelty=float(novelty.mean()), max_novelty=float(novelty.max()),
                           threshold=self.archive.threshold if self.archive.kind == "threshold" else None)

    def attach(self, population) -> None:
        """Nothing to bind: neat-python's reproduction selects on the novelty the genomes carry."""

    def state(self) -> dict:
        """A plain, picklable dict (archive, parameters, best genome) for checkpoints."""
        return {"search": self.name, "k": self.k, "weight": self.weight, "archive": self.archive.state(),
                "best": None if self.best is None else self.best.to_dict()}

    @classmethod
    def from_state(cls, state: dict) -> "NoveltySearch":
        search = cls(state["k"], weight=state["weight"])
        search.archive = NoveltyArchive.from_state(state["archive"])
        search.best = Best.from_dict(state["best"])
        return search
