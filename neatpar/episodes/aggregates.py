"""A genome's fitness from its episode returns: the aggregate `[neatpar] fitness` names (mean, min,
max, median, sum), in one table that the evaluators score every genome through."""
from __future__ import annotations

import numpy as np

AGGREGATES = {"mean": np.mean, "min": np.min, "max": np.max, "median": np.median, "sum": np.sum}


def aggregate(episode_returns: list[float], how: str) -> float:
    """The `how` aggregate (a [neatpar] fitness choice) of a genome's episode returns."""
    return float(AGGREGATES[how](np.asarray(episode_returns, dtype=np.float64)))
