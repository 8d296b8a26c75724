"""ES-HyperNEAT's substrate: the input and output nodes' coordinates, laid out as HyperNEAT lays
them out (substrate.py: the default layout or a coordinates file), and the parameters of the
search that finds each genome's hidden nodes and links (es_hyperneat.py holds the search).

Its substrate.json ("format": "neatpar-es-substrate") holds the inputs, the outputs, the
parameters, the activation, the sensors and actions, and, once a run has a winner, the winner's
discovered network (hidden nodes with coordinates, links with weights): enough to read the run's
search back on resume and for `play` and `export` (which search again from winner.json), and a
picture of what the search found.
"""
from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field, fields, replace
from typing import Any

import numpy as np

from ..errors import ConfigError
from .compile import BUILTIN_ACTIVATIONS
from .substrate import IOShapes, make_substrate

FORMAT = "neatpar-es-substrate"
VERSION = 1
MAX_DEPTH = 10   # a quadtree of 4**10 leaves per explored point is the most a search may divide


@dataclass(frozen=True)
class ESParams:
    """The search's parameters, PUREPLES' names and defaults (its examples' "M" version):
    quads divided to `initial_depth` always and to `max_depth` where their variance is above
    `division_threshold`; a quad of variance above `variance_threshold` searched further, else
    a link where its band is above `band_threshold`; `iteration_level` rounds of search from the
    hidden nodes found; weights up to `max_weight`; `activation` of every hidden and output node."""
    initial_depth: int = 1
    max_depth: int = 2
    variance_threshold: float = 0.03
    band_threshold: float = 0.3
    iteration_level: int = 1
    division_threshold: float = 0.5
    max_weight: float = 5.0
    activation: str = "sigmoid"

    def __post_init__(self):
        if not 0 <= self.initial_depth <= self.max_depth <= MAX_DEPTH:
            raise ConfigError(f"es_initial_depth = {self.initial_depth} and es_max_depth = {self.max_depth}: give "
                              f"0 <= es_initial_depth <= es_max_depth <= {MAX_DEPTH}")
        if self.iteration_level < 0:
            raise ConfigError(f"es_iteration_level = {self.iteration_level}: give 0 or more rounds")
        for name in ("variance_threshold", "band_threshold", "division_threshold"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value >= 0.0):
                raise ConfigError(f"es_{name} = {value!r}: give a finite number >= 0")
        if not (math.isfinite(self.max_weight) and self.max_weight > 0.0):
            raise ConfigError(f"es_max_weight = {self.max_weight!r}: give the largest weight magnitude, a finite "
                              f"number > 0")
        if self.activation not in BUILTIN_ACTIVATIONS:
            raise ConfigError(f"es_activation = {self.activation!r} is not one of neat-python's built-in "
                              f"activations: choose one of {', '.join(BUILTIN_ACTIVATIONS)}")

    @classmethod
    def of_settings(cls, settings: Any) -> "ESParams":
        """The parameters the settings' es_* keys give."""
        return cls(**{f.name: getattr(settings, f"es_{f.name}") for f in fields(cls)})


@dataclass(frozen=True, eq=False)
class Discovered:
    """One genome's discovered network: the hidden nodes' (x, y) in order (node keys after the
    inputs and outputs), each link's source and target key and weight, sorted by target, then
    source."""
    hidden: np.ndarray
    sources: np.ndarray
    targets: np.ndarray
    weights: np.ndarray


@dataclass(frozen=True, eq=False)
class EvolvableSubstrate:
    """The run's geometry for network = es-hyperneat: input and output nodes ((n, 2) float64
    coordinates), the search's parameters, the sensors and actions laid out (None for coordinates
    alone), and the winner's discovered network once known (not part of equality)."""
    inputs: np.ndarray
    outputs: np.ndarray
    params: ESParams = field(default_factory=ESParams)
    io: IOShapes | None = None
    winner: Discovered | None = None

    def __post_init__(self):
        for name in ("inputs", "outputs"):
            nodes = np.array(getattr(self, name), dtype=np.float64, copy=True)
            if nodes.ndim != 2 or nodes.shape[1] != 2 or not len(nodes):
                raise ConfigError(f"network = es-hyperneat searches a 2-D substrate, but its {name} have coordinates "
                                  f"of shape {nodes.shape[1:]}: give every node [x, y] (a coordinates file for "
                                  f"images of several channels)")
            if not (np.abs(nodes) <= 1.0).all():
                raise ConfigError(f"substrate {name}: coordinates outside [-1, 1]: give every coordinate in [-1, 1]")
            nodes.setflags(write=False)
            object.__setattr__(self, name, nodes)
        points = [tuple(p) for p in np.concatenate([self.inputs, self.outputs]).tolist()]
        if len(set(points)) != len(points):
            twice = next(p for p in points if points.count(p) > 1)
            raise ConfigError(f"two substrate input or output nodes sit at {list(twice)}: ES-HyperNEAT finds nodes by "
                              f"their coordinates; give each node its own point")
        if self.io is not None and (self.io.inputs, self.io.outputs) != (len(self.inputs), len(self.outputs)):
            raise ConfigError(f"the substrate has {len(self.inputs)} input and {len(self.outputs)} output nodes but "
                              f"its sensors and actions have {self.io.inputs} values and {self.io.outputs} outputs")

    @property
    def num_inputs(self) -> int:
        return len(self.inputs)

    @property
    def num_outputs(self) -> int:
        return len(self.outputs)

    @property
    def activation(self) -> str:
        return self.params.activation

    def key(self) -> bytes:
        """A digest of everything a genome's network depends on (coordinates and parameters)."""
        digest = hashlib.blake2b(repr(self.params).encode(), digest_size=16)
        for nodes in (self.inputs, self.outputs):
            digest.update(repr(nodes.shape).encode() + np.ascontiguousarray(nodes).tobytes())
        return digest.digest()

    def with_winner(self, winner: Discovered | None) -> "EvolvableSubstrate":
        return replace(self, winner=winner)

    def __eq__(self, other) -> bool:
        if not isinstance(other, EvolvableSubstrate):
            return NotImplemented
        return self.key() == other.key() and self.io == other.io

    __hash__ = None


def make_es_substrate(io: IOShapes, coordinates: str | None = None, params: ESParams | None = None
                      ) -> EvolvableSubstrate:
    """The inputs and outputs HyperNEAT lays out for `io` (or the coordinates file gives), with
    the search's parameters; a file's hidden layers are refused (the search finds them)."""
    laid = make_substrate(io, "", coordinates)
    if len(laid.layers) != 2:
        raise ConfigError(f"substrate coordinates {coordinates!r} give hidden layers; network = es-hyperneat finds "
                          f"the hidden nodes itself: leave out \"hidden\"")
    if laid.dimensions != 2:
        raise ConfigError("network = es-hyperneat searches a 2-D substrate, but the sensors' channels (or the "
                          "coordinates file) make it 3-D: give [x, y] coordinates for every node in "
                          "substrate_coordinates")
    return EvolvableSubstrate(laid.layers[0], laid.layers[-1], params or ESParams(), io)


# ---------------------------------------------------------------- substrate.json

def es_to_dict(es: EvolvableSubstrate) -> dict:
    """The JSON-ready description of `es` (module docstring)."""
    io = es.io
    data = {"format": FORMAT, "version": VERSION, "params": {f.name: getattr(es.params, f.name)
                                                              for f in fields(ESParams)},
            "inputs": es.inputs.tolist(), "outputs": es.outputs.tolist(),
            "io": None if io is None else {"sensors": [list(s) for s in io.sensors], "continuous": io.continuous,
                                           "branches": list(io.branches)},
            "winner": None}
    if es.winner is not None:
        w = es.winner
        data["winner"] = {"hidden": w.hidden.tolist(),
                          "links": [[int(a), int(b), float(x)] for a, b, x in zip(w.sources, w.targets, w.weights)]}
    return data


def es_from_dict(data: dict, source: str = "substrate") -> EvolvableSubstrate:
    """The substrate an es_to_dict description holds; one-line errors for anything else."""
    if data.get("version") != VERSION:
        raise ConfigError(f"{source} is ES substrate format version {data.get('version')!r}; this neatpar reads "
                          f"version {VERSION}")
    try:
        io = None if data["io"] is None else IOShapes(tuple(tuple(s) for s in data["io"]["sensors"]),
                                                      int(data["io"]["continuous"]), tuple(data["io"]["branches"]))
        winner = None
        if data.get("winner") is not None:
            links = np.array(data["winner"]["links"], dtype=np.float64).reshape(-1, 3)
            winner = Discovered(np.array(data["winner"]["hidden"], dtype=np.float64).reshape(-1, 2),
                                links[:, 0].astype(np.int64), links[:, 1].astype(np.int64), links[:, 2].copy())
        return EvolvableSubstrate(np.array(data["inputs"], dtype=np.float64), np.array(data["outputs"], np.float64),
                                  ESParams(**data["params"]), io, winner)
    except ConfigError as error:
        raise ConfigError(f"{source}: {error}") from None
    except (KeyError, TypeError, ValueError) as error:
        raise ConfigError(f"{source} is not a complete ES substrate description ({type(error).__name__}: {error}): "
                          f"write it with neatpar") from None


def es_substrate_json(es: EvolvableSubstrate) -> str:
    """substrate.json's text for `es`: one key per line, one node or link per line."""
    data = es_to_dict(es)
    lines = [f" {json.dumps(key)}: {json.dumps(data[key])}," for key in ("format", "version", "params", "io")]
    for key in ("inputs", "outputs"):
        lines.append(f" {json.dumps(key)}: [\n" + ",\n".join(f"  {json.dumps(p)}" for p in data[key]) + "\n ],")
    if data["winner"] is None:
        lines.append(' "winner": null')
    else:
        hidden = ",\n".join(f"   {json.dumps(p)}" for p in data["winner"]["hidden"])
        links = ",\n".join(f"   {json.dumps(link)}" for link in data["winner"]["links"])
        lines.append(f' "winner": {{\n  "hidden": [\n{hidden}\n  ],\n  "links": [\n{links}\n  ]\n }}')
    return "{\n" + "\n".join(lines) + "\n}\n"
