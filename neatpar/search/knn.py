"""Novelty's nearest-neighbour step: the mean Euclidean distance of each descriptor to its k nearest
among the generation's other descriptors and the archive, exact, in one C call (_knn.c).

Every pair's distance is sqrt of the sum over dimensions, in order, of squared differences, in
double precision; the mean adds the k nearest distances in ascending order and divides by k (by
the number of candidates when there are fewer). The result depends on nothing but the inputs:
no threads, no randomness, no approximation.
"""
from __future__ import annotations

import numpy as np

from . import _knn


def novelty(descriptors: np.ndarray, archive: np.ndarray | None, k: int) -> np.ndarray:
    """(n,) novelty of each row of `descriptors` ((n, d)) against the other rows and `archive`'s
    ((m, d)) rows: the mean distance to its k nearest (a row never counts itself; a copy of it does)."""
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    queries = np.ascontiguousarray(descriptors, dtype=np.float64)
    if queries.ndim != 2:
        raise ValueError(f"descriptors must be an (n, d) array, got shape {queries.shape}")
    n, dims = queries.shape
    if archive is not None and len(archive):
        stored = np.asarray(archive, dtype=np.float64)
        if stored.ndim != 2 or stored.shape[1] != dims:
            raise ValueError(f"the archive holds descriptors of shape {stored.shape[1:]}, the generation's are ({dims},)")
        refs = np.ascontiguousarray(np.concatenate([queries, stored]))
    else:
        refs = queries
    out = np.zeros(n, np.float64)
    if n == 0 or dims == 0:
        return out
    _knn.novelty(queries, refs, np.arange(n, dtype=np.int64), int(k), dims, out)
    return out
