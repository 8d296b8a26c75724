"""ES-HyperNEAT (Risi and Stanley 2012): each CPPN genome's hidden nodes and links found by a
quadtree search of its weight pattern, on a substrate of fixed inputs and outputs
(es_substrate.py), and the networks found run by the population kernel.

The search is PUREPLES' `ESNetwork.es_hyperneat` (its parameters: es_substrate.ESParams), in C
(_es_search.c) over the whole population on threads. The CPPN reads (x1, y1, x2, y2, 1.0) and
output 0 is mapped as PUREPLES' query_cppn maps it: 0.0 unless |o| > 0.2, else
(o -+ 0.2) / 0.8 * max_weight. From each point explored (each input; then, iteration_level times,
the hidden nodes found minus those explored in the round before; then, inwards, each output):

- division: the root quad centred (0, 0) of half-width 1.0 at level 1 is divided breadth first;
  each quad dequeued gets 4 children at its centre -+ half its half-width, in the order (-,-),
  (-,+), (+,+), (+,-), each weighed by the CPPN between the point and the child's centre; the
  children are queued while the quad's level is below initial_depth, or below max_depth with the
  variance (numpy's var()) of the children's weights above division_threshold;
- pruning and extraction: for each child of a quad, in order, a child whose leaves' weights
  (depth first) have a variance above variance_threshold is searched in turn; any other is a link
  (from the point, or to an output) where max(min(d_top, d_bottom), min(d_left, d_right)) >
  band_threshold, d_* the absolute differences to the weights at the child's centre -+ the
  quad's half-width in x and y, if its weight is not 0.0, it goes upwards (y1 < y2) and is not a
  loop;
- the points reached from an input and reaching an output over the links (PUREPLES' clean_net)
  are the network's nodes; the links between them its links, each with its weight.

Every weight and variance is computed in double as PUREPLES computes it (neat-python's
FeedForwardNetwork for the CPPN, numpy's pairwise sums for var()), so the search takes every
branch PUREPLES takes and finds the same nodes, links and weights (tests/test_es_hyperneat.py
compares it with a reference written from the paper, on many CPPNs).

The network: node keys are the inputs, the outputs, then the hidden nodes by (y, x). Every link
goes upwards, so the network is feed-forward (no recurrence: PUREPLES builds a RecurrentNetwork
and steps it, one step of delay per layer; here one feed-forward pass per decision). Each output
and hidden node with links is evaluated in order of (y, key) as neat-python's
`act(0.0 + 1.0 * sum(value * weight))`, its links by source key; an output the search left without
links outputs 0.0 (PUREPLES' network leaves it at 0.0), and a link into an input node (possible
when inputs sit above one another, as an image's rows do) is kept in the substrate but does not
change the input, whose value is the observation.
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any, Sequence

import numpy as np

from . import _es_search
from ..errors import ConfigError
from ..processes import cpu_count
from .compile import BUILTIN_ACTIVATIONS, Flat, Tables, genome_list
from .es_substrate import Discovered, EvolvableSubstrate
from .hyperneat import standalone_config
from .kernel import FeedForwardPopulation

CPPN_INPUTS, CPPN_OUTPUTS = 5, 1


def check_es_cppn_config(config: Any) -> None:
    """One line naming the [DefaultGenome] key to change when the CPPNs cannot be searched."""
    gc = config.genome_config
    if gc.num_inputs != CPPN_INPUTS:
        raise ConfigError(f"network = es-hyperneat: the CPPN reads x1, y1, x2, y2 and 1.0: set [DefaultGenome] "
                          f"num_inputs = {CPPN_INPUTS} (it is {gc.num_inputs})")
    if gc.num_outputs != CPPN_OUTPUTS:
        raise ConfigError(f"network = es-hyperneat: the search reads the CPPN's one output (the weight): set "
                          f"[DefaultGenome] num_outputs = {CPPN_OUTPUTS} (it is {gc.num_outputs})")
    if not getattr(gc, "feed_forward", True):
        raise ConfigError("network = es-hyperneat queries its CPPNs as feed-forward networks: set [DefaultGenome] "
                          "feed_forward = true")


def compile_es_cppns(genomes: Sequence, config: Any) -> Tables:
    """The CPPNs of `genomes` as the population kernel's tables, after the config's checks."""
    check_es_cppn_config(config)
    tables = Tables(genome_list(genomes), config, recurrent=False)
    if tables.uses_custom:
        raise ConfigError("the CPPNs use functions registered on the config; the ES-HyperNEAT search computes "
                          "neat-python's built-in activations and aggregations only: use those in [DefaultGenome]")
    return tables


def _search_some(tables: Tables, genomes: np.ndarray, es: EvolvableSubstrate) -> list[Discovered]:
    t, p = tables, es.params
    found = _es_search.discover(t.genome_start, t.node_slot, t.node_act, t.node_agg, t.node_bias, t.node_resp,
                                t.link_start, t.link_src, t.link_w, genomes, np.ascontiguousarray(es.inputs),
                                np.ascontiguousarray(es.outputs), t.stride, t.max_fan_in, p.initial_depth,
                                p.max_depth, p.iteration_level, float(p.variance_threshold),
                                float(p.band_threshold), float(p.division_threshold), float(p.max_weight))
    out = []
    for hidden, ends, weights in found:
        ends = np.frombuffer(ends, dtype=np.int64).reshape(-1, 2)
        out.append(Discovered(np.frombuffer(hidden, dtype=np.float64).reshape(-1, 2), ends[:, 0], ends[:, 1],
                              np.frombuffer(weights, dtype=np.float64)))
    return out


def discover(tables: Tables, genomes: Sequence[int], es: EvolvableSubstrate,
             threads: int | None = None) -> list[Discovered]:
    """The discovered networks of the given genomes of `tables` (compile_es_cppns), searched in C on
    `threads` threads (default: one per CPU, at most one per genome)."""
    genomes = np.asarray(genomes, dtype=np.int64)
    threads = max(1, min(threads or cpu_count(), len(genomes)))
    if threads == 1:
        return _search_some(tables, np.ascontiguousarray(genomes), es)
    found: list = [None] * len(genomes)
    with ThreadPoolExecutor(threads) as pool:   # the C search releases the GIL
        parts = [pool.submit(_search_some, tables, np.ascontiguousarray(genomes[k::threads]), es)
                 for k in range(threads)]
        for k, part in enumerate(parts):
            found[k::threads] = part.result()
    return found


def network_tables(found: Sequence[Discovered], es: EvolvableSubstrate, genome_keys: Sequence) -> Tables:
    """The population kernel's tables of the discovered networks (module docstring: the order of
    evaluation, the links of each node, links into inputs left out)."""
    n_in, fixed = es.num_inputs, es.num_inputs + es.num_outputs
    act = BUILTIN_ACTIVATIONS.index(es.activation)
    genome_start, node_slot, link_start, link_src, link_w = [0], [], [np.zeros(1, np.int64)], [], []
    stride, total = fixed, 0
    for d in found:
        y = np.concatenate([es.inputs[:, 1], es.outputs[:, 1], d.hidden[:, 1]])
        keep = d.targets >= n_in
        targets, sources, weights = d.targets[keep], d.sources[keep], d.weights[keep]
        nodes = np.unique(targets)
        nodes = nodes[np.lexsort((nodes, y[nodes]))]
        position = np.empty(fixed + len(d.hidden), dtype=np.int64)
        position[nodes] = np.arange(len(nodes))
        order = np.lexsort((sources, position[targets]))
        counts = np.bincount(position[targets], minlength=len(nodes))
        node_slot.append(nodes.astype(np.int32))
        link_src.append(sources[order].astype(np.int32))
        link_w.append(weights[order])
        link_start.append(total + np.cumsum(counts))
        total += len(order)
        genome_start.append(genome_start[-1] + len(nodes))
        stride = max(stride, fixed + len(d.hidden))
    count = genome_start[-1]
    flat = Flat(np.array(genome_start, np.int64), np.concatenate(node_slot or [np.zeros(0, np.int32)]),
                np.full(count, act, np.int8), np.zeros(count, np.int8), np.zeros(count), np.ones(count),
                np.concatenate(link_start).astype(np.int64), np.concatenate(link_src or [np.zeros(0, np.int32)]),
                np.concatenate(link_w or [np.zeros(0)]), stride)
    return Tables.of_structure(flat, es.num_inputs, es.num_outputs, genome_keys)


def es_population(genomes: Sequence, config: Any, es: EvolvableSubstrate,
                  threads: int | None = None) -> FeedForwardPopulation:
    """The population kernel of the networks `genomes`' CPPNs discover on `es`."""
    genomes = genome_list(genomes)
    if not genomes:
        raise ValueError("cannot create a population of no genomes")
    tables = compile_es_cppns(genomes, config)
    found = discover(tables, range(len(genomes)), es, threads)
    return FeedForwardPopulation(network_tables(found, es, [g.key for g in genomes]))


def discovered(genome, config: Any | None, es: EvolvableSubstrate) -> Discovered:
    """One genome's discovered network. Without `config` (a genome read from winner.json alone),
    neat-python's default keys and built-in functions."""
    if config is None:
        config = standalone_config(CPPN_INPUTS, CPPN_OUTPUTS)
    return discover(compile_es_cppns([genome], config), [0], es, threads=1)[0]
