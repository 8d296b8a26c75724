"""Config files: a neat-python config file with a `[neatpar]` section read into a `neat.Config`
and the checked Settings, and an asymmetric game's populations' own neat configs.

A neat.Config is made with the NEAT step classes `[neatpar] neat_step` names. neat-python's own
are known here; neatpar's (neatpar/evolution/) are declared by the package when it is imported
(`declare_neat_step`), so that the settings import no engine module.
"""
from __future__ import annotations

import configparser
import contextlib
import os
import tempfile
from typing import Mapping, NamedTuple

import neat

from ..errors import ConfigError, one_line
from .behaviors import Role
from .settings_model import Settings, Source


class NeatStepClasses(NamedTuple):
    """The classes a neat.Config makes generations with; each reads its section of the config file
    ([DefaultGenome], [DefaultReproduction], [DefaultSpeciesSet])."""
    genome: type
    reproduction: type
    species_set: type


_NEAT_STEPS: dict[str, NeatStepClasses] = {
    "neat-python": NeatStepClasses(neat.DefaultGenome, neat.DefaultReproduction, neat.DefaultSpeciesSet)}


def declare_neat_step(name: str, classes: NeatStepClasses) -> None:
    """The classes `[neatpar] neat_step = name` makes generations with (neatpar declares its own,
    neatpar/__init__.py)."""
    _NEAT_STEPS[name] = classes


def neat_step_classes(neat_step: str) -> NeatStepClasses:
    """The classes of `neat_step` (a name the settings have read)."""
    try:
        return _NEAT_STEPS[neat_step]
    except KeyError:
        raise ConfigError(f"neat_step = {neat_step} names no declared NEAT step classes (neatpar declares its own "
                          f"when it is imported): use one of {', '.join(_NEAT_STEPS)}") from None


def read_neat_config(settings: Settings, path: str, text: str | None = None) -> neat.Config:
    """A neat-python config file for these settings, checked; errors name the fix. With `text`,
    that is the file's content (a resumed run's stored config): `path` then only names it."""
    if text is None and not os.path.isfile(path):
        raise ConfigError(f"neat config {path!r} not found: fix the path (relative to the config file)")
    with _as_file(path, text) as readable:
        try:
            config = neat.Config(*neat_step_classes(settings.neat_step), neat.DefaultStagnation, readable)
        except Exception as exc:  # neat-python's own messages, made one line
            raise ConfigError(f"neat-python rejects {path}: {one_line(exc)}") from None
    settings.check_neat_config(config, path)
    return config


def population_configs(settings: Settings, neat_config: neat.Config,
                       texts: Mapping[str, str] | None = None) -> dict[str, neat.Config]:
    """The neat config of each league behavior's own population in an asymmetric game: its file
    from neat_configs (read from `texts`, behavior -> the file's content, where given: a resumed
    run's stored copy), else `neat_config` (the run's own)."""
    files, texts = dict(settings.neat_configs), texts or {}
    return {r.behavior: read_neat_config(settings, files[r.behavior], texts.get(r.behavior))
            if r.behavior in files else neat_config for r in settings.behaviors if r.role is Role.LEAGUE}


def load(path: str, text: str | None = None) -> tuple[neat.Config, Settings]:
    """A neat-python config file with a [neatpar] section, checked; errors name the fix. With
    `text`, that is the file's content (a resumed run's stored config): `path` then only names it
    and anchors its relative paths."""
    if text is None and not os.path.isfile(path):
        raise ConfigError(f"config file {path!r} not found: pass the path of a neat-python config "
                          f"with a [neatpar] section (see configs/)")
    parser = configparser.ConfigParser()
    try:
        if text is None:
            parser.read(path)
        else:
            parser.read_string(text, source=path)
    except configparser.Error as exc:
        raise ConfigError(f"config file {path} cannot be parsed: {one_line(exc)}") from None
    if not parser.has_section("neatpar"):
        raise ConfigError(f"config file {path} has no [neatpar] section: add one with at least env (a build path, "
                          f"with behaviors; or gymnasium:ID; see configs/ball.cfg and configs/cartpole.cfg)")
    settings = Settings.create(dict(parser.items("neatpar")), Source.FILE, os.path.dirname(os.path.abspath(path)))
    return read_neat_config(settings, path, text), settings


@contextlib.contextmanager
def _as_file(path: str, text: str | None):
    """A file neat-python can read: `path` itself, or a private copy of `text`."""
    if text is None:
        yield path
        return
    with tempfile.TemporaryDirectory(prefix="neatpar-config-") as folder:
        copy = os.path.join(folder, os.path.basename(path))
        with open(copy, "w") as f:
            f.write(text)
        yield copy
