"""The search keys of `[neatpar]` as the settings know them: their readers (`descriptor`,
`descriptor_bounds`, `descriptor_bins`) and the rules between them and the other keys. How a
search scores and selects is neatpar/search/'s; the names here are its (tests check they agree).
"""
from __future__ import annotations

import math
import re
from typing import Any

from ..errors import ConfigError
from .behaviors import Role
from .readers import Where, accepting

SEARCHES = ("fitness", "novelty", "novelty+fitness", "map-elites")
NEEDS_DESCRIPTOR = ("novelty", "novelty+fitness", "map-elites")
NOVELTY_ARCHIVES = ("threshold", "random")
_DESCRIPTOR = re.compile(r"^\s*(final_observation|mean_observation)\s*\[\s*(-?\d+)?\s*:\s*(-?\d+)?\s*\]\s*$")


@accepting("final_observation[i:j] or mean_observation[i:j]: values i to j-1 of the agent's observation at "
           "the end of each scored episode, or their mean over it")
def descriptor(name: str, value: Any, where: Where) -> str | None:
    """The descriptor's text, spaces removed; None for none."""
    if value is None or (isinstance(value, str) and value.strip().lower() in ("", "none")):
        return None
    match = _DESCRIPTOR.match(value) if isinstance(value, str) else None
    if not match:
        raise where.fail(name, value, "is not final_observation[i:j] or mean_observation[i:j] (e.g. "
                                      "final_observation[10:12])")
    kind, start, stop = match.groups()
    return f"{kind}[{start or ''}:{stop or ''}]"


def descriptor_width(text: str) -> int | None:
    """The descriptor's number of values when its slice alone tells (both ends given, of one
    sign), else None (it depends on the observation's width)."""
    start, stop = _DESCRIPTOR.match(text).groups()[1:]
    if start is None or stop is None or (int(start) < 0) != (int(stop) < 0):
        return None
    return max(0, int(stop) - int(start))


@accepting("a low and a high per descriptor value, low below high, dimensions separated by commas "
           "(e.g. -1 1, -1 1), or none")
def bounds(name: str, value: Any, where: Where) -> tuple[tuple[float, float], ...] | None:
    """`-1 1, -1 1` (or from Python pairs of numbers) as ((low, high), ...)."""
    if value is None or (isinstance(value, str) and value.strip().lower() in ("", "none")):
        return None
    parts = [p.split() for p in value.split(",")] if isinstance(value, str) else value
    dims = []
    try:
        for part in parts:
            low, high = (float(v) for v in part) if len(part) == 2 else (math.nan, math.nan)
            dims.append((low, high))
    except (TypeError, ValueError):
        dims = [(math.nan, math.nan)]
    if not dims or not all(math.isfinite(lo) and math.isfinite(hi) and lo < hi for lo, hi in dims):
        raise where.fail(name, value, "is not a low and a high per dimension, low below high, dimensions separated "
                                      "by commas (e.g. -1 1, -1 1)")
    return tuple(dims)


@accepting("the number of cells of each descriptor value, whole numbers of at least 1 (e.g. 8 8), or none")
def bins(name: str, value: Any, where: Where) -> tuple[int, ...] | None:
    """`8 8` (or from Python a sequence of whole numbers) as (8, 8)."""
    if value is None or (isinstance(value, str) and value.strip().lower() in ("", "none")):
        return None
    values = value.split() if isinstance(value, str) else value
    try:
        counts = tuple(int(v) if isinstance(v, str) and re.fullmatch(r"\d+", v) or type(v) is int else -1
                       for v in values)
    except TypeError:
        counts = ()
    if not counts or min(counts) < 1:
        raise where.fail(name, value, "is not whole numbers of at least 1, one per dimension (e.g. 8 8)")
    return counts


def check(settings: Any) -> None:
    """The rules between the search keys and the others (a one-line ConfigError naming the key)."""
    search = settings.search
    if search in NEEDS_DESCRIPTOR and settings.descriptor is None:
        raise ConfigError(f"search = {search} compares behaviours: set descriptor (e.g. descriptor = "
                          f"final_observation[10:12], the observation values that say what an agent did)")
    if settings.descriptor_bounds is not None and settings.descriptor_bins is not None \
            and len(settings.descriptor_bounds) != len(settings.descriptor_bins):
        raise ConfigError(f"descriptor_bounds has {len(settings.descriptor_bounds)} dimensions but descriptor_bins "
                          f"has {len(settings.descriptor_bins)}: give both one entry per descriptor value")
    if search == "map-elites":
        for key, example in (("descriptor_bounds", "-1 1, -1 1"), ("descriptor_bins", "8 8")):
            if getattr(settings, key) is None:
                raise ConfigError(f"search = map-elites needs {key} (e.g. {key} = {example}): the grid over the "
                                  f"descriptor whose cells keep their best genome")
        width = descriptor_width(settings.descriptor)
        if width is not None and width != len(settings.descriptor_bins):
            raise ConfigError(f"descriptor = {settings.descriptor} has {width} values but descriptor_bins has "
                              f"{len(settings.descriptor_bins)} dimensions: give one bin count and one low-high "
                              f"pair per descriptor value")
    if search != "fitness" and settings.with_role(Role.LEAGUE):
        raise ConfigError(f"search = {search} with a league behavior: self-play scores genomes against league "
                          f"opponents that change every generation, so their behaviours do not compare; use "
                          f"search = fitness, or the champion role instead of league")


def check_neat_config(settings: Any, neat_config: Any, source: str) -> None:
    """Rules between the search and the neat config (see check_fitness_termination)."""
    check_fitness_termination(settings.search, neat_config, source)


def check_fitness_termination(search: str, neat_config: Any, source: str) -> None:
    """neat-python's fitness_threshold compares genome.fitness, which novelty searches set to what
    selection climbs, not to the fitness: such a search needs no_fitness_termination."""
    if search in ("novelty", "novelty+fitness") and not neat_config.no_fitness_termination:
        raise ConfigError(f"{source}: search = {search} sets genome.fitness to "
                          f"{'novelty' if search == 'novelty' else 'the blend of ranks'}, which neat-python's "
                          f"fitness_threshold would compare: set [NEAT] no_fitness_termination = true (the true "
                          f"fitness is still recorded, and the winner is the best)")
