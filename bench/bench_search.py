"""Benchmark: novelty's k-nearest-neighbour step, population 1,000 against an archive of 10,000
descriptors of 8 dimensions, k = 15: neatpar's exact C scan (neatpar.search.knn, as NoveltySearch
calls it) against two numpy baselines in the same run on the same data: the plain full distance
matrix (in blocks of rows, by broadcasting differences) and the usual faster form (squared norms
minus twice a matrix product, BLAS), each row partitioned for its k smallest. They must agree
(neatpar's to 1e-12 with the plain one: neatpar's is exact, numpy rounds in its own summation
order; the matrix-product form loses more digits, to 1e-9). The whole novelty generation
(NoveltySearch.score: the k-NN step, the threshold archive's admissions, the selection values) is
timed too. Times are medians over `--repeats` runs of the process's CPU time (all its threads), so
that other work on a shared machine stays out of them.
Usage: python bench/bench_search.py [--population 1000] [--archive 10000] [--dims 8] [--repeats 7]
"""
from __future__ import annotations

import argparse
import statistics
import time
import types

import numpy as np

from neatpar.search.knn import novelty
from neatpar.search.novelty import NoveltySearch
from neatpar.search.results import Outcome

K = 15


def baseline(descriptors: np.ndarray, archive: np.ndarray, k: int, block: int = 100) -> np.ndarray:
    """The full distance matrix of the population against population + archive, a block of rows at
    a time (a whole 1,000 x 11,000 x 8 difference array would take 700 MB), each row's k smallest
    by np.partition (itself excluded)."""
    refs = np.concatenate([descriptors, archive])
    out = np.empty(len(descriptors))
    for start in range(0, len(descriptors), block):
        rows = descriptors[start:start + block]
        d = np.sqrt(((rows[:, None, :] - refs[None, :, :]) ** 2).sum(axis=2))
        d[np.arange(len(rows)), start + np.arange(len(rows))] = np.inf
        out[start:start + len(rows)] = np.partition(d, k - 1, axis=1)[:, :k].mean(axis=1)
    return out


def expanded(descriptors: np.ndarray, archive: np.ndarray, k: int, block: int = 128) -> np.ndarray:
    """The same by |a|^2 + |b|^2 - 2 a.b (a BLAS matrix product), a block of rows at a time."""
    refs = np.concatenate([descriptors, archive])
    norms = np.einsum("ij,ij->i", refs, refs)
    out = np.empty(len(descriptors))
    for start in range(0, len(descriptors), block):
        rows = descriptors[start:start + block]
        d2 = norms[start:start + len(rows), None] + norms[None, :] - 2.0 * rows @ refs.T
        d2[np.arange(len(rows)), start + np.arange(len(rows))] = np.inf
        nearest = np.partition(d2, k - 1, axis=1)[:, :k]
        out[start:start + len(rows)] = np.sqrt(np.maximum(nearest, 0.0)).mean(axis=1)
    return out


def timed(fn, repeats: int) -> float:
    """Median CPU seconds of `fn()` over `repeats` runs (after one warm-up)."""
    fn()
    times = []
    for _ in range(repeats):
        start = time.process_time()
        fn()
        times.append(time.process_time() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--population", type=int, default=1000)
    parser.add_argument("--archive", type=int, default=10000)
    parser.add_argument("--dims", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    rng = np.random.default_rng(1)
    descriptors = rng.uniform(-1, 1, (args.population, args.dims))
    archive = rng.uniform(-1, 1, (args.archive, args.dims))

    ours = novelty(descriptors, archive, K)
    theirs = baseline(descriptors, archive, K)
    error = float(np.abs(ours - theirs).max())
    assert error < 1e-12, f"neatpar's novelty and the baseline differ by {error}"
    error_expanded = float(np.abs(ours - expanded(descriptors, archive, K)).max())
    assert error_expanded < 1e-9, f"neatpar's novelty and the matrix-product form differ by {error_expanded}"

    t_ours = timed(lambda: novelty(descriptors, archive, K), args.repeats)
    t_base = timed(lambda: baseline(descriptors, archive, K), max(1, args.repeats // 2))
    t_expanded = timed(lambda: expanded(descriptors, archive, K), args.repeats)

    def generation():
        search = NoveltySearch(k=K, threshold=0.5)
        search.archive._append(archive)
        genomes = [(key, types.SimpleNamespace(key=key, fitness=None)) for key in range(args.population)]
        outcomes = {key: Outcome(0.0, descriptors[key]) for key in range(args.population)}
        start = time.process_time()
        search.score(genomes, outcomes, 0)
        return time.process_time() - start

    generation()
    t_generation = statistics.median(generation() for _ in range(args.repeats))

    print(f"population {args.population}, archive {args.archive}, {args.dims} dimensions, k = {K} "
          f"(largest difference: {error:.1e} to the plain baseline, {error_expanded:.1e} to the matrix product)")
    print("| step | time per generation | against the baseline |")
    print("|---|---|---|")
    print(f"| numpy full distance matrix (baseline) | {t_base * 1e3:.1f} ms | 1.00x |")
    print(f"| numpy matrix-product distances | {t_expanded * 1e3:.1f} ms | {t_base / t_expanded:.1f}x faster |")
    print(f"| neatpar's k-NN (search/knn.py) | {t_ours * 1e3:.1f} ms | {t_base / t_ours:.1f}x faster "
          f"({t_expanded / t_ours:.1f}x the matrix product's speed) |")
    print(f"| a whole novelty generation (NoveltySearch.score) | {t_generation * 1e3:.1f} ms | "
          f"{t_base / t_generation:.1f}x faster |")
    print(f"target: under 50 ms per generation: {'met' if t_generation < 0.05 else 'NOT met'}")


if __name__ == "__main__":
    main()
