"""The kinds of network a run evolves ([neatpar] network): one NetworkKind entry each, its name,
a few words on what it is, and the rules it sets for the other settings and for the neat config
it runs with. This is all the settings know of a kind; how a population of it is compiled and
stepped, and how one of its genomes is exported, is its engine: nn/network_engines.py's entry of the same
name. Nothing else compares a network's name.

A new kind is one entry in KINDS below (and its engine in nn/network_engines.py); the key's choices,
its help and the reference page follow from the entries.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, Callable, Literal

from ..errors import ConfigError

MAX_CTRNN_STEPS = 1000  # Euler steps per decision (the ONNX model unrolls them)


def _no_rules(settings: Any) -> None:
    """A kind that asks nothing of the other settings."""


def _no_neat_rules(settings: Any, neat_config: Any, source: str) -> None:
    """A kind that asks nothing of the neat config."""


@dataclass(frozen=True)
class NetworkKind:
    """One kind of network: `name` as `[neatpar] network` names it, `words` said after it in the
    key's help ('' for none), `check(settings)` the rules between it and the other settings (a
    ConfigError when one is broken), `check_neat_config(settings, neat_config, source)` the rules
    between it and the neat config (`source` names that config in errors)."""
    name: str
    words: str = ""
    check: Callable[[Any], None] = _no_rules
    check_neat_config: Callable[[Any, Any, str], None] = _no_neat_rules


def _feed_forward_genomes(settings: Any, neat_config: Any, source: str) -> None:
    if not neat_config.genome_config.feed_forward:
        raise ConfigError(f"{source}: [DefaultGenome] feed_forward = false evolves recurrent genomes; set "
                          f"[neatpar] network = recurrent (or ctrnn)")


def _ctrnn_settings(settings: Any) -> None:
    steps = math.ceil(settings.ctrnn_decision_time / settings.ctrnn_time_step)
    if steps > MAX_CTRNN_STEPS:
        raise ConfigError(f"ctrnn_decision_time = {settings.ctrnn_decision_time} in steps of ctrnn_time_step = "
                          f"{settings.ctrnn_time_step} is {steps} Euler steps per decision, more than "
                          f"{MAX_CTRNN_STEPS}: use a larger ctrnn_time_step")
    if settings.neat_configs:
        raise ConfigError("neat_configs with network = ctrnn: an asymmetric game's populations of their own neat "
                          "configs run as feedforward or recurrent networks; set network = feedforward or "
                          "recurrent, or leave out neat_configs")


def _ctrnn_time_constants(settings: Any, neat_config: Any, source: str) -> None:
    lowest = getattr(neat_config.genome_config, "time_constant_min_value", None)
    if lowest is not None and not lowest > 0:
        raise ConfigError(f"{source}: [DefaultGenome] time_constant_min_value = {lowest} lets a node's time "
                          f"constant reach {lowest}; a CTRNN divides by it: set it above 0 (e.g. 0.01)")


HYPERNEAT_KEYS = ("substrate_hidden", "substrate_coordinates", "hyperneat_activation", "hyperneat_weight_threshold",
                  "hyperneat_max_weight", "hyperneat_bias", "hyperneat_leo")


def _hyperneat_settings(settings: Any) -> None:
    if settings.hyperneat_weight_threshold >= 1.0:
        raise ConfigError(f"hyperneat_weight_threshold = {settings.hyperneat_weight_threshold} leaves no CPPN output "
                          f"above it (outputs are in [-1, 1]): use a number from 0 to below 1 (e.g. 0.2)")


def _hyperneat_cppns(settings: Any, neat_config: Any, source: str) -> None:
    """The CPPNs' [DefaultGenome]: 5 inputs (a 2-D substrate) or 7 (3-D: images of several
    channels or 3-D coordinates), 1 + bias + leo outputs, feed-forward. The substrate, made from the
    game's layout, checks which of 5 and 7 at the start of the run."""
    gc = neat_config.genome_config
    if gc.num_inputs not in (5, 7):
        raise ConfigError(f"{source}: [DefaultGenome] num_inputs = {gc.num_inputs}, but with network = hyperneat the "
                          f"genomes are CPPNs reading a pair of substrate nodes' coordinates and 1.0: set num_inputs "
                          f"= 5 (a 2-D substrate) or 7 (3-D: images of several channels)")
    outputs = 1 + settings.hyperneat_bias + settings.hyperneat_leo
    if gc.num_outputs != outputs:
        names = ", ".join(["weight"] + ["bias"] * settings.hyperneat_bias + ["link expression"] * settings.hyperneat_leo)
        raise ConfigError(f"{source}: [DefaultGenome] num_outputs = {gc.num_outputs}, but the HyperNEAT query reads "
                          f"{outputs} CPPN output(s) ({names}): set num_outputs = {outputs}")
    if not gc.feed_forward:
        raise ConfigError(f"{source}: [DefaultGenome] feed_forward = false, but HyperNEAT queries its CPPNs as "
                          f"feed-forward networks: set feed_forward = true")


ES_KEYS = ("es_initial_depth", "es_max_depth", "es_variance_threshold", "es_band_threshold", "es_iteration_level",
           "es_division_threshold", "es_max_weight", "es_activation")


def _keys_left(owner: str, keys: tuple[str, ...], check: Callable[[Any], None]) -> Callable[[Any], None]:
    """A kind's rules, and that the keys of network = `owner` are left at their defaults (they would change nothing)."""
    def rules(settings: Any) -> None:
        defaults = {f.name: f.default for f in dataclasses.fields(settings)}
        for key in keys:
            if getattr(settings, key) != defaults[key]:
                raise ConfigError(f"{key} is a setting of network = {owner}, and network = {settings.network}: set "
                                  f"network = {owner} or leave out {key}")
        check(settings)
    return rules


def _no_hyperneat_keys(check: Callable[[Any], None]) -> Callable[[Any], None]:
    """A kind's rules, and that the hyperneat and es-hyperneat keys are left at their defaults."""
    return _keys_left("hyperneat", HYPERNEAT_KEYS, _keys_left("es-hyperneat", ES_KEYS, check))


def _es_settings(settings: Any) -> None:
    if settings.es_initial_depth > settings.es_max_depth:
        raise ConfigError(f"es_initial_depth = {settings.es_initial_depth} is deeper than es_max_depth = "
                          f"{settings.es_max_depth}: give es_initial_depth <= es_max_depth")


def _es_cppns(settings: Any, neat_config: Any, source: str) -> None:
    """The CPPNs' [DefaultGenome]: 5 inputs (x1, y1, x2, y2, 1.0), 1 output (the weight), feed-forward."""
    gc = neat_config.genome_config
    for key, value, want, why in (("num_inputs", gc.num_inputs, 5, "read x1, y1, x2, y2 and 1.0"),
                                  ("num_outputs", gc.num_outputs, 1, "give one weight")):
        if value != want:
            raise ConfigError(f"{source}: [DefaultGenome] {key} = {value}, but with network = es-hyperneat the "
                              f"genomes are CPPNs that {why}: set {key} = {want}")
    if not gc.feed_forward:
        raise ConfigError(f"{source}: [DefaultGenome] feed_forward = false, but ES-HyperNEAT queries its CPPNs as "
                          f"feed-forward networks: set feed_forward = true")


KINDS: dict[str, NetworkKind] = {kind.name: kind for kind in (
    NetworkKind("feedforward", check=_no_hyperneat_keys(_no_rules), check_neat_config=_feed_forward_genomes),
    NetworkKind("recurrent", check=_no_hyperneat_keys(_no_rules)),
    NetworkKind("ctrnn", "continuous-time", _no_hyperneat_keys(_ctrnn_settings), _ctrnn_time_constants),
    NetworkKind("hyperneat", "CPPNs painting a substrate's weights", _keys_left("es-hyperneat", ES_KEYS,
                                                                                _hyperneat_settings), _hyperneat_cppns),
    NetworkKind("es-hyperneat", "CPPNs whose weight patterns place a substrate's hidden nodes",
                _keys_left("hyperneat", HYPERNEAT_KEYS[:1] + HYPERNEAT_KEYS[2:], _es_settings), _es_cppns),
)}
Network = Literal[tuple(KINDS)]  # the key's type: its choices are the kinds' names


def network_kind(name: str) -> NetworkKind:
    """The entry of the kind `name` (a name the settings have read)."""
    return KINDS[name]


def network_help() -> str:
    """The key's help: every kind by name, with its words ('feedforward, recurrent or ctrnn
    (continuous-time) networks')."""
    shown = [f"{k.name} ({k.words})" if k.words else k.name for k in KINDS.values()]
    return (", ".join(shown[:-1]) + " or " if len(shown) > 1 else "") + shown[-1] + " networks"
