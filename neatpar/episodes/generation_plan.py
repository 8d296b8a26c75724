"""A generation compiled for play: who drives which behavior (Match, GenerationPlan) and the population
kernel that runs their networks, so that the runner and env hosts step from one compiled plan."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, NamedTuple

import numpy as np

from ..config.behaviors import Role
from ..config.settings_model import Settings
from ..errors import ConfigError
from ..nn.mixed import MixedPopulation
from ..nn.network_engines import engine, run_geometry


@dataclass(frozen=True)
class Match:
    """Who plays the behaviors the genomes under evaluation do not drive (behavior -> genome), and
    how many episodes each genome plays against them. A run's roles give one match per generation
    (`standard_match`); self-play plays a generation as several (league.py), numbered by `round`
    so that each starts from its own simulator seed. The population plays every configured
    behavior that is not an opponent."""
    opponents: Mapping[str, Any]
    episodes: int
    round: int = 0


@dataclass(frozen=True)
class GenerationPlan:
    """Who drives what in one match: population genomes are kernel indices 0..count-1; `fixed`
    maps each opponent behavior to its genome's kernel index; each genome plays `episodes`.
    `inputs` is the kernel's input width when behaviors observe different numbers of values (the
    narrower ones are padded with zeros), else 0."""
    count: int
    fixed: dict
    episodes: int = 1
    round: int = 0
    inputs: int = 0


class Compiled(NamedTuple):
    """A generation's networks as compile_generation makes them: which network plays what, and the
    population kernel that runs them."""
    plan: GenerationPlan
    kernel: Any
    geometry: Any = None   # what the networks are laid out on (nn/network_engines.py: a hyperneat run's substrate)
    parameters: Any = None   # the environment parameters' values to play with (curriculum.py), None: none


def standard_match(settings: Settings, champion, files: dict) -> Match:
    """The match the roles give: the champion and file behaviors' genomes as opponents."""
    opponents = {r.behavior: champion if r.role is Role.CHAMPION else files[r.behavior]
                 for r in settings.behaviors if r.role in (Role.CHAMPION, Role.FILE)}
    return Match(opponents, settings.episodes_per_genome)


def compile_generation(genomes: list, champion, files: dict, settings: Settings, neat_config: Any,
                       match: Match | None = None, configs: Mapping[str, Any] | None = None,
                       geometry: Any = None) -> Compiled:
    """The population kernel of `genomes`, followed by the opponents' genomes (of `match`, else of
    the roles: the champion is the first genome before there is one), and the GenerationPlan that
    says which is which. `configs` gives the neat config of the genomes that play a behavior where
    it is not `neat_config` (an asymmetric game's populations): genomes of other configs go into a
    kernel of their own, and the kernels run as one (MixedPopulation). `geometry` is the run's
    (run_geometry: a hyperneat run's substrate, None for other kinds)."""
    if match is None:
        match = standard_match(settings, champion if champion is not None else genomes[0], files)
    configs = configs or {}
    population = [r.behavior for r in settings.behaviors if r.behavior not in match.opponents]
    groups = [(configs.get(population[0], neat_config) if population else neat_config, list(genomes))]
    places = {}
    for behavior, genome in match.opponents.items():
        config = configs.get(behavior, neat_config)
        number = next((n for n, (c, _) in enumerate(groups) if c is config), len(groups))
        if number == len(groups):
            groups.append((config, []))
        places[behavior] = (number, len(groups[number][1]))
        groups[number][1].append(genome)
    starts = np.cumsum([0] + [len(networks) for _, networks in groups])
    fixed = {behavior: int(starts[number]) + position for behavior, (number, position) in places.items()}
    if len(groups) == 1:
        kernel = population_kernel(groups[0][1], settings, groups[0][0], geometry)
        return Compiled(GenerationPlan(len(genomes), fixed, match.episodes, match.round), kernel, geometry)
    kernel = MixedPopulation([population_kernel(networks, settings, config, geometry) for config, networks in groups])
    plan = GenerationPlan(len(genomes), fixed, match.episodes, match.round, kernel.num_inputs)
    return Compiled(plan, kernel, geometry)


def population_kernel(genomes: list, settings: Settings, neat_config: Any, geometry: Any = None):
    """The population kernel of the settings' network kind for `genomes` (its engine, nn/network_engines.py),
    on the run's `geometry` (run_geometry)."""
    return engine(settings.network_kind).kernel(genomes, neat_config, settings, geometry)


def needs_geometry(settings: Settings) -> bool:
    """The settings' network kind lays its networks out on the game's layout (nn/network_engines.py)."""
    return engine(settings.network_kind).geometry is not None


def driving_behaviors(settings: Settings) -> list[str]:
    """The configured behaviors: every one is driven by a network on the run's geometry (the
    genomes', the champion's, a league's or a genome file's)."""
    return [r.behavior for r in settings.behaviors]


def geometry_of(settings: Settings, neat_config: Any, layouts: dict, recorded: Any = None) -> Any:
    """The run's geometry from the behaviors' layouts (nn/network_engines.py: run_geometry); a resumed
    run's must be the one it `recorded` (its run folder's substrate.json)."""
    geometry = run_geometry(settings, neat_config, layouts, driving_behaviors(settings))
    if recorded is not None and geometry != recorded:
        raise ConfigError(f"the run folder's substrate.json is not the substrate the settings and the game make now "
                          f"({_difference(recorded, geometry)}): resume with the substrate the run started with (its "
                          f"settings and coordinates file), or start a new run")
    return geometry


def _difference(old: Any, new: Any) -> str:
    """What differs between two substrates, in words (the first of sizes, activation, query, coordinates)."""
    for what in ("sizes", "activation", "query", "io"):
        if getattr(old, what) != getattr(new, what):
            return f"its {what} {getattr(old, what)} would be {getattr(new, what)}"
    return "its node coordinates differ"

