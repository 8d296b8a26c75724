"""HyperNEAT substrates: where the nodes of a substrate network sit, layer by layer, and what the
network computes with the weights a CPPN paints on it (hyperneat.py holds the query).

A substrate is a fixed feed-forward network: its layers (inputs, hidden layers, outputs) are
connected consecutively, every node of a layer to every node of the next. Each node has
coordinates in [-1, 1], 2 or 3 of them (the same number for every node). The input layer's nodes
are the flattened observation's values in order (sensors in the behavior's order, each sensor of
shape (H, W, C) flattened in C order: row, column, channel); the output layer's are the network's
outputs in order (the continuous actions, then each discrete branch's scores). Every hidden and
output node computes neat-python's `act(bias + 1.0 * sum(value_i * weight_i))` with one activation
for the whole substrate (`tanh` by default: neat-python's tanh(2.5 z), symmetric around 0 and in
[-1, 1], the range of ML-Agents' continuous actions, where neat-python's sigmoid would put a
neutral input at 0.5).

The default layout (`make_substrate`) puts each layer in the square [-1, 1]^2:

- lines: a layer of n nodes in a row, x at the centres of n equal cells of [-1, 1]; a line sits
  at its layer's level y: -1 for the inputs, +1 for the outputs, hidden layers evenly between
  (the levels keep the CPPN's queries of different layer pairs apart);
- grids: H x W nodes over the whole square, x at the centres of W columns, y at the centres of H
  rows, row 0 at the top (y near +1), as an image is drawn;
- several sensors side by side: the x range is cut into one equal slot per sensor, each sensor
  laid out in its own slot (a vector sensor as a line at y = -1, an image as a grid);
- channels: a sensor of C > 1 channels puts its channels on a third coordinate z, at the centres
  of C cells of [-1, 1] (every other node at z = 0), which makes the substrate 3-D (a CPPN of 7
  inputs). A third coordinate keeps every pixel's (x, y) the same in each channel, so the CPPN
  paints a channel with the same spatial pattern and varies it smoothly with z; channels laid
  side by side would put a pixel's colours far apart. Substrates without channels stay 2-D, the
  2009 paper's (a CPPN of 5 inputs).

Hidden layers are given by a spec like `8x8, 16` (a grid of 8 rows and 8 columns, then a line of
16). A user who knows the geometry (a ray sensor's angles, a car's sensor positions) gives any
layer's coordinates in a JSON file (`read_coordinates`):

    {"inputs":  [[x, y], ...],            one entry per observation value, in order
     "hidden":  [[[x, y], ...], ...],     the hidden layers, each a list of nodes (replaces the spec)
     "outputs": [[x, y], ...]}            one entry per output, in order

every key optional (the default layout for a missing one), every node with 2 or 3 coordinates in
[-1, 1] (3 makes the substrate 3-D; the 2-D layers then get z = 0).
"""
from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from ..errors import ConfigError
from .compile import BUILTIN_ACTIVATIONS

DEFAULT_ACTIVATION = "tanh"


@dataclass(frozen=True)
class IOShapes:
    """What a behavior observes and does, as a substrate lays it out: each sensor's shape in the
    behavior's order ((n,) a vector, (H, W) a grid, (H, W, C) an image of C channels), the number
    of continuous actions and the sizes of the discrete branches."""
    sensors: tuple[tuple[int, ...], ...]
    continuous: int
    branches: tuple[int, ...] = ()

    def __post_init__(self):
        object.__setattr__(self, "sensors", tuple(tuple(int(d) for d in s) for s in self.sensors))
        object.__setattr__(self, "branches", tuple(int(b) for b in self.branches))
        for shape in self.sensors:
            if not 1 <= len(shape) <= 3 or min(shape) < 1:
                raise ConfigError(f"sensor shape {shape} cannot be laid out: give (n,), (H, W) or (H, W, C) with "
                                  f"sizes >= 1")
        if not self.sensors:
            raise ConfigError("a substrate needs at least one sensor")
        if self.continuous < 0 or min(self.branches, default=1) < 1 or self.outputs < 1:
            raise ConfigError(f"actions ({self.continuous} continuous, branches {self.branches}) cannot be laid out: "
                              f"give at least one action, counts >= 0 and branch sizes >= 1")

    @classmethod
    def vectors(cls, observation_sizes: Sequence[int], continuous: int, branches: Sequence[int] = ()) -> "IOShapes":
        """Every sensor a vector of the given flattened size (a behavior whose shapes are not known)."""
        return cls(tuple((int(n),) for n in observation_sizes), continuous, tuple(branches))

    @property
    def inputs(self) -> int:
        return sum(math.prod(s) for s in self.sensors)

    @property
    def outputs(self) -> int:
        return self.continuous + sum(self.branches)

    @property
    def channels(self) -> int:
        """The most channels of any sensor (1 without images)."""
        return max((s[2] for s in self.sensors if len(s) == 3), default=1)


@dataclass(frozen=True)
class Query:
    """How a CPPN's outputs become the substrate's parameters (hyperneat.py gives the definition):
    weights of magnitude at most `threshold` are 0, the rest scaled to at most `max_weight`;
    `bias`: the CPPN's next output gives each hidden and output node a bias; `leo`: the CPPN's
    last output expresses a link only where it is > 0 (link expression output)."""
    threshold: float = 0.2
    max_weight: float = 5.0
    bias: bool = False
    leo: bool = False

    def __post_init__(self):
        object.__setattr__(self, "threshold", float(self.threshold))
        object.__setattr__(self, "max_weight", float(self.max_weight))
        if not 0.0 <= self.threshold < 1.0:
            raise ConfigError(f"threshold = {self.threshold!r}: give a CPPN output magnitude in [0, 1) below which "
                              f"a weight is 0")
        if not (math.isfinite(self.max_weight) and self.max_weight > 0.0):
            raise ConfigError(f"max_weight = {self.max_weight!r}: give the largest weight magnitude, a finite "
                              f"number > 0")

    @property
    def outputs(self) -> int:
        """The CPPN outputs the query reads: the weight, then the bias, then link expression."""
        return 1 + self.bias + self.leo

    @property
    def bias_output(self) -> int:
        """The CPPN output that gives the biases (-1 without)."""
        return 1 if self.bias else -1

    @property
    def leo_output(self) -> int:
        """The CPPN output that expresses links (-1 without)."""
        return self.outputs - 1 if self.leo else -1

    def output_names(self) -> list[str]:
        return ["weight"] + ["bias"] * self.bias + ["link expression"] * self.leo


@dataclass(frozen=True, eq=False)
class Substrate:
    """A substrate network's geometry and function: the node coordinates of each layer (inputs
    first, outputs last; float64 arrays of shape (nodes, dimensions)), the nodes' activation (a
    neat-python built-in), the query's parameters, and the sensors and actions it was laid out
    for (None for coordinates given without them)."""
    layers: tuple[np.ndarray, ...]
    activation: str = DEFAULT_ACTIVATION
    query: Query = field(default_factory=Query)
    io: IOShapes | None = None

    def __post_init__(self):
        layers = tuple(np.array(layer, dtype=np.float64, copy=True) for layer in self.layers)
        for layer in layers:
            layer.setflags(write=False)
        object.__setattr__(self, "layers", layers)
        if len(layers) < 2:
            raise ConfigError(f"a substrate needs an input and an output layer; got {len(layers)} layer(s)")
        dims = {layer.shape[1] if layer.ndim == 2 else -1 for layer in layers}
        if len(dims) != 1 or not dims <= {2, 3}:
            raise ConfigError(f"substrate layers have coordinate shapes {[layer.shape for layer in layers]}: give "
                              f"every node 2 coordinates or every node 3")
        for name, layer in zip(layer_names(len(layers)), layers):
            check_coordinates(layer, name)
        if self.activation not in BUILTIN_ACTIVATIONS:
            raise ConfigError(f"substrate activation {self.activation!r} is not one of neat-python's built-in "
                              f"activations: choose one of {', '.join(BUILTIN_ACTIVATIONS)}")
        if self.io is not None and (self.io.inputs, self.io.outputs) != (self.sizes[0], self.sizes[-1]):
            raise ConfigError(f"the substrate has {self.sizes[0]} input and {self.sizes[-1]} output nodes but its "
                              f"sensors and actions have {self.io.inputs} values and {self.io.outputs} outputs")

    @property
    def dimensions(self) -> int:
        return int(self.layers[0].shape[1])

    @property
    def sizes(self) -> tuple[int, ...]:
        return tuple(len(layer) for layer in self.layers)

    @property
    def num_inputs(self) -> int:
        return self.sizes[0]

    @property
    def num_outputs(self) -> int:
        return self.sizes[-1]

    @property
    def cppn_inputs(self) -> int:
        """The CPPN reads the source's coordinates, the target's, and 1.0."""
        return 2 * self.dimensions + 1

    def cppn_input_names(self) -> list[str]:
        axes = "xyz"[:self.dimensions]
        return [f"{a}_source" for a in axes] + [f"{a}_target" for a in axes] + ["1.0"]

    @property
    def parameters(self) -> int:
        """Weights and biases of one substrate network (doubles of one phenotype)."""
        sizes = self.sizes
        return sum(a * b + b for a, b in zip(sizes, sizes[1:]))

    def key(self) -> bytes:
        """A digest of everything the weights depend on (coordinates and query), equal for equal
        substrates whatever their activation."""
        digest = hashlib.blake2b(digest_size=16)
        q = self.query
        digest.update(repr((self.sizes, self.dimensions, q.threshold, q.max_weight, q.bias, q.leo)).encode())
        for layer in self.layers:
            digest.update(np.ascontiguousarray(layer).tobytes())
        return digest.digest()

    def __eq__(self, other) -> bool:
        if not isinstance(other, Substrate):
            return NotImplemented
        return ((self.activation, self.query, self.io) == (other.activation, other.query, other.io)
                and self.sizes == other.sizes and self.dimensions == other.dimensions
                and all(np.array_equal(a.view(np.int64), b.view(np.int64)) for a, b in zip(self.layers, other.layers)))

    __hash__ = None


def layer_names(count: int) -> list[str]:
    """inputs, hidden 1, ..., outputs."""
    return ["inputs"] + [f"hidden {k}" for k in range(1, count - 1)] + ["outputs"]


def check_coordinates(layer: np.ndarray, name: str) -> None:
    """One line naming the first node of `layer` outside [-1, 1] (or not a number)."""
    if len(layer) == 0:
        raise ConfigError(f"substrate layer {name!r} has no nodes: give every layer at least one")
    bad = ~(np.abs(layer) <= 1.0).all(axis=1)
    if bad.any():
        node = int(np.argmax(bad))
        raise ConfigError(f"substrate layer {name!r}, node {node}: coordinates {layer[node].tolist()} are not all in "
                          f"[-1, 1]")


# ---------------------------------------------------------------- hidden layer specs

def parse_hidden(spec: str) -> tuple[tuple[int, ...], ...]:
    """`8x8, 16` -> ((8, 8), (16,)): comma-separated layers, each a line `n` or a grid `HxW`."""
    layers = []
    for part in (p.strip() for p in str(spec).split(",")):
        if not part:
            if "," in str(spec):
                raise ConfigError(f"hidden layers {spec!r}: an empty layer between commas; write layers like "
                                  f"'8x8, 16'")
            continue
        sizes = part.lower().replace(" ", "").split("x")
        if len(sizes) > 2 or not all(s.isdigit() and int(s) > 0 for s in sizes):
            raise ConfigError(f"hidden layer {part!r} in {spec!r}: write a line as its node count ('16') and a grid "
                              f"as rows x columns ('8x8'), sizes >= 1")
        layers.append(tuple(int(s) for s in sizes))
    return tuple(layers)


# ---------------------------------------------------------------- the default layout

def centres(count: int, low: float = -1.0, high: float = 1.0) -> np.ndarray:
    """The centres of `count` equal cells of [low, high] (one rounding each, so that cells
    mirrored about the middle of [-1, 1] get coordinates of opposite sign)."""
    odd = 2 * np.arange(count) + 1
    return ((2 * count - odd) * low + odd * high) / (2 * count)


def line(count: int, level: float, low: float = -1.0, high: float = 1.0) -> np.ndarray:
    """(count, 3): a row of nodes at height `level`, z = 0."""
    nodes = np.zeros((count, 3))
    nodes[:, 0] = centres(count, low, high)
    nodes[:, 1] = level
    return nodes


def grid(rows: int, columns: int, channels: int = 1, low: float = -1.0, high: float = 1.0) -> np.ndarray:
    """(rows * columns * channels, 3) in C order (row, column, channel): x over the columns of
    [low, high], y over the rows of [-1, 1] from the top, z over the channels."""
    y, x, z = np.meshgrid(centres(rows)[::-1], centres(columns, low, high),
                          centres(channels) if channels > 1 else np.zeros(1), indexing="ij")
    return np.stack([x.ravel(), y.ravel(), z.ravel()], axis=1)


def level(k: int, layers: int) -> float:
    """Layer k's height: -1 for the inputs, +1 for the outputs, hidden layers evenly between."""
    return (2 * k - (layers - 1)) / (layers - 1)


def input_layout(io: IOShapes) -> np.ndarray:
    """The sensors side by side, each in its slot of the x range (3 coordinates)."""
    parts, slots = [], len(io.sensors)
    for k, shape in enumerate(io.sensors):
        low, high = -1.0 + 2.0 * k / slots, -1.0 + 2.0 * (k + 1) / slots
        if len(shape) == 1:
            parts.append(line(shape[0], -1.0, low, high))
        else:
            parts.append(grid(shape[0], shape[1], shape[2] if len(shape) == 3 else 1, low, high))
    return np.concatenate(parts)


def hidden_layout(shape: tuple[int, ...], k: int, layers: int) -> np.ndarray:
    """Hidden layer k (1-based): a grid over the square, or a line at its level."""
    return grid(*shape) if len(shape) == 2 else line(shape[0], level(k, layers))


def default_layers(io: IOShapes, hidden: Sequence[tuple[int, ...]]) -> list[np.ndarray]:
    """Every layer's default coordinates (3 each; z = 0 except for channels)."""
    count = len(hidden) + 2
    return ([input_layout(io)] + [hidden_layout(shape, k + 1, count) for k, shape in enumerate(hidden)]
            + [line(io.outputs, 1.0)])


# ---------------------------------------------------------------- coordinates from a file

def read_json(path: str, what: str):
    """What the JSON file at `path` holds; one line naming `what` and the path when it cannot be
    read or is not JSON."""
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except OSError as error:
        raise ConfigError(f"{what} {path!r}: cannot read it ({error.strerror})") from None
    except json.JSONDecodeError as error:
        raise ConfigError(f"{what} {path!r} is not JSON ({error.msg}, line {error.lineno})") from None


def read_coordinates(path: str) -> dict[str, list[np.ndarray]]:
    """A coordinates file (module docstring): {"inputs": [array], "hidden": [arrays], "outputs":
    [array]} for the keys it has."""
    data = read_json(path, "substrate coordinates")
    if not isinstance(data, dict) or not data or set(data) - {"inputs", "hidden", "outputs"}:
        raise ConfigError(f"substrate coordinates {path!r}: give an object with any of the keys \"inputs\", "
                          f"\"hidden\", \"outputs\" (and no others)")
    found = {}
    for name in ("inputs", "outputs"):
        if name in data:
            found[name] = [_nodes(data[name], f"{path!r} {name}")]
    if "hidden" in data:
        if not isinstance(data["hidden"], list):
            raise ConfigError(f"substrate coordinates {path!r} hidden: give a list of layers, each a list of nodes")
        found["hidden"] = [_nodes(layer, f"{path!r} hidden layer {k + 1}") for k, layer in enumerate(data["hidden"])]
    return found


def _nodes(value, where: str) -> np.ndarray:
    """A list of [x, y] or [x, y, z] in [-1, 1] as an array, with a one-line error for anything
    else (naming the file, the layer and the node, the point as the file has it)."""
    ok = (isinstance(value, list) and value and all(isinstance(n, list) and len(n) in (2, 3) for n in value)
          and len({len(n) for n in value}) == 1
          and all(isinstance(c, (int, float)) and not isinstance(c, bool) for n in value for c in n))
    if not ok:
        raise ConfigError(f"substrate coordinates {where}: give a non-empty list of nodes, each [x, y] or [x, y, z] "
                          f"(numbers, the same count for every node)")
    for node, point in enumerate(value):   # here, where the file and the point as written are known
        for axis, coordinate in zip("xyz", point):
            if not abs(coordinate) <= 1.0:
                raise ConfigError(f"substrate coordinates {where}, node {node}: {json.dumps(point)} has {axis} = "
                                  f"{json.dumps(coordinate)}, outside [-1, 1]: give every coordinate in [-1, 1]")
    return np.array(value, dtype=np.float64)


# ---------------------------------------------------------------- a substrate for a behavior

def make_substrate(io: IOShapes, hidden: str | Sequence[tuple[int, ...]] = "", coordinates: str | None = None,
                   activation: str = DEFAULT_ACTIVATION, query: Query | None = None) -> Substrate:
    """The substrate for a behavior's sensors and actions: hidden layers from the spec (`8x8, 16`),
    the default layout (module docstring) for every layer the coordinates file does not give."""
    shapes = parse_hidden(hidden) if isinstance(hidden, str) else tuple(tuple(h) for h in hidden)
    given = read_coordinates(coordinates) if coordinates else {}
    if "hidden" in given and shapes:
        raise ConfigError(f"hidden layers are given twice (the spec {hidden!r} and the coordinates file "
                          f"{coordinates!r}): keep one")
    if "hidden" in given:
        shapes = tuple((len(layer),) for layer in given["hidden"])
    layers = default_layers(io, shapes)
    chosen = [False] * len(layers)   # given by the file, else the default layout (3 coordinates, z = 0 but channels)
    if "hidden" in given:
        layers[1:-1] = given["hidden"]
        chosen[1:-1] = [True] * len(given["hidden"])
    for name, index, count in (("inputs", 0, io.inputs), ("outputs", -1, io.outputs)):
        if name in given:
            if len(given[name][0]) != count:
                raise ConfigError(f"substrate coordinates {coordinates!r} give {len(given[name][0])} {name} but the "
                                  f"behavior has {count} {'observation values' if index == 0 else 'outputs'}")
            layers[index], chosen[index] = given[name][0], True
    three_d = any(layer.shape[1] == 3 and (mine or bool(np.any(layer[:, 2] != 0.0)))
                  for layer, mine in zip(layers, chosen))
    return Substrate(tuple(_dimensions(layer, 3 if three_d else 2) for layer in layers), activation,
                     query or Query(), io)


def _dimensions(layer: np.ndarray, dims: int) -> np.ndarray:
    """The layer with `dims` coordinates: a third column of zeros added, or the (zero) z dropped."""
    if layer.shape[1] == dims:
        return layer
    if layer.shape[1] < dims:
        return np.concatenate([layer, np.zeros((len(layer), dims - layer.shape[1]))], axis=1)
    return layer[:, :dims]
