"""substrate.json: a substrate written and read in one place, so that a HyperNEAT genome
(winner.json) and this file rebuild its network exactly (hyperneat.py gives the definition).

    {
      "format": "neatpar-substrate", "version": 1,
      "dimensions": 2,                                   coordinates per node (2 or 3)
      "activation": "tanh",                              every hidden and output node's, neat-python's
      "query": {"threshold": 0.2, "max_weight": 5.0,     hyperneat.py's query and options
                "bias": false, "leo": false},
      "cppn": {"inputs": ["x_source", "y_source", "x_target", "y_target", "1.0"],
               "outputs": ["weight"]},                   what the CPPN reads and gives, in order
      "layers": [{"name": "inputs", "coordinates": [[x, y], ...]},
                 {"name": "hidden 1", "coordinates": [...]},
                 {"name": "outputs", "coordinates": [...]}],   in order, each node's coordinates
      "io": {"sensors": [[84, 84, 1]], "continuous": 5, "branches": []}
    }                                                    the sensors and actions it was laid out for
                                                         (null without them)

Coordinates are written as Python's repr of each float64, so they read back to the same bits.
"cppn" is derived from "dimensions" and "query"; a file whose "cppn" disagrees with them was edited
by hand and is refused.
"""
from __future__ import annotations

import json
import os

import numpy as np

from ..errors import ConfigError
from .es_substrate import FORMAT as ES_FORMAT, EvolvableSubstrate, es_from_dict, es_substrate_json
from .substrate import IOShapes, Query, Substrate, layer_names, read_json

FORMAT = "neatpar-substrate"
VERSION = 1


def substrate_to_dict(substrate: Substrate) -> dict:
    """The JSON-ready description of `substrate` (module docstring)."""
    q, io = substrate.query, substrate.io
    return {
        "format": FORMAT, "version": VERSION, "dimensions": substrate.dimensions,
        "activation": substrate.activation,
        "query": {"threshold": q.threshold, "max_weight": q.max_weight, "bias": q.bias, "leo": q.leo},
        "cppn": {"inputs": substrate.cppn_input_names(), "outputs": q.output_names()},
        "layers": [{"name": name, "coordinates": layer.tolist()}
                   for name, layer in zip(layer_names(len(substrate.layers)), substrate.layers)],
        "io": None if io is None else {"sensors": [list(s) for s in io.sensors], "continuous": io.continuous,
                                       "branches": list(io.branches)},
    }


def substrate_from_dict(data: dict, source: str = "substrate") -> Substrate | EvolvableSubstrate:
    """The substrate a substrate_to_dict description holds; one-line errors for anything else."""
    if isinstance(data, dict) and data.get("format") == ES_FORMAT:   # an es-hyperneat run's (es_substrate.py)
        return es_from_dict(data, source)
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ConfigError(f"{source} is not a neatpar substrate (no \"format\": \"{FORMAT}\"): use the "
                          f"substrate.json of a HyperNEAT run folder")
    if data.get("version") != VERSION:
        raise ConfigError(f"{source} is substrate format version {data.get('version')!r}; this neatpar reads "
                          f"version {VERSION}")
    try:
        query = Query(**data["query"])
        io = None if data["io"] is None else IOShapes(tuple(tuple(s) for s in data["io"]["sensors"]),
                                                      int(data["io"]["continuous"]), tuple(data["io"]["branches"]))
        layers = tuple(np.array(layer["coordinates"], dtype=np.float64) for layer in data["layers"])
        substrate = Substrate(layers, data["activation"], query, io)
    except ConfigError as error:
        raise ConfigError(f"{source}: {error}") from None
    except (KeyError, TypeError, ValueError) as error:
        raise ConfigError(f"{source} is not a complete substrate description ({type(error).__name__}: {error}): "
                          f"write it with neatpar") from None
    if substrate.dimensions != data.get("dimensions") or data.get("cppn") != substrate_to_dict(substrate)["cppn"]:
        raise ConfigError(f"{source}: \"dimensions\" and \"cppn\" do not match the coordinates and query (edited by "
                          f"hand?): write it with neatpar")
    return substrate


def substrate_json(substrate: Substrate) -> str:
    """substrate.json's text: one key per line, one node per line."""
    data = substrate_to_dict(substrate)
    lines = [f" {json.dumps(key)}: {json.dumps(value)}," for key, value in data.items() if key != "layers"]
    layers = []
    for layer in data["layers"]:
        nodes = ",\n".join(f"    {json.dumps(node)}" for node in layer["coordinates"])
        layers.append(f"  {{\"name\": {json.dumps(layer['name'])}, \"coordinates\": [\n{nodes}\n  ]}}")
    lines.append(' "layers": [\n' + ",\n".join(layers) + "\n ]")
    return "{\n" + "\n".join(lines) + "\n}\n"


def write_substrate(substrate: Substrate | EvolvableSubstrate, path: str) -> None:
    """Write substrate.json (to a temporary file first, then in its place)."""
    partial = f"{path}.partial"
    with open(partial, "w", encoding="utf-8") as f:
        f.write(es_substrate_json(substrate) if isinstance(substrate, EvolvableSubstrate) else substrate_json(substrate))
    os.replace(partial, path)


def read_substrate(path: str) -> Substrate | EvolvableSubstrate:
    """The substrate a substrate.json holds."""
    return substrate_from_dict(read_json(path, "substrate"), repr(path))
