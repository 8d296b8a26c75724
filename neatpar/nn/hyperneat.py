"""HyperNEAT's query: a CPPN (an ordinary neat-python genome whose inputs are coordinates) paints
the weights of a substrate network (substrate.py) by the geometry of its nodes.

The query is PUREPLES' `query_cppn` (Stanley, D'Ambrosio and Gauci 2009), for every source node s
of a layer and target node t of the next layer (coordinates (x, y) or (x, y, z)):

    o = FeedForwardNetwork.create(cppn, config).activate([*s, *t, 1.0])
        # 2-D: (x_s, y_s, x_t, y_t, 1.0), 5 inputs; 3-D: (x_s, y_s, z_s, x_t, y_t, z_t, 1.0), 7 inputs
    weight(s, t) = 0.0                                                 if not abs(o[0]) > threshold
                   (o[0] - threshold) / (1.0 - threshold) * max_weight  if o[0] > threshold
                   (o[0] + threshold) / (1.0 - threshold) * max_weight  otherwise

in Python's float arithmetic, operation for operation (threshold 0.2 and max_weight 5.0 by
default: PUREPLES' own numbers and expressions). PUREPLES is 2-D only; a 3-D substrate gives the
CPPN each node's z after its y, in the same order (source first).

Two options, both off by default; the CPPN's outputs are the weight, then the bias, then link
expression, as many as the options use (its `num_outputs` must be that number):

- `bias`: every hidden and output node t gets the bias `weight` maps from o[1] at the query
  (0, ..., 0, *t, 1.0): a link from a bias node at the origin, thresholded and scaled as every
  link (PUREPLES' substrate has no biases: 0.0; MultiNEAT queries a node's bias at its own
  coordinates with the other position zero, as here).
- `leo`: the link expression output (Verbancsics and Stanley 2010): a link exists only where the
  CPPN's last output is > 0; elsewhere its weight is 0.0, whatever o[0] says. The weight keeps
  the threshold; threshold = 0 gives MultiNEAT's LEO (weight = o[0] * max_weight).

The substrate network of a CPPN is the neat-python network PUREPLES' create_phenotype_network
builds from these weights, with its layers connected consecutively (inputs -> hidden layers ->
outputs): `FeedForwardNetwork(inputs, outputs, node_evals)` with, for every hidden and output
node in layer order, `(node, activation, sum, bias, 1.0, links)`, its links from every node of
the previous layer whose weight is not 0.0, in that layer's order. It differs from PUREPLES' in
what PUREPLES does not define well: its hidden layers are wired to every later layer and each
output once per hidden layer (the last wins), it steps a RecurrentNetwork (one step of delay per
layer), and a node without links keeps 0.0 or fails; here every hidden and output node is
evaluated, act(bias + 1.0 * 0) without links, in one feed-forward pass.

Exactness: the C query (_substrate.c) evaluates every pair's CPPN with neat-python's functions
and operations in neat-python's order, so each weight equals the definition above to the last bit
(tests/test_hyperneat.py compares them on random CPPNs with every function). The CPPN must use
neat-python's built-in functions only, and be feed-forward.
"""
from __future__ import annotations

import hashlib
from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace
from typing import Any, NamedTuple, Sequence

import neat.activations
import neat.aggregations
import numpy as np

from . import _substrate
from ..errors import ConfigError
from ..processes import cpu_count
from .compile import Tables, genome_list
from .substrate import Substrate


class Phenotype(NamedTuple):
    """One substrate network's parameters: for each layer k -> k + 1, its weights (sources x
    targets, weights[k][s, t] from node s of layer k to node t of layer k + 1) and the targets'
    biases (views into one block of doubles)."""
    weights: tuple[np.ndarray, ...]
    biases: tuple[np.ndarray, ...]


def standalone_config(num_inputs: int, num_outputs: int) -> Any:
    """What compiling a CPPN reads of a config, for a genome loaded without its run's config:
    neat-python's input and output keys and its built-in functions."""
    genome_config = SimpleNamespace(
        num_inputs=num_inputs, num_outputs=num_outputs, feed_forward=True,
        input_keys=[-i - 1 for i in range(num_inputs)], output_keys=list(range(num_outputs)),
        activation_defs=neat.activations.ActivationFunctionSet(),
        aggregation_function_defs=neat.aggregations.AggregationFunctionSet())
    return SimpleNamespace(genome_config=genome_config)


def check_cppn_config(config: Any, substrate: Substrate) -> None:
    """One line naming the [DefaultGenome] key to change when the CPPNs cannot query `substrate`."""
    gc = config.genome_config
    if gc.num_inputs != substrate.cppn_inputs:
        names = ", ".join(substrate.cppn_input_names())
        raise ConfigError(f"the substrate is {substrate.dimensions}-D, so its CPPN reads {substrate.cppn_inputs} "
                          f"inputs ({names}): set [DefaultGenome] num_inputs = {substrate.cppn_inputs} (it is "
                          f"{gc.num_inputs})")
    outputs = substrate.query.outputs
    if gc.num_outputs != outputs:
        names = ", ".join(substrate.query.output_names())
        raise ConfigError(f"the HyperNEAT query reads {outputs} CPPN output(s) ({names}): set [DefaultGenome] "
                          f"num_outputs = {outputs} (it is {gc.num_outputs})")
    if not getattr(gc, "feed_forward", True):
        raise ConfigError("HyperNEAT queries its CPPNs as feed-forward networks: set [DefaultGenome] "
                          "feed_forward = true")


def compile_cppns(genomes: Sequence, config: Any, substrate: Substrate) -> Tables:
    """The CPPNs of `genomes` as the population kernel's tables, after the config's checks."""
    check_cppn_config(config, substrate)
    tables = Tables(genome_list(genomes), config, recurrent=False)
    if tables.uses_custom:
        raise ConfigError("the CPPNs use functions registered on the config; the HyperNEAT query computes "
                          "neat-python's built-in activations and aggregations only: use those in [DefaultGenome]")
    return tables


def cppn_keys(tables: Tables, substrate: Substrate) -> list[bytes]:
    """Per genome, a digest of its compiled CPPN (every node's slot, functions, bias and response,
    every link's source and weight, in evaluation order) and of the substrate's key: two genomes
    with the same key get the same weights, whatever their genome keys."""
    prefix = substrate.key() + repr((tables.num_inputs, tables.num_outputs)).encode()
    bounds, link_start = tables.genome_start.tolist(), tables.link_start
    keys = []
    for g in range(tables.num_genomes):
        n0, n1 = bounds[g], bounds[g + 1]
        l0, l1 = int(link_start[n0]), int(link_start[n1])
        digest = hashlib.blake2b(prefix, digest_size=16)
        for part in (tables.node_slot[n0:n1], tables.node_act[n0:n1], tables.node_agg[n0:n1],
                     tables.node_bias[n0:n1], tables.node_resp[n0:n1], link_start[n0:n1 + 1] - l0,
                     tables.link_src[l0:l1], tables.link_w[l0:l1]):
            digest.update(np.ascontiguousarray(part).tobytes())
        keys.append(digest.digest())
    return keys


def _layer_offsets(substrate: Substrate) -> list[int]:
    """Where layer k's weights start in a phenotype block (its biases follow them)."""
    sizes, offsets, at = substrate.sizes, [], 0
    for a, b in zip(sizes, sizes[1:]):
        offsets.append(at)
        at += a * b + b
    return offsets


def phenotype_of(block: np.ndarray, substrate: Substrate) -> Phenotype:
    """A phenotype block's weights and biases (views)."""
    sizes, weights, biases = substrate.sizes, [], []
    for k, at in enumerate(_layer_offsets(substrate)):
        a, b = sizes[k], sizes[k + 1]
        weights.append(block[at:at + a * b].reshape(a, b))
        biases.append(block[at + a * b:at + a * b + b])
    return Phenotype(tuple(weights), tuple(biases))


def _query_some(tables: Tables, genomes: np.ndarray, blocks: tuple, substrate: Substrate) -> None:
    """The C query of `genomes` into their `blocks`: every layer's weights and biases."""
    t, q, dims = tables, substrate.query, substrate.dimensions
    origin = np.zeros((1, dims))
    common = (t.genome_start, t.node_slot, t.node_act, t.node_agg, t.node_bias, t.node_resp, t.link_start,
              t.link_src, t.link_w, genomes)
    sizes = substrate.sizes
    for k, at in enumerate(_layer_offsets(substrate)):
        sources, targets = substrate.layers[k], substrate.layers[k + 1]
        _substrate.query(*common, sources, targets, blocks, dims, t.num_inputs, t.stride, t.max_fan_in, 0,
                         q.leo_output, q.threshold, q.max_weight, at)
        bias_at = at + sizes[k] * sizes[k + 1]
        if q.bias:
            _substrate.query(*common, origin, targets, blocks, dims, t.num_inputs, t.stride, t.max_fan_in,
                             q.bias_output, -1, q.threshold, q.max_weight, bias_at)
        else:
            for block in blocks:
                block[bias_at:bias_at + sizes[k + 1]] = 0.0


def build_blocks(tables: Tables, genomes: Sequence[int], substrate: Substrate, threads: int | None = None) -> list:
    """The phenotype blocks (float64, `substrate.parameters` each) of the given genomes of
    `tables`, queried in C on `threads` threads (default: one per CPU, at most one per genome)."""
    genomes = np.asarray(genomes, dtype=np.int64)
    blocks = [np.empty(substrate.parameters) for _ in range(len(genomes))]
    threads = max(1, min(threads or cpu_count(), len(genomes)))
    if threads == 1:
        _query_some(tables, genomes, tuple(blocks), substrate)
        return blocks
    with ThreadPoolExecutor(threads) as pool:   # the C query releases the GIL
        parts = [pool.submit(_query_some, tables, np.ascontiguousarray(genomes[k::threads]),
                             tuple(blocks[k::threads]), substrate) for k in range(threads)]
        for part in parts:
            part.result()
    return blocks


def phenotype(genome, config: Any | None, substrate: Substrate) -> Phenotype:
    """The substrate network of one CPPN genome. Without `config` (a genome loaded from
    winner.json alone), neat-python's default keys and built-in functions."""
    if config is None:
        config = standalone_config(substrate.cppn_inputs, substrate.query.outputs)
    tables = compile_cppns([genome], config, substrate)
    return phenotype_of(build_blocks(tables, [0], substrate, threads=1)[0], substrate)
