"""ES-HyperNEAT (Risi and Stanley 2012): each CPPN genome's hidden nodes and links found by a
quadtree search of its weight pattern, on a substrate of fixed inputs and outputs
(es_substrate.py), and the networks found run by the population kernel.

The search is PUREPLES' `ESNetwork.es_hyperneat` (its parameters: es_substrate.ESParams), in C
(es_search.c) over the whole population on threads, and the kernel's tables of the networks found
are built in C too (es_tables.c), with no Python per genome. The CPPN reads (x1, y1, x2, y2, 1.0) and
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


def _arguments(tables: Tables, genomes: np.ndarray, es: EvolvableSubstrate) -> tuple:
    """The C search's arguments for `genomes` of `tables` on `es`."""
    t, p = tables, es.params
    return (t.genome_start, t.node_slot, t.node_act, t.node_agg, t.node_bias, t.node_resp, t.link_start, t.link_src,
            t.link_w, np.ascontiguousarray(genomes, dtype=np.int64), np.ascontiguousarray(es.inputs),
            np.ascontiguousarray(es.outputs), t.stride, t.max_fan_in, p.initial_depth, p.max_depth,
            p.iteration_level, float(p.variance_threshold), float(p.band_threshold), float(p.division_threshold),
            float(p.max_weight))


def _search_some(tables: Tables, genomes: np.ndarray, es: EvolvableSubstrate) -> list[Discovered]:
    out = []
    for hidden, sources, targets, weights in _es_search.discover(*_arguments(tables, genomes, es)):
        out.append(Discovered(np.frombuffer(hidden, dtype=np.float64).reshape(-1, 2),
                              np.frombuffer(sources, dtype=np.int64), np.frombuffer(targets, dtype=np.int64),
                              np.frombuffer(weights, dtype=np.float64)))
    return out


def _threads(threads: int | None, jobs: int) -> int:
    """The threads to use: those asked for (default one per CPU), at least 1, at most `jobs`."""
    return max(1, min(threads or cpu_count(), jobs))


def discover(tables: Tables, genomes: Sequence[int], es: EvolvableSubstrate,
             threads: int | None = None) -> list[Discovered]:
    """The discovered networks of the given genomes of `tables` (compile_es_cppns), searched in C on
    `threads` threads (default: one per CPU, at most one per genome)."""
    genomes = np.asarray(genomes, dtype=np.int64)
    threads = _threads(threads, len(genomes))
    if threads == 1:
        return _search_some(tables, genomes, es)
    found: list = [None] * len(genomes)
    with ThreadPoolExecutor(threads) as pool:   # the C search releases the GIL
        parts = [pool.submit(_search_some, tables, genomes[k::threads], es) for k in range(threads)]
        for k, part in enumerate(parts):
            found[k::threads] = part.result()
    return found


def _kernel_tables(parts: Sequence[tuple], es: EvolvableSubstrate, genome_keys: Sequence) -> Tables:
    """The Tables of consecutive parts of a population, each the C code's (genome_start,
    node_slot, link_start, link_src, link_w, stride) of its genomes."""
    genome_start, link_start, node_slot, link_src, link_w = [np.zeros(1, np.int64)], [np.zeros(1, np.int64)], [], [], []
    nodes = links = 0
    for starts, slots, firsts, sources, weights, _ in parts:
        starts, firsts = np.frombuffer(starts, np.int64), np.frombuffer(firsts, np.int64)
        genome_start.append(starts[1:] + nodes)
        link_start.append(firsts[1:] + links)
        node_slot.append(np.frombuffer(slots, np.int32))
        link_src.append(np.frombuffer(sources, np.int32))
        link_w.append(np.frombuffer(weights, np.float64))
        nodes, links = nodes + int(starts[-1]), links + int(firsts[-1])
    act = BUILTIN_ACTIVATIONS.index(es.activation)
    flat = Flat(np.concatenate(genome_start), np.concatenate(node_slot), np.full(nodes, act, np.int8),
                np.zeros(nodes, np.int8), np.zeros(nodes), np.ones(nodes), np.concatenate(link_start),
                np.concatenate(link_src), np.concatenate(link_w), max(part[5] for part in parts))
    return Tables.of_structure(flat, es.num_inputs, es.num_outputs, genome_keys)


def network_tables(found: Sequence[Discovered], es: EvolvableSubstrate, genome_keys: Sequence) -> Tables:
    """The population kernel's tables of the discovered networks (module docstring: the order of
    evaluation, the links of each node, links into inputs left out), built in C."""
    fixed_y = np.ascontiguousarray(np.concatenate([es.inputs[:, 1], es.outputs[:, 1]]), dtype=np.float64)
    as_array = np.ascontiguousarray
    part = _es_search.tables(fixed_y, es.num_inputs, [as_array(d.hidden, dtype=np.float64) for d in found],
                             [as_array(d.sources, dtype=np.int64) for d in found],
                             [as_array(d.targets, dtype=np.int64) for d in found],
                             [as_array(d.weights, dtype=np.float64) for d in found])
    return _kernel_tables([part], es, genome_keys)


def population_tables(tables: Tables, es: EvolvableSubstrate, threads: int | None = None) -> Tables:
    """The population kernel's tables of the networks all genomes of `tables` discover, searched
    and built in C with no Python per genome, on `threads` threads (default: one per CPU) taking
    blocks of genomes in turn; the same tables as network_tables(discover(...))."""
    count = tables.num_genomes
    threads = _threads(threads, count)
    blocks = np.array_split(np.arange(count, dtype=np.int64), min(count, 4 * threads) if threads > 1 else 1)
    if threads == 1:
        parts = [_es_search.population(*_arguments(tables, blocks[0], es))]
    else:
        with ThreadPoolExecutor(threads) as pool:   # the C search releases the GIL
            parts = list(pool.map(lambda block: _es_search.population(*_arguments(tables, block, es)), blocks))
    return _kernel_tables(parts, es, tables.genome_keys)


def es_population(genomes: Sequence, config: Any, es: EvolvableSubstrate,
                  threads: int | None = None) -> FeedForwardPopulation:
    """The population kernel of the networks `genomes`' CPPNs discover on `es`."""
    genomes = genome_list(genomes)
    if not genomes:
        raise ValueError("cannot create a population of no genomes")
    return FeedForwardPopulation(population_tables(compile_es_cppns(genomes, config), es, threads))


def discovered(genome, config: Any | None, es: EvolvableSubstrate) -> Discovered:
    """One genome's discovered network. Without `config` (a genome read from winner.json alone),
    neat-python's default keys and built-in functions."""
    if config is None:
        config = standalone_config(CPPN_INPUTS, CPPN_OUTPUTS)
    return discover(compile_es_cppns([genome], config), [0], es, threads=1)[0]
