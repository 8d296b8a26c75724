"""The `[neatpar]` section of a neat-python config file, and loading the whole file.

neat-python ignores sections it does not know, so one file configures both. Every key is
checked here: an unknown key or a bad value is a ConfigError naming the key and the fix.
"""
from __future__ import annotations

import configparser
import os
import shlex
from dataclasses import dataclass, field, fields

import neat

from .errors import ConfigError

ROLES = ("population", "champion")
FITNESS_AGGREGATES = ("mean", "min", "max", "median", "sum")
NETWORKS = ("feedforward", "recurrent")
INFERENCE = ("inprocess", "pool", "auto")
BACKENDS = ("local", "ray")


@dataclass(frozen=True)
class BehaviorRole:
    """Who drives a behavior's agents: the genomes under evaluation, the best genome so far, or a
    genome saved in a file (`genome_file`)."""
    behavior: str
    role: str                     # "population", "champion" or "file"
    genome_file: str | None = None


@dataclass(frozen=True)
class RunConfig:
    """The [neatpar] section, validated. Paths are absolute (resolved against the config file)."""
    env: str | None                               # build path; None = the Unity Editor
    behaviors: tuple[BehaviorRole, ...]
    env_args: tuple[str, ...] = ()
    max_steps: int = 1000
    episodes_per_genome: int = 1
    generations: int = 50
    seed: int | None = None
    network: str = "feedforward"
    fitness: str = "mean"
    time_scale: float = 20.0
    no_graphics: bool = True
    timeout: float = 60.0
    checkpoint_interval: int = 5
    worker_id: int = 0
    env_parameters: tuple[tuple[str, float], ...] = ()
    inference: str = "inprocess"
    workers: int = 2
    envs: int = 1                                 # simulators (env hosts); 1 = the main process's own
    backend: str = "local"                        # where env hosts run: local processes or Ray actors
    address: str | None = None                    # Ray cluster address (None: start or join a local one)
    config_path: str = field(default="", compare=False)


_KEYS = {f.name for f in fields(RunConfig)} - {"config_path"}


def _parse_behaviors(text: str, base: str) -> tuple[BehaviorRole, ...]:
    roles = []
    for item in (part.strip() for part in text.replace("\n", ",").split(",")):
        if not item:
            continue
        name, sep, role = item.rpartition(":")
        name, role = name.strip(), role.strip()
        if not sep or not name or not role:
            raise ConfigError(f"[neatpar] behaviors: {item!r} is not 'BehaviorName: role'; roles are "
                              f"population, champion or a saved genome file")
        if role in ROLES:
            roles.append(BehaviorRole(name, role))
        else:
            path = role if os.path.isabs(role) else os.path.join(base, role)
            roles.append(BehaviorRole(name, "file", os.path.normpath(path)))
    if not roles:
        raise ConfigError("[neatpar] behaviors is empty: name at least one behavior, e.g. "
                          "'behaviors = Ball3D?team=0: population'")
    if not any(r.role == "population" for r in roles):
        raise ConfigError("[neatpar] behaviors: no behavior has the role 'population', so no genome "
                          "would ever be evaluated")
    names = [r.behavior for r in roles]
    if len(set(names)) != len(names):
        raise ConfigError(f"[neatpar] behaviors names a behavior twice: {names}")
    return tuple(roles)


def _integer(key: str, text: str, low: int, high: int | None = None) -> int:
    try:
        value = int(text)
    except ValueError:
        raise ConfigError(f"[neatpar] {key} = {text!r} is not an integer") from None
    if value < low or (high is not None and value > high):
        bound = f"from {low} to {high}" if high is not None else f"at least {low}"
        raise ConfigError(f"[neatpar] {key} = {value} is out of range: use an integer {bound}")
    return value


def _number(key: str, text: str, positive: bool = True) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ConfigError(f"[neatpar] {key} = {text!r} is not a number") from None
    if positive and not value > 0:
        raise ConfigError(f"[neatpar] {key} = {text} must be greater than 0")
    return value


def _choice(key: str, text: str, options: tuple[str, ...]) -> str:
    value = text.strip().lower()
    if value not in options:
        raise ConfigError(f"[neatpar] {key} = {text!r}: use one of {', '.join(options)}")
    return value


def _boolean(key: str, text: str) -> bool:
    value = text.strip().lower()
    if value in ("true", "yes", "1", "on"):
        return True
    if value in ("false", "no", "0", "off"):
        return False
    raise ConfigError(f"[neatpar] {key} = {text!r}: use true or false")


def _env_parameters(text: str) -> tuple[tuple[str, float], ...]:
    out = []
    for item in (part.strip() for part in text.replace("\n", ",").split(",")):
        if not item:
            continue
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"[neatpar] env_parameters: {item!r} is not 'name = number'")
        out.append((key.strip(), _number(f"env_parameters {key.strip()}", value, positive=False)))
    return tuple(out)


def parse_section(section: dict, config_path: str) -> RunConfig:
    """Validate the raw key/value pairs of a [neatpar] section."""
    base = os.path.dirname(os.path.abspath(config_path))
    unknown = sorted(set(section) - _KEYS)
    if unknown:
        raise ConfigError(f"[neatpar] unknown key {unknown[0]!r} in {config_path}; known keys: {', '.join(sorted(_KEYS))}")
    if "env" not in section or not section["env"].strip():
        raise ConfigError(f"[neatpar] env is missing in {config_path}: give the build path (relative to "
                          f"the config file) or 'editor'")
    if "behaviors" not in section:
        raise ConfigError(f"[neatpar] behaviors is missing in {config_path}: e.g. "
                          f"'behaviors = Ball3D?team=0: population'")
    env = section["env"].strip()
    values: dict = {
        "env": None if env.lower() == "editor" else os.path.normpath(env if os.path.isabs(env) else os.path.join(base, env)),
        "behaviors": _parse_behaviors(section["behaviors"], base),
        "config_path": os.path.abspath(config_path),
    }
    parsers = {
        "env_args": lambda k, v: tuple(shlex.split(v)),
        "max_steps": lambda k, v: _integer(k, v, 1),
        "episodes_per_genome": lambda k, v: _integer(k, v, 1),
        "generations": lambda k, v: _integer(k, v, 1),
        "seed": lambda k, v: _integer(k, v, 0, 2**31 - 1),
        "network": lambda k, v: _choice(k, v, NETWORKS),
        "fitness": lambda k, v: _choice(k, v, FITNESS_AGGREGATES),
        "time_scale": lambda k, v: _number(k, v),
        "no_graphics": _boolean,
        "timeout": lambda k, v: _number(k, v),
        "checkpoint_interval": lambda k, v: _integer(k, v, 1),
        "worker_id": lambda k, v: _integer(k, v, 0, 60000),
        "env_parameters": lambda k, v: _env_parameters(v),
        "inference": lambda k, v: _choice(k, v, INFERENCE),
        "workers": lambda k, v: _integer(k, v, 1, 256),
        "envs": lambda k, v: _integer(k, v, 1, 1024),
        "backend": lambda k, v: _choice(k, v, BACKENDS),
        "address": lambda k, v: v.strip() or None,
    }
    for key, parse in parsers.items():
        if key in section:
            values[key] = parse(key, section[key])
    return RunConfig(**values)


def load(path: str) -> tuple[neat.Config, RunConfig]:
    """Load a neat-python config file with a [neatpar] section; errors name the fix."""
    if not os.path.isfile(path):
        raise ConfigError(f"config file {path!r} not found: pass the path of a neat-python config "
                          f"with a [neatpar] section (see configs/)")
    parser = configparser.ConfigParser()
    try:
        parser.read(path)
    except configparser.Error as exc:
        raise ConfigError(f"config file {path} cannot be parsed: {' '.join(str(exc).split())}") from None
    if not parser.has_section("neatpar"):
        raise ConfigError(f"config file {path} has no [neatpar] section: add one with at least 'env' "
                          f"and 'behaviors' (see configs/ball.cfg)")
    run = parse_section(dict(parser.items("neatpar")), path)
    try:
        config = neat.Config(neat.DefaultGenome, neat.DefaultReproduction, neat.DefaultSpeciesSet,
                             neat.DefaultStagnation, path)
    except Exception as exc:  # neat-python's own messages, made one line
        raise ConfigError(f"neat-python rejects {path}: {' '.join(str(exc).split())}") from None
    if run.network == "feedforward" and not config.genome_config.feed_forward:
        raise ConfigError(f"{path}: [DefaultGenome] feed_forward = false evolves recurrent genomes; set "
                          f"[neatpar] network = recurrent")
    return config, run
