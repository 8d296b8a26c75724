"""The worker side of ParallelEvaluator: evaluating a chunk of genomes, one outcome per genome.

Runs in spawn workers and in Ray tasks alike. Each genome is evaluated with `random` and numpy's
global generator seeded from (seed + genome.key), so results do not depend on which worker ran
which genome, or how many workers there are.
"""
from __future__ import annotations

import enum
import math
import numbers
import random
import traceback
from typing import Any, Callable, Iterator, NamedTuple

import numpy as np

from ..errors import ClearedGlobalError


class Status(enum.Enum):
    OK = "ok"          # value: the fitness
    BAD = "bad"        # value: repr of what was returned instead of a finite number
    RAISED = "raised"  # value: the traceback text


class GenomeResult(NamedTuple):
    """What evaluating one genome gave."""
    status: Status
    value: Any


def seed_genome(seed: int | None, key: int) -> None:
    """Seed `random` and numpy's global generator for one genome (no-op when seed is None)."""
    if seed is None:
        return
    random.seed(seed + key)
    np.random.seed((seed + key) % 2**32)


def outcome_of(value: Any) -> GenomeResult:
    """A finite number is the fitness; a pair (finite number, a sequence of numbers) is the fitness
    and a behaviour descriptor (search/search_evaluator.py), handed back as (float, float64 vector)."""
    if _finite(value):
        return GenomeResult(Status.OK, float(value))
    if isinstance(value, tuple) and len(value) == 2 and _finite(value[0]) and not isinstance(value[1], (str, bytes)):
        try:
            descriptor = np.array(value[1], dtype=np.float64)
        except (TypeError, ValueError):
            descriptor = None
        if descriptor is not None and descriptor.ndim == 1:
            return GenomeResult(Status.OK, (float(value[0]), descriptor))
    return GenomeResult(Status.BAD, repr(value)[:200])


def _finite(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value)


def evaluate_chunk(eval_function: Callable, config: Any, seed: int | None, genomes: list) -> Iterator[GenomeResult]:
    """Evaluate `genomes` in order, yielding one GenomeResult per genome. Touching a cleared global ends
    the chunk: that is the program's fault, and every genome would meet it."""
    for genome in genomes:
        seed_genome(seed, genome.key)
        try:
            value = eval_function(genome, config)
        except ClearedGlobalError:
            raise
        except Exception:
            yield GenomeResult(Status.RAISED, traceback.format_exc())
            continue
        yield outcome_of(value)
