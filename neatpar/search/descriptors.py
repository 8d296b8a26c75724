"""Behaviour descriptors: what a genome did, as a short vector the search compares.

`descriptor = final_observation[i:j]` takes values i to j-1 of an agent's flattened observation
(its sensors in the behavior spec's order) at the end of each scored episode;
`mean_observation[i:j]` their mean over the episode's decisions. Either is averaged over a
genome's episodes. The slice follows Python's rules (an index may be left out or count from the
end), and must select at least one value within the observation; an index past either end is
refused rather than cut short as Python would. A game exposes what matters as observations (the
maze's last two are the robot's position, for instance).

A Python fitness function gives a descriptor by returning `(fitness, descriptor)`; every genome of
a search that needs descriptors must get one of the same width (`outcome_of`, `descriptor_matrix`).
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from numbers import Real
from typing import Mapping

import numpy as np

from ..errors import ConfigError, DescriptorError, FitnessError
from .results import Outcome

KINDS = ("final_observation", "mean_observation")
_FORM = re.compile(r"^\s*(final_observation|mean_observation)\s*\[\s*(-?\d+)?\s*:\s*(-?\d+)?\s*\]\s*$")


@dataclass(frozen=True)
class DescriptorSpec:
    """A parsed `descriptor = ...` value: which observation (final or mean) and which slice."""
    kind: str
    start: int | None
    stop: int | None

    @property
    def text(self) -> str:
        """The value as the config writes it."""
        start = "" if self.start is None else str(self.start)
        stop = "" if self.stop is None else str(self.stop)
        return f"{self.kind}[{start}:{stop}]"

    def bind(self, width: int) -> "BoundDescriptor":
        """The slice resolved for an observation of `width` values; a ConfigError if an index lies
        outside them (Python would cut the slice short, which would hide a miscounted sensor) or
        if it selects nothing."""
        start, stop, _ = slice(self.start, self.stop).indices(width)
        problem = self._outside(width) or (None if stop > start else "selects no values of")
        if problem is not None:
            example = f"{self.kind}[{start}:{stop}]" if stop > start else f"{self.kind}[0:{min(2, width)}]"
            raise ConfigError(f"descriptor = {self.text} {problem} {_observation(width)}: give indices from 0 "
                              f"to {width} (e.g. {example})")
        return BoundDescriptor(self.kind, start, stop, width)

    def _outside(self, width: int) -> str | None:
        """How the slice's indices leave an observation of `width` values, or None if they do not."""
        given = [i for i in (self.start, self.stop) if i is not None]
        if any(i > width for i in given):
            return "reaches past the end of"
        if any(i < -width for i in given):
            return "reaches before the start of"
        return None


def _observation(width: int) -> str:
    """An observation of `width` values and its indices, as a message names them."""
    if width == 1:
        return "an observation of 1 value (index 0)"
    return f"an observation of {width} values (indices 0-{width - 1})"


@dataclass(frozen=True)
class BoundDescriptor:
    """A descriptor spec for one observation width: values start to stop-1."""
    kind: str
    start: int
    stop: int
    observation_width: int

    @property
    def width(self) -> int:
        """The descriptor's number of values."""
        return self.stop - self.start


def parse_descriptor(text: str) -> DescriptorSpec:
    """`final_observation[i:j]` or `mean_observation[i:j]`; a one-line ConfigError otherwise."""
    match = _FORM.match(text) if isinstance(text, str) else None
    if not match:
        raise ConfigError(f"descriptor = {text!r} is not final_observation[i:j] or mean_observation[i:j] "
                          f"(values i to j-1 of the agent's observation, e.g. final_observation[0:2])")
    kind, start, stop = match.groups()
    return DescriptorSpec(kind, None if start is None else int(start), None if stop is None else int(stop))


class DescriptorAccumulator:
    """Per agent row of a runner: the descriptor's slice of the last observation seen and its sum
    over the episode's decisions, fed in bulk (numpy) and read when an episode ends."""

    def __init__(self, spec: BoundDescriptor, rows: int):
        self.spec = spec
        self.last = np.zeros((rows, spec.width))
        self.total = np.zeros((rows, spec.width))
        self.decisions = np.zeros(rows, np.int64)
        self.seen = np.zeros(rows, bool)

    def grow(self, rows: int) -> None:
        """Room for `rows` agent rows (a runner's rows grow with the agents it sees); rows kept."""
        old = len(self.seen)
        if rows <= old:
            return
        for name in ("last", "total", "decisions", "seen"):
            array = getattr(self, name)
            grown = np.zeros((rows, *array.shape[1:]), array.dtype)
            grown[:old] = array
            setattr(self, name, grown)

    def _slice(self, observations: np.ndarray) -> np.ndarray:
        values = np.asarray(observations, dtype=np.float64)
        if values.ndim != 2 or values.shape[1] != self.spec.observation_width:
            raise ValueError(f"observations must be (rows, {self.spec.observation_width}), got {values.shape}")
        return values[:, self.spec.start:self.spec.stop]

    def decide(self, rows: np.ndarray, observations: np.ndarray) -> None:
        """The observations (one row each) on which `rows` decide now."""
        values = self._slice(observations)
        self.last[rows] = values
        self.total[rows] += values
        self.decisions[rows] += 1
        self.seen[rows] = True

    def end(self, rows: np.ndarray, observations: np.ndarray | None = None) -> np.ndarray:
        """The episodes of `rows` ended, with `observations` their final ones if the game sent
        them (a terminal report's), else the last decision's count as final. Returns their
        descriptors ((len(rows), width) float64) and clears the rows for their next episode."""
        rows = np.asarray(rows, dtype=np.int64)
        if observations is not None:
            self.last[rows] = self._slice(observations)
            self.seen[rows] = True
        unseen = rows[~self.seen[rows]]
        if len(unseen):
            raise DescriptorError(f"agent row {int(unseen[0])} ended an episode without an observation: its "
                                  f"descriptor {self.spec.kind} has nothing to read")
        if self.spec.kind == "final_observation":
            result = self.last[rows].copy()
        else:
            counts = self.decisions[rows]
            safe = np.maximum(counts, 1)[:, None]
            result = np.where(counts[:, None] > 0, self.total[rows] / safe, self.last[rows])
        self.clear(rows)
        return result

    def clear(self, rows: np.ndarray) -> None:
        """Forget the rows' episode (a reset, or an episode that is not scored)."""
        self.last[rows] = 0.0
        self.total[rows] = 0.0
        self.decisions[rows] = 0
        self.seen[rows] = False


class GenomeDescriptors:
    """Each genome's descriptors over its episodes, averaged (the value its Outcome carries)."""

    def __init__(self):
        self._sums: dict[int, np.ndarray] = {}
        self._counts: dict[int, int] = {}

    def add(self, key: int, descriptor: np.ndarray) -> None:
        """One finished episode's descriptor for genome `key`."""
        value = np.asarray(descriptor, dtype=np.float64)
        if key in self._sums:
            self._sums[key] = self._sums[key] + value
            self._counts[key] += 1
        else:
            self._sums[key] = value.copy()
            self._counts[key] = 1

    def mean(self, key: int) -> np.ndarray:
        """Genome `key`'s descriptor: the mean of its episodes' (a DescriptorError if it has none)."""
        if key not in self._sums:
            raise DescriptorError(f"genome {key} finished no episode with a descriptor: the search needs one "
                                  f"for every genome it scores")
        return self._sums[key] / self._counts[key]


def outcome_of(key: int, returned, needs_descriptor: bool) -> Outcome:
    """A fitness function's return value for genome `key` as an Outcome: a number, or `(fitness,
    descriptor)`. A search that needs descriptors refuses a plain number; one that does not takes
    the fitness of a pair and keeps its descriptor."""
    if isinstance(returned, Real) and not isinstance(returned, bool):
        if needs_descriptor:
            raise DescriptorError(f"genome {key}'s fitness function returned a number, not (fitness, descriptor): "
                                  f"this search needs a descriptor for every genome; return (fitness, descriptor)")
        return Outcome(_fitness(key, returned))
    if isinstance(returned, (tuple, list)) and len(returned) == 2:
        fitness, descriptor = returned
        return Outcome(_fitness(key, fitness), descriptor_of(key, descriptor))
    raise FitnessError(f"genome {key}'s fitness function returned {type(returned).__name__} {returned!r:.60}: "
                       f"return a number, or (fitness, descriptor) with the descriptor a sequence of numbers")


def _fitness(key: int, value) -> float:
    if isinstance(value, bool) or not isinstance(value, Real) or not math.isfinite(float(value)):
        raise FitnessError(f"genome {key}'s fitness is {value!r}: the fitness must be a finite number")
    return float(value)


def descriptor_of(key: int, value) -> np.ndarray:
    """A descriptor as a float64 vector; a DescriptorError naming genome `key` unless it is a
    non-empty sequence of finite numbers."""
    try:
        vector = np.array(value, dtype=np.float64)
    except (TypeError, ValueError):
        vector = None
    if vector is None or vector.ndim != 1 or not len(vector):
        raise DescriptorError(f"genome {key}'s descriptor {value!r:.60} is not a sequence of numbers: give a "
                              f"list or array of floats")
    if not np.isfinite(vector).all():
        raise DescriptorError(f"genome {key}'s descriptor holds {vector[~np.isfinite(vector)][0]} (at "
                              f"{int(np.flatnonzero(~np.isfinite(vector))[0])}): descriptors must be finite")
    return vector


def descriptor_matrix(outcomes: Mapping[int, Outcome], keys: list[int], width: int | None = None) -> np.ndarray:
    """The descriptors of genomes `keys` as an (n, width) array; `width` defaults to the first's.
    A DescriptorError names the first genome without one or with another width."""
    rows = []
    for key in keys:
        descriptor = outcomes[key].descriptor
        if descriptor is None:
            raise DescriptorError(f"genome {key} has no descriptor: this search needs one for every genome "
                                  f"(a fitness function returns (fitness, descriptor); a run sets descriptor = ...)")
        if width is None:
            width = len(descriptor)
        if len(descriptor) != width:
            raise DescriptorError(f"genome {key}'s descriptor has {len(descriptor)} values, the search's have {width}: "
                                  f"every genome's descriptor needs the same width")
        if not np.isfinite(descriptor).all():
            raise DescriptorError(f"genome {key}'s descriptor holds a value that is not finite: descriptors must be "
                                  f"finite numbers")
        rows.append(descriptor)
    return np.array(rows, dtype=np.float64).reshape(len(keys), width or 0)
