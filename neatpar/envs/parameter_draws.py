"""Environment parameters' values drawn in Python, for environments without a game to draw them
(Gymnasium): a constant as it is, a sampler a new draw at each episode start, as a Unity game's
GetWithDefault in OnEpisodeBegin draws one. Each sampler draws from numpy's generator seeded with
its own seed (the file's, or the run's seed + k: config/parameter_file.py), made anew each time
the values are given, so that a seeded run draws the same values again."""
from __future__ import annotations

from typing import Mapping

import numpy as np

from ..config.parameter_file import Constant, Gaussian, MultiRangeUniform, Uniform, Value


class ParameterDraws:
    """The values of a set of parameters, drawn per episode (`draw`)."""

    def __init__(self, values: Mapping[str, Value]):
        self.values = dict(values)
        self._generators = {key: np.random.default_rng(value.seed & 0xFFFFFFFF) for key, value in self.values.items()}

    def draw(self) -> dict[str, float]:
        """One episode's values, by parameter: each sampler's next draw."""
        return {key: self._draw(key, value) for key, value in self.values.items()}

    def _draw(self, key: str, value: Value) -> float:
        rng = self._generators[key]
        if isinstance(value, Constant):
            return value.value
        if isinstance(value, Uniform):
            return float(rng.uniform(value.min_value, value.max_value))
        if isinstance(value, Gaussian):
            return float(rng.normal(value.mean, value.st_dev))
        if isinstance(value, MultiRangeUniform):
            lengths = np.array([high - low for low, high in value.intervals])
            low, high = value.intervals[int(rng.choice(len(lengths), p=lengths / lengths.sum()))]
            return float(rng.uniform(low, high))
        raise TypeError(f"{key}: {value!r} is no environment parameter value")
