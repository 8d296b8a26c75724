"""The ONNX model files of evolved genomes, which a Unity ML-Agents Agent runs as its Model:
`winner.onnx` in a run folder and the file `neatpar export` writes (nn/onnx_export.py builds the
model). A model needs its behavior's layout (sensor sizes in order, actions)."""
from __future__ import annotations

import os
import re
from typing import Any

import onnx

from ..config.settings_model import Settings
from ..errors import ConfigError
from ..nn.network_engines import engine
from ..environment import Layout
from .atomic import check_output_file, write_atomic

MODEL_SUFFIX = ".onnx"   # what Unity imports as a model: it goes by the file's name


def model_file(behavior: str, settings: Settings) -> str:
    """winner.onnx, or winner-NAME.onnx (the behavior's name made a file name) with several
    population behaviors."""
    if len(settings.population_behaviors) == 1:
        return "winner.onnx"
    return f"winner-{re.sub(r'[^A-Za-z0-9_.-]+', '_', behavior.split('?')[0])}.onnx"


def check_model_file(path: str, flag: str = "--out") -> None:
    """A model file to write must be named NAME.onnx (Unity imports a model by its name) in a
    folder that exists and is writable; else a one-line ConfigError naming the fix."""
    check_output_file(path, flag, "brain" + MODEL_SUFFIX, "model")
    if not path.lower().endswith(MODEL_SUFFIX):
        raise ConfigError(f"{flag} {path}: the name must end in {MODEL_SUFFIX}, which Unity imports as a model: "
                          f"e.g. {flag} {os.path.splitext(path)[0] + MODEL_SUFFIX}")


def save_policy(model: onnx.ModelProto, path: str) -> None:
    """Write `model` to `path` atomically (a reader sees the old file or the whole new one)."""
    write_atomic(path, model.SerializeToString())


def write_model(genome, neat_config, settings: Settings, layout: Layout, path: str, geometry: Any = None) -> str:
    """The genome's model for a behavior of `layout` (its network kind's export, nn/network_engines.py, on
    the run's `geometry`: a hyperneat run's substrate, else the one the settings make), written
    atomically to `path`."""
    save_policy(engine(settings.network_kind).export(genome, neat_config, layout, settings, geometry), path)
    return path


def write_winner_models(genome, neat_config, settings: Settings, layouts: dict[str, Layout], folder: str,
                        geometry: Any = None) -> list[str]:
    """One model per population behavior that reported, in the run folder."""
    return [write_model(genome, neat_config, settings, layouts[b], os.path.join(folder, model_file(b, settings)),
                        geometry)
            for b in settings.population_behaviors if b in layouts]


def choose_behavior(settings: Settings, layouts: dict[str, Layout], asked: str | None) -> str:
    """The behavior to export for: the one asked for, else the only population behavior."""
    if asked is None:
        candidates = settings.population_behaviors
        if len(candidates) != 1:
            raise ConfigError(f"the config has {len(candidates)} population behaviors ({', '.join(candidates)}): "
                              f"choose one with --behavior")
        asked = candidates[0]
    if asked not in layouts:
        known = ", ".join(repr(b) for b in layouts) or "none"
        raise ConfigError(f"behavior {asked!r} is not among the behaviors the environment reported ({known}): "
                          f"fix --behavior")
    return asked
