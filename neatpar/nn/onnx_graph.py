"""Building an ONNX graph: nodes, shared constants, inputs and outputs (OnnxGraph), and neat-python's
built-in activations and aggregations as ONNX operators, which every exported network is made of."""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from .compile import BUILTIN_ACTIVATIONS, BUILTIN_AGGREGATIONS

BATCH = "batch"   # the batch dimension's name in every input and output shape


class OnnxGraph:
    """ONNX nodes, initializers and graph inputs/outputs under construction, with shared constants."""

    def __init__(self):
        self.nodes: list = []
        self.initializers: list = []
        self.inputs: list = []
        self.outputs: list = []
        self._constants: dict = {}
        self._count = 0

    def name(self, hint: str = "t") -> str:
        self._count += 1
        return f"{hint}_{self._count}"

    def op(self, op_type: str, inputs: Sequence[str], output: str | None = None, **attributes) -> str:
        output = output or self.name(op_type.lower())
        self.nodes.append(helper.make_node(op_type, list(inputs), [output], **attributes))
        return output

    def const(self, value: float, dtype=np.float32) -> str:
        """A scalar constant (float32 unless told), shared by every use of the same value."""
        array = np.array(value, dtype=dtype)
        key = (array.dtype.str, array.tobytes())
        if key not in self._constants:
            name = f"c_{len(self._constants)}"
            self.initializers.append(numpy_helper.from_array(array, name))
            self._constants[key] = name
        return self._constants[key]

    def add_input(self, name: str, shape: list) -> str:
        self.inputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, shape))
        return name

    def add_output(self, name: str, source: str, elem_type: int, shape: list) -> None:
        self.op("Identity", [source], name)
        self.outputs.append(helper.make_tensor_value_info(name, elem_type, shape))

    def add_constant_output(self, name: str, values) -> None:
        array = np.asarray(values, dtype=np.float32)
        self.initializers.append(numpy_helper.from_array(array, f"{name}_vector"))
        self.add_output(name, f"{name}_vector", TensorProto.FLOAT, list(array.shape))


# ---------------------------------------------------------------- activations and aggregations
# Each takes the graph and a [batch, 1] tensor (list of tensors) and returns the result's name;
# the comments give neat-python 2.0's definition.

def _clamp(g: OnnxGraph, z: str, lo: float, hi: float) -> str:
    return g.op("Clip", [z], min=lo, max=hi)


def _scaled_clamp(g: OnnxGraph, z: str, scale: float) -> str:
    return _clamp(g, g.op("Mul", [z, g.const(scale)]), -60.0, 60.0)


def _gauss(g: OnnxGraph, z: str) -> str:  # exp(-5 * clamp(z, 3.4) ** 2)
    c = _clamp(g, z, -3.4, 3.4)
    return g.op("Exp", [g.op("Mul", [g.op("Mul", [c, c]), g.const(-5.0)])])


def _softplus(g: OnnxGraph, z: str) -> str:  # 0.2 * log(1 + exp(clamp(5 z, 60)))
    exp = g.op("Exp", [_scaled_clamp(g, z, 5.0)])
    return g.op("Mul", [g.op("Log", [g.op("Add", [exp, g.const(1.0)])]), g.const(0.2)])


def _inv(g: OnnxGraph, z: str) -> str:  # 1 / z, and 0.0 where z == 0 (ZeroDivisionError)
    nonzero = g.op("Greater", [g.op("Abs", [z]), g.const(0.0)])
    return g.op("Where", [nonzero, g.op("Reciprocal", [z]), g.const(0.0)])


ACTIVATIONS: dict[str, Callable[[OnnxGraph, str], str]] = {
    "sigmoid": lambda g, z: g.op("Sigmoid", [_scaled_clamp(g, z, 5.0)]),          # 1/(1+exp(-clamp(5z)))
    "tanh": lambda g, z: g.op("Tanh", [_scaled_clamp(g, z, 2.5)]),                # tanh(clamp(2.5z))
    "sin": lambda g, z: g.op("Sin", [_scaled_clamp(g, z, 5.0)]),                  # sin(clamp(5z))
    "gauss": _gauss,
    "relu": lambda g, z: g.op("Relu", [z]),                                       # z if z > 0 else 0
    "elu": lambda g, z: g.op("Elu", [z], alpha=1.0),                              # z if z > 0 else exp(z) - 1
    "lelu": lambda g, z: g.op("LeakyRelu", [z], alpha=0.005),                     # z if z > 0 else 0.005 z
    "selu": lambda g, z: g.op("Selu", [z], alpha=1.6732632423543772, gamma=1.0507009873554805),
    "softplus": _softplus,
    "identity": lambda g, z: z,
    "clamped": lambda g, z: _clamp(g, z, -1.0, 1.0),
    "inv": _inv,
    "log": lambda g, z: g.op("Log", [g.op("Max", [z, g.const(1e-7)])]),           # log(max(1e-7, z))
    "exp": lambda g, z: g.op("Exp", [_clamp(g, z, -60.0, 60.0)]),                 # exp(clamp(z, 60))
    "abs": lambda g, z: g.op("Abs", [z]),
    "hat": lambda g, z: g.op("Relu", [g.op("Sub", [g.const(1.0), g.op("Abs", [z])])]),  # max(0, 1 - |z|)
    "square": lambda g, z: g.op("Mul", [z, z]),                                   # z ** 2
    "cube": lambda g, z: g.op("Mul", [g.op("Mul", [z, z]), z]),                   # z ** 3
}


def _fold(g: OnnxGraph, op_type: str, x: list[str]) -> str:
    return x[0] if len(x) == 1 else g.op(op_type, x)


def _product(g: OnnxGraph, x: list[str]) -> str:  # reduce(mul, x, 1.0), left to right
    acc = x[0]
    for term in x[1:]:
        acc = g.op("Mul", [acc, term])
    return acc


def _maxabs(g: OnnxGraph, x: list[str]) -> str:  # max(x, key=abs): the first of the largest magnitude
    best = x[0]
    for term in x[1:]:
        better = g.op("Greater", [g.op("Abs", [term]), g.op("Abs", [best])])
        best = g.op("Where", [better, term, best])
    return best


def _mean(g: OnnxGraph, x: list[str]) -> str:  # sum(x) / len(x)
    return g.op("Div", [_fold(g, "Sum", x), g.const(float(len(x)))])


def _median(g: OnnxGraph, x: list[str]) -> str:  # median2: mean of <= 2 values, else the sorted middle
    if len(x) <= 2:
        return _mean(g, x)
    values = list(x)
    for round_ in range(len(values)):  # odd-even transposition sort, ascending
        for i in range(round_ % 2, len(values) - 1, 2):
            a, b = values[i], values[i + 1]
            values[i], values[i + 1] = g.op("Min", [a, b]), g.op("Max", [a, b])
    middle = len(values) // 2
    if len(values) % 2:
        return values[middle]
    return g.op("Div", [g.op("Add", [values[middle - 1], values[middle]]), g.const(2.0)])


AGGREGATIONS: dict[str, Callable[[OnnxGraph, list[str]], str]] = {
    "sum": lambda g, x: _fold(g, "Sum", x),
    "product": _product,
    "max": lambda g, x: _fold(g, "Max", x),
    "min": lambda g, x: _fold(g, "Min", x),
    "maxabs": _maxabs,
    "median": _median,
    "mean": _mean,
}
EMPTY_AGGREGATE = {"product": 1.0}  # every other aggregation of no inputs is 0.0

assert set(ACTIVATIONS) == set(BUILTIN_ACTIVATIONS) and set(AGGREGATIONS) == set(BUILTIN_AGGREGATIONS)
