"""The network kinds' engines: for each kind the settings know (config/networks.py: its name, help
and rules), how a population of its genomes becomes one population kernel that steps them all
(kernel.py) and how one of its genomes becomes an ONNX model for Unity (onnx_export.py). The
runner and the winner's model files ask here, with the settings' kind; nothing else compares a
network's name.

A new kind is one entry in ENGINES (beside its entry in config/networks.py).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from ..config.networks import NetworkKind
from ..types.environment import Layout
from .kernel import CTRNNPopulation, FeedForwardPopulation, RecurrentPopulation


@dataclass(frozen=True)
class NetworkEngine:
    """How a kind of network runs: `kernel(genomes, neat_config, settings)` is the population kernel
    of `genomes` (genome objects, in order), `export(genome, neat_config, layout, settings)` the ONNX
    model of one genome acting on a behavior of `layout`."""
    kernel: Callable[[list, Any, Any], Any]
    export: Callable[[Any, Any, Layout, Any], Any]


def _export(recurrent: bool = False, ctrnn: bool = False) -> Callable[[Any, Any, Layout, Any], Any]:
    """The exporter of neat-python's FeedForwardNetwork, RecurrentNetwork or CTRNN (its clock from
    the settings); onnx is imported when a model is first written, not with the runner."""
    def export(genome, neat_config: Any, layout: Layout, settings: Any):
        from .onnx_export import export_policy
        clock = (settings.ctrnn_decision_time, settings.ctrnn_time_step) if ctrnn else None
        return export_policy(genome, neat_config, layout, recurrent=recurrent, ctrnn=clock)
    return export


def _feedforward_kernel(genomes: list, neat_config: Any, settings: Any) -> FeedForwardPopulation:
    return FeedForwardPopulation.create(genomes, neat_config)


def _recurrent_kernel(genomes: list, neat_config: Any, settings: Any) -> RecurrentPopulation:
    return RecurrentPopulation.create(genomes, neat_config)


def _ctrnn_kernel(genomes: list, neat_config: Any, settings: Any) -> CTRNNPopulation:
    return CTRNNPopulation.create(genomes, neat_config, settings.ctrnn_decision_time, settings.ctrnn_time_step)


ENGINES: dict[str, NetworkEngine] = {
    "feedforward": NetworkEngine(_feedforward_kernel, _export()),
    "recurrent": NetworkEngine(_recurrent_kernel, _export(recurrent=True)),
    "ctrnn": NetworkEngine(_ctrnn_kernel, _export(ctrnn=True)),
}


def engine(kind: NetworkKind) -> NetworkEngine:
    """The engine of `kind` (a settings' `network_kind`)."""
    return ENGINES[kind.name]
