"""The network kinds' engines: for each kind the settings know (config/network_kinds.py: its name, help
and rules), how a population of its genomes becomes one population kernel that steps them all
(kernel.py) and how one of its genomes becomes an ONNX model for Unity (onnx_export.py). The
runner and the winner's model files ask here, with the settings' kind; nothing else compares a
network's name.

A kind whose networks are laid out on the game's geometry (hyperneat: a substrate with one input
node per observation value) has a `geometry`: made once per run from the behaviors' Layout, the
settings and the neat config (`run_geometry`), and passed to its kernel and its export; other
kinds' geometry is None.

A new kind is one entry in ENGINES (beside its entry in config/network_kinds.py).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from ..config.network_kinds import NetworkKind
from ..errors import ConfigError
from ..environment import Layout
from .es_hyperneat import check_es_cppn_config, es_population
from .es_substrate import ESParams, EvolvableSubstrate, make_es_substrate
from .hyperneat import check_cppn_config
from .kernel import CTRNNPopulation, FeedForwardPopulation, RecurrentPopulation
from .substrate import IOShapes, Query, Substrate, make_substrate
from .substrate_population import SubstratePopulation


@dataclass(frozen=True)
class NetworkEngine:
    """How a kind of network runs: `kernel(genomes, neat_config, settings, geometry)` is the
    population kernel of `genomes` (genome objects, in order), `export(genome, neat_config, layout,
    settings, geometry)` the ONNX model of one genome acting on a behavior of `layout`;
    `geometry(layout, settings, neat_config)` (None for kinds that need none) is what the networks
    are laid out on, made once per run (it has `num_inputs` and `num_outputs`)."""
    kernel: Callable[[list, Any, Any, Any], Any]
    export: Callable[[Any, Any, Layout, Any, Any], Any]
    geometry: Callable[[Layout, Any, Any], Any] | None = None


def _export(recurrent: bool = False, ctrnn: bool = False) -> Callable[[Any, Any, Layout, Any, Any], Any]:
    """The exporter of neat-python's FeedForwardNetwork, RecurrentNetwork or CTRNN (its clock from
    the settings); onnx is imported when a model is first written, not with the runner."""
    def export(genome, neat_config: Any, layout: Layout, settings: Any, geometry: Any = None):
        from .onnx_export import export_policy
        clock = (settings.ctrnn_decision_time, settings.ctrnn_time_step) if ctrnn else None
        return export_policy(genome, neat_config, layout, recurrent=recurrent, ctrnn=clock)
    return export


def _feedforward_kernel(genomes: list, neat_config: Any, settings: Any, geometry: Any = None) -> FeedForwardPopulation:
    return FeedForwardPopulation.create(genomes, neat_config)


def _recurrent_kernel(genomes: list, neat_config: Any, settings: Any, geometry: Any = None) -> RecurrentPopulation:
    return RecurrentPopulation.create(genomes, neat_config)


def _ctrnn_kernel(genomes: list, neat_config: Any, settings: Any, geometry: Any = None) -> CTRNNPopulation:
    return CTRNNPopulation.create(genomes, neat_config, settings.ctrnn_decision_time, settings.ctrnn_time_step)


def io_shapes(layout: Layout) -> IOShapes:
    """The sensors and actions of `layout` as a substrate lays them out (each sensor's shape; a
    layout of sizes alone as vectors). A channels-first image is refused: its values come in
    (channels, height, width) order, and a substrate's grid and ML-Agents' model input take (height,
    width, channels) images."""
    for k, sensor in enumerate(layout.sensor_shapes):
        if sensor.channels_first:
            raise ConfigError(f"sensor {k} sends its image channels first {sensor.shape}; network = hyperneat lays "
                              f"images out as (height, width, channels): send it compressed (PNG) or as ML-Agents "
                              f"2.x sends uncompressed images")
    return IOShapes(tuple(s.shape for s in layout.sensor_shapes), layout.continuous, layout.branches)


def run_substrate(layout: Layout, settings: Any, neat_config: Any = None) -> Substrate:
    """The substrate of a hyperneat run for a behavior of `layout`: the default layout of its
    sensors and actions with the settings' hidden layers, the coordinates file's layers, the
    settings' activation and query; checked against the CPPNs' neat config when given (one line
    naming the key to change)."""
    query = Query(settings.hyperneat_weight_threshold, settings.hyperneat_max_weight, settings.hyperneat_bias,
                  settings.hyperneat_leo)
    substrate = make_substrate(io_shapes(layout), settings.substrate_hidden, settings.substrate_coordinates,
                               settings.hyperneat_activation, query)
    if neat_config is not None:
        check_cppn_config(neat_config, substrate)
    return substrate


def _hyperneat_kernel(genomes: list, neat_config: Any, settings: Any, geometry: Substrate) -> SubstratePopulation:
    return SubstratePopulation.create(genomes, neat_config, geometry)


def _hyperneat_export(genome, neat_config: Any, layout: Layout, settings: Any, geometry: Substrate | None = None):
    """The substrate network as ONNX (onnx_substrate.py), on the run's substrate (else the one the
    settings make for `layout`)."""
    from .onnx_substrate import export_substrate_policy
    substrate = geometry if geometry is not None else run_substrate(layout, settings, neat_config)
    # a layout of sizes alone (an older run folder's record) takes the shapes the substrate was laid out for
    io = io_shapes(layout) if layout.sensors or substrate.io is None else None
    return export_substrate_policy(genome, neat_config, substrate, io)


def run_es_substrate(layout: Layout, settings: Any, neat_config: Any = None) -> EvolvableSubstrate:
    """The substrate of an es-hyperneat run for a behavior of `layout`: inputs and outputs laid out
    as hyperneat's (or as the coordinates file gives them), the settings' es_* search parameters;
    checked against the CPPNs' neat config when given."""
    es = make_es_substrate(io_shapes(layout), settings.substrate_coordinates, ESParams.of_settings(settings))
    if neat_config is not None:
        check_es_cppn_config(neat_config)
    return es


def _es_kernel(genomes: list, neat_config: Any, settings: Any, geometry: EvolvableSubstrate):
    return es_population(genomes, neat_config, geometry)


def _es_export(genome, neat_config: Any, layout: Layout, settings: Any, geometry: EvolvableSubstrate | None = None):
    """The discovered network as ONNX (onnx_es.py), on the run's substrate (else the one the
    settings make for `layout`)."""
    from .onnx_es import export_es_policy
    es = geometry if geometry is not None else run_es_substrate(layout, settings, neat_config)
    return export_es_policy(genome, neat_config, es, layout)


ENGINES: dict[str, NetworkEngine] = {
    "feedforward": NetworkEngine(_feedforward_kernel, _export()),
    "recurrent": NetworkEngine(_recurrent_kernel, _export(recurrent=True)),
    "ctrnn": NetworkEngine(_ctrnn_kernel, _export(ctrnn=True)),
    "hyperneat": NetworkEngine(_hyperneat_kernel, _hyperneat_export, run_substrate),
    "es-hyperneat": NetworkEngine(_es_kernel, _es_export, run_es_substrate),
}


def engine(kind: NetworkKind) -> NetworkEngine:
    """The engine of `kind` (a settings' `network_kind`)."""
    return ENGINES[kind.name]


def run_geometry(settings: Any, neat_config: Any, layouts: dict[str, Layout], behaviors: list[str]) -> Any:
    """The run's geometry (None for kinds without one) from the layouts of `behaviors` (the
    configured behaviors that drive networks); they must share one layout, since one geometry
    serves every network of the run."""
    make = engine(settings.network_kind).geometry
    if make is None:
        return None
    known = [b for b in behaviors if b in layouts]
    if not known:
        raise ConfigError(f"network = {settings.network} lays its networks out on the game's observations, but none "
                          f"of the behaviors {', '.join(behaviors)} reported a layout: check the behaviors' names")
    for b in known[1:]:
        if layouts[b] != layouts[known[0]]:
            raise ConfigError(f"network = {settings.network} lays out one substrate per run, but behavior {b!r} "
                              f"observes {layouts[b].observation_sizes} and takes {layouts[b].describe_actions()} "
                              f"while {known[0]!r} observes {layouts[known[0]].observation_sizes} and takes "
                              f"{layouts[known[0]].describe_actions()}: give the behaviors the same sensors and actions")
    return make(layouts[known[0]], settings, neat_config)
