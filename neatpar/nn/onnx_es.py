"""An ES-HyperNEAT genome's discovered network as an ONNX model for Unity ML-Agents, with the
contract of onnx_export.py (the same inputs, outputs, constants and policy, opset 9, IR version 4):
the search (es_hyperneat.py) run on the genome's CPPN, and the network it finds written node by
node as onnx_export writes a neat-python feed-forward network, from the population kernel's
tables of it. Each sensor comes as obs_i [batch, size_i], flattened, as for the other kinds.
"""
from __future__ import annotations

from typing import Any

import onnx

from ..environment import Layout
from ..errors import ExportError
from .es_hyperneat import discovered, network_tables
from .es_substrate import EvolvableSubstrate
from .onnx_export import _check_layout, _Network, _policy_outputs, policy_model
from .onnx_graph import OnnxGraph


def export_es_policy(genome, cppn_config: Any | None, es: EvolvableSubstrate, layout: Layout) -> onnx.ModelProto:
    """The ONNX model of the network `genome`'s CPPN discovers on `es` (without `cppn_config`,
    neat-python's defaults, as for a genome read from winner.json) acting on a behavior of `layout`."""
    _check_layout(layout)
    if (layout.inputs, layout.outputs) != (es.num_inputs, es.num_outputs):
        raise ExportError(f"the substrate has {es.num_inputs} inputs and {es.num_outputs} outputs but the behavior "
                          f"observes {layout.inputs} values (sensors {layout.observation_sizes}) and takes "
                          f"{layout.outputs} action values: export for the behavior the substrate was made for")
    found = discovered(genome, cppn_config, es)
    graph = OnnxGraph()
    network = _Network(graph, network_tables([found], es, [genome.key]), layout)
    _policy_outputs(graph, layout, network.evaluate(), 0)
    return policy_model(graph, "neatpar_es_policy", f"ES-HyperNEAT network of {len(found.hidden)} hidden nodes and "
                                                    f"{len(found.weights)} links ({es.activation}) of CPPN genome "
                                                    f"{genome.key}")
