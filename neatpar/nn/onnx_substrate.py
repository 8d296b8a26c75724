"""A HyperNEAT genome's substrate network as an ONNX model for Unity ML-Agents (Sentis in
com.unity.ml-agents 3.x, Barracuda in 2.x), with the contract of onnx_export.py: the same inputs,
outputs, constants, policy (continuous actions clipped to [-1, 1], each branch the first highest
score its mask allows), opset 9 and IR version 4, built with its graph builder.

The network is the substrate population's (hyperneat.py): every layer one MatMul by its weights
(sources x targets), an Add of its biases and the substrate's activation (onnx_export's
definitions of neat-python's functions), in float32 as Unity computes.

Observations come as ML-Agents' own exports declare them (its ModelSerializer._get_onnx_shape):
a vector sensor as obs_i [batch, n], a 2-D sensor as [batch, H, W], an image sensor of shape
(H, W, C) channels first, [batch, C, H, W] (ONNX's NCHW; ML-Agents' visual encoders take NCHW
while exporting, and its C# ObservationWriter writes obs[batch, c, h, w] into that tensor). The
model transposes an image back to [batch, H, W, C] and flattens it, so the substrate's input
nodes see the flattened (H, W, C) order, as the substrate population does. Operators beyond
onnx_export's: MatMul and Transpose, on Sentis' and Barracuda's supported lists.

Precision: float32 weights and sums of up to thousands of terms; tests/test_onnx_substrate.py
measures the deviation from the substrate population's float64 outputs.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np
import onnx
from onnx import numpy_helper

from ..environment import Layout
from ..errors import ExportError
from .hyperneat import Phenotype, phenotype
from .onnx_export import _check_layout, _policy_outputs, policy_model
from .onnx_graph import ACTIVATIONS, BATCH, OnnxGraph
from .substrate import IOShapes, Substrate


def onnx_shape(shape: tuple[int, ...]) -> list[int]:
    """A sensor's input shape after the batch, as ML-Agents' exporter declares it: (H, W, C) as
    [C, H, W], any other shape as it is."""
    return [shape[2], shape[0], shape[1]] if len(shape) == 3 else list(shape)


def export_substrate_policy(genome, cppn_config: Any | None, substrate: Substrate,
                            io: IOShapes | None = None) -> onnx.ModelProto:
    """The ONNX model of `genome`'s substrate network (its CPPN queried over `substrate`; without
    `cppn_config`, neat-python's defaults, as for a genome read from winner.json) acting on a
    behavior with sensors and actions `io` (default: those the substrate was laid out for)."""
    io = io or substrate.io
    if io is None:
        raise ExportError("the substrate was made from coordinates alone: give the behavior's sensor shapes and "
                          "actions (io) to export it")
    if (io.inputs, io.outputs) != (substrate.num_inputs, substrate.num_outputs):
        raise ExportError(f"the substrate has {substrate.num_inputs} inputs and {substrate.num_outputs} outputs but "
                          f"the behavior observes {io.inputs} values (sensors {list(io.sensors)}) and takes "
                          f"{io.outputs} action values: export for the behavior the substrate was made for")
    layout = Layout(tuple(math.prod(s) for s in io.sensors), io.continuous, io.branches)
    _check_layout(layout)
    return substrate_model(phenotype(genome, cppn_config, substrate), substrate, io, layout, genome.key)


def substrate_model(weights: Phenotype, substrate: Substrate, io: IOShapes, layout: Layout, key) -> onnx.ModelProto:
    """The model of one phenotype (weights and biases) on `substrate`."""
    g = OnnxGraph()
    values = _observations(g, io)
    activation = ACTIVATIONS[substrate.activation]
    for k, (w, b) in enumerate(zip(weights.weights, weights.biases)):
        w_name, b_name = f"substrate_weights_{k}", f"substrate_biases_{k}"
        g.initializers += [numpy_helper.from_array(w.astype(np.float32), w_name),
                           numpy_helper.from_array(b.astype(np.float32), b_name)]
        values = activation(g, g.op("Add", [g.op("MatMul", [values, w_name]), b_name]))
    columns = [g.op("Slice", [values], axes=[1], starts=[j], ends=[j + 1]) for j in range(substrate.num_outputs)]
    _policy_outputs(g, layout, columns, 0)
    return policy_model(g, "neatpar_substrate_policy", f"HyperNEAT substrate network {list(substrate.sizes)} "
                                                       f"({substrate.activation}) of CPPN genome {key}")


def _observations(g: OnnxGraph, io: IOShapes) -> str:
    """[batch, inputs]: every sensor's input flattened in the order the substrate's input nodes
    follow ((H, W, C) in C order), sensors side by side."""
    parts = []
    for i, shape in enumerate(io.sensors):
        obs = g.add_input(f"obs_{i}", [BATCH] + onnx_shape(shape))
        if len(shape) == 3:
            obs = g.op("Transpose", [obs], perm=[0, 2, 3, 1])   # [batch, C, H, W] -> [batch, H, W, C]
        parts.append(g.op("Flatten", [obs], axis=1) if len(shape) > 1 else obs)
    return parts[0] if len(parts) == 1 else g.op("Concat", parts, axis=1)
