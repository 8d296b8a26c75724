"""Tests of search/knn.py (and its C core, search/_knn.c): each descriptor's novelty is the mean
distance to its k nearest among the other descriptors and the archive, bit for bit what plain
Python arithmetic gives, on many inputs (duplicates, ties, fewer candidates than k, one dimension
to many)."""
import math
import random

import numpy as np
import pytest

from neatpar.search.knn import novelty


def reference(descriptors, archive, k):
    """The definition in plain Python: per dimension in order, squared differences summed left to
    right, sqrt; the k smallest distances added in ascending order, divided by their number."""
    rows = [list(map(float, r)) for r in descriptors]
    refs = rows + ([list(map(float, r)) for r in archive] if archive is not None else [])
    result = []
    for i, q in enumerate(rows):
        distances = []
        for j, r in enumerate(refs):
            if j == i:
                continue
            s = 0.0
            for a, b in zip(q, r):
                s += (a - b) * (a - b)
            distances.append(s)
        nearest = sorted(distances)[:k]
        total = 0.0
        for s in nearest:
            total += math.sqrt(s)
        result.append(total / len(nearest) if nearest else 0.0)
    return result


def cases(count=120, seed=5):
    rng = random.Random(seed)
    for _ in range(count):
        dims = rng.choice((1, 2, 3, 8, 9))
        n = rng.choice((1, 2, 5, 17, 60, 300))
        m = rng.choice((0, 1, 10, 257, 600))
        k = rng.choice((1, 3, 15, 40))
        pool = [[rng.uniform(-1, 1) for _ in range(dims)] for _ in range(8)]   # repeated rows: ties, copies
        pick = lambda: rng.choice(pool) if rng.random() < 0.3 else [rng.gauss(0, 3) for _ in range(dims)]
        yield np.array([pick() for _ in range(n)]).reshape(n, dims), \
            (np.array([pick() for _ in range(m)]).reshape(m, dims) if m else None), k


def test_novelty_is_the_reference_bit_for_bit_on_many_inputs():
    for descriptors, archive, k in cases():
        assert novelty(descriptors, archive, k).tolist() == reference(descriptors, archive, k), \
            (descriptors.shape, None if archive is None else archive.shape, k)


def test_a_row_never_counts_itself_but_a_copy_of_it_does():
    rows = np.array([[0.0, 0.0], [3.0, 4.0], [0.0, 0.0]])
    assert novelty(rows, None, 1).tolist() == [0.0, 5.0, 0.0]
    assert novelty(rows[:2], np.array([[0.0, 0.0]]), 1).tolist() == [0.0, 5.0]


def test_fewer_candidates_than_k_average_over_all_of_them_and_none_gives_zero():
    rows = np.array([[0.0], [1.0], [3.0]])
    assert novelty(rows, None, 15).tolist() == [2.0, 1.5, 2.5]
    assert novelty(np.array([[7.0, 1.0]]), None, 15).tolist() == [0.0]


def test_bad_shapes_and_k_are_refused():
    with pytest.raises(ValueError, match="k must be at least 1"):
        novelty(np.zeros((3, 2)), None, 0)
    with pytest.raises(ValueError, match="archive holds descriptors"):
        novelty(np.zeros((3, 2)), np.zeros((4, 3)), 2)
    with pytest.raises(ValueError, match=r"\(n, d\)"):
        novelty(np.zeros(3), None, 2)
