"""Compile neat-python genomes into the flat tables the population kernel evaluates.

The structure of each network is exactly the one neat-python builds: for feed-forward networks
the nodes `FeedForwardNetwork.create` evaluates (required for an output, reachable in
topological order, only enabled links, links kept in the genome's connection order), for
recurrent networks the nodes and links `RecurrentNetwork.create` keeps (note: it decides which
nodes are required over *all* connections, enabled or not, as neat-python does). `CTRNN.create`
keeps the same nodes and links as `RecurrentNetwork.create`, and each node's `time_constant`
(`Tables(..., time_constants=True)`).

Every genome is read as the NEAT step's records (neatpar's genomes' own; a genome that keeps gene
objects, neat-python's say, read into records in C) and walked in C (`_kernel.ff_structure`,
`_kernel.rec_structure`): no gene object is made. Genomes with other keys than neat-python's
standard input and output keys, or genes the records cannot hold, are walked in Python.
"""
from __future__ import annotations

from array import array
from typing import Any, Iterable, NamedTuple, Sequence

import neat.activations
import neat.aggregations
import numpy as np

from . import _kernel
from ..errors import ConfigError
from ..evolution.gene_arrays import gene_dicts, links, node_table, read_genes

# Codes of the C kernel; the order matches the enums in _kernel.c.
BUILTIN_ACTIVATIONS = ("sigmoid", "tanh", "sin", "gauss", "relu", "elu", "lelu", "selu", "softplus",
                       "identity", "clamped", "inv", "log", "exp", "abs", "hat", "square", "cube")
BUILTIN_AGGREGATIONS = ("sum", "product", "max", "min", "maxabs", "median", "mean")
CUSTOM_BASE = 64  # codes >= this name a user-registered function (Python path)


def _is_builtin(fn, module, name: str) -> bool:
    suffix = "_activation" if module is neat.activations else "_aggregation"
    return fn is getattr(module, name + suffix, None)


class FunctionTable:
    """Maps the genome config's function names to kernel codes, keeping custom functions aside."""

    def __init__(self, function_set, builtins: Sequence[str], module, kind: str):
        self.kind = kind
        self.codes: dict[str, int] = {}
        self.custom: list = []  # functions registered by the user, code CUSTOM_BASE + index
        self._set, self._builtins, self._module = function_set, builtins, module

    def code(self, name: str) -> int:
        code = self.codes.get(name)
        if code is None:
            fn = self._set.functions.get(name)
            if fn is None:
                raise ConfigError(f"genome uses {self.kind} function {name!r}, which the config does not define")
            if name in self._builtins and _is_builtin(fn, self._module, name):
                code = self._builtins.index(name)
            else:
                code = CUSTOM_BASE + len(self.custom)
                self.custom.append(fn)
            self.codes[name] = code
        return code


def _links_by_target(connections: dict, enabled_only: bool) -> dict[int, list]:
    """target node -> [(source, weight), ...] in the genome's connection order."""
    links: dict[int, list] = {}
    for key, cg in connections.items():
        if cg.enabled or not enabled_only:
            target = key[1]
            if target in links:
                links[target].append((key[0], cg.weight))
            else:
                links[target] = [(key[0], cg.weight)]
    return links


def _required(inputs: set, outputs: Sequence[int], links: dict) -> set:
    """neat.graphs.required_for_output: the non-input nodes an output depends on, and the outputs."""
    required = set(outputs)
    stack = list(outputs)
    while stack:
        for source, _ in links.get(stack.pop(), ()):
            if source not in required and source not in inputs:
                required.add(source)
                stack.append(source)
    return required


def _feed_forward_structure(connections: dict, inputs: set, outputs: Sequence[int]):
    """Nodes in evaluation order with their links, as FeedForwardNetwork.create keeps them.

    Every source of a required node is an input or itself required, so a required node keeps all
    its enabled links. Nodes are ordered by Kahn's algorithm; a node on a cycle (possible only in a
    genome evolved with feed_forward = false) never becomes ready and, as in neat-python, is never
    evaluated.
    """
    links = _links_by_target(connections, enabled_only=True)
    required = _required(inputs, outputs, links)
    waiting: dict[int, int] = {}
    successors: dict[int, list] = {}
    order = []
    for n in required:
        count = 0
        for source, _ in links.get(n, ()):
            if source not in inputs:
                count += 1
                if source in successors:
                    successors[source].append(n)
                else:
                    successors[source] = [n]
        if count:
            waiting[n] = count
        else:
            order.append(n)
    for n in order:  # grows while it is walked: a breadth-first Kahn queue
        for m in successors.get(n, ()):
            waiting[m] -= 1
            if not waiting[m]:
                order.append(m)
    return [(n, links.get(n, [])) for n in order]


def _recurrent_structure(connections: dict, inputs: set, outputs: Sequence[int]):
    """Nodes with their links, as RecurrentNetwork.create keeps them (required is decided over
    all connections, enabled or not, as neat-python does)."""
    required = _required(inputs, outputs, _links_by_target(connections, enabled_only=False))
    node_links: dict[int, list] = {}
    for (i, o), cg in connections.items():
        if cg.enabled and (o in required or i in required):
            node_links.setdefault(o, []).append((i, cg.weight))
    return list(node_links.items())


class Flat(NamedTuple):
    """A population's structure as built by either walk (arrays or array-likes, see _kernel.c)."""
    genome_start: Any
    node_slot: Any
    node_act: Any
    node_agg: Any
    node_bias: Any
    node_resp: Any
    link_start: Any
    link_src: Any
    link_w: Any
    stride: int
    node_tau: Any = None


class Tables:
    """The flat, picklable description of a population of networks (see _kernel.c)."""

    def __init__(self, genomes: Sequence, config: Any, recurrent: bool, time_constants: bool = False):
        gc = config.genome_config
        self.input_keys = list(gc.input_keys)
        self.output_keys = list(gc.output_keys)
        self.num_inputs, self.num_outputs = len(self.input_keys), len(self.output_keys)
        self.recurrent = recurrent
        self._with_tau = time_constants
        acts = FunctionTable(gc.activation_defs, BUILTIN_ACTIVATIONS, neat.activations, "activation")
        aggs = FunctionTable(gc.aggregation_function_defs, BUILTIN_AGGREGATIONS, neat.aggregations, "aggregation")
        self.genome_keys = [g.key for g in genomes]
        standard_keys = (self.input_keys == [-i - 1 for i in range(self.num_inputs)]
                         and self.output_keys == list(range(self.num_outputs)))
        records = read_genes(genomes) if standard_keys else None
        flat = (self._in_c(records, acts, aggs) if records is not None else None) or self._in_python(genomes, acts, aggs)
        self._take(flat)
        self.custom_activations = acts.custom
        self.custom_aggregations = aggs.custom
        self.uses_custom = bool(acts.custom or aggs.custom)

    @classmethod
    def of_structure(cls, flat: Flat, num_inputs: int, num_outputs: int, genome_keys: list) -> "Tables":
        """The tables of feed-forward networks of built-in functions whose structure was made
        elsewhere (ES-HyperNEAT's discovered networks), inputs and outputs in the first slots."""
        self = cls.__new__(cls)
        self.input_keys, self.output_keys = [-i - 1 for i in range(num_inputs)], list(range(num_outputs))
        self.num_inputs, self.num_outputs = num_inputs, num_outputs
        self.recurrent, self._with_tau, self.genome_keys = False, False, list(genome_keys)
        self._take(flat)
        self.custom_activations, self.custom_aggregations, self.uses_custom = [], [], False
        return self

    def _take(self, flat: Flat) -> None:
        """The arrays of a walked structure, typed as the kernel reads them."""
        self.stride = int(max(flat.stride, self.num_inputs + self.num_outputs))
        self.genome_start = np.asarray(flat.genome_start, dtype=np.int64)
        self.node_slot = np.asarray(flat.node_slot, dtype=np.int32)
        self.node_act = np.frombuffer(flat.node_act, dtype=np.int8)
        self.node_agg = np.frombuffer(flat.node_agg, dtype=np.int8)
        self.node_bias = np.frombuffer(flat.node_bias, dtype=np.float64)
        self.node_resp = np.frombuffer(flat.node_resp, dtype=np.float64)
        # Each evaluated node's time_constant (CTRNN), else None.
        self.node_tau = np.frombuffer(flat.node_tau, dtype=np.float64) if self._with_tau else None
        self.link_start = np.asarray(flat.link_start, dtype=np.int64)
        self.link_src = np.asarray(flat.link_src, dtype=np.int32)
        self.link_w = np.asarray(flat.link_w, dtype=np.float64)
        self.node_counts = np.diff(self.genome_start).tolist()
        self.link_counts = np.diff(self.link_start[self.genome_start]).tolist()
        self.max_fan_in = int(np.diff(self.link_start).max()) if len(self.node_slot) else 0

    def _node_attributes(self, genome, keys, acts, aggs, out, nodes: dict) -> None:
        """The kernel's attributes of the nodes `keys`, read from the genome's node dict."""
        node_act, node_agg, node_bias, node_resp = out[:4]
        act_code, agg_code = acts.code, aggs.code
        for n in keys:
            gene = nodes[n]
            node_act.append(act_code(gene.activation))
            node_agg.append(agg_code(gene.aggregation))
            node_bias.append(gene.bias)
            node_resp.append(gene.response)
        if self._with_tau:
            out[4].extend(_time_constant(nodes[n], n, genome) for n in keys)

    def _in_c(self, records: list, acts, aggs) -> Flat | None:
        """The structure walked in C (_kernel.ff_structure, or rec_structure for recurrent networks
        and CTRNNs) over the genomes' records; None if a genome has a link the C walk does not
        expect (then the Python walk, with the same result, is used)."""
        found = links(records, enabled_only=not self.recurrent)
        src_a, dst_a, weight, starts = found.inputs, found.outputs, found.weights, found.starts
        if len(src_a) and (src_a.min() < -self.num_inputs or dst_a.min() < 0):
            return None
        genomes_n, conns = len(records), len(src_a)
        cap = 2 * conns + genomes_n * self.num_outputs + 1
        node_key, node_slot = np.empty(cap, np.int64), np.empty(cap, np.int32)
        genome_start, link_start = np.empty(genomes_n + 1, np.int64), np.empty(cap + 1, np.int64)
        link_conn, link_src = np.empty(max(conns, 1), np.int64), np.empty(max(conns, 1), np.int32)
        strides = np.empty(max(genomes_n, 1), np.int64)
        outputs = (node_key, genome_start, link_conn, link_start, link_src, node_slot, strides)
        if self.recurrent:
            nodes, link_count = _kernel.rec_structure(src_a, dst_a, found.enabled, starts, self.num_inputs,
                                                      self.num_outputs, *outputs)
        else:
            nodes, link_count = _kernel.ff_structure(src_a, dst_a, starts, self.num_inputs, self.num_outputs, *outputs)
        table = node_table(records, node_key[:nodes], genome_start)
        attributes = (_codes(table.activations, table.names, acts), _codes(table.aggregations, table.names, aggs),
                      table.biases, table.responses) + ((table.time_constants,) if self._with_tau else ())
        return Flat(genome_start, node_slot[:nodes], *attributes[:4], link_start[:nodes + 1], link_src[:link_count],
                    weight[link_conn[:link_count]], int(strides[:genomes_n].max(initial=0)), *attributes[4:])

    def _in_python(self, genomes, acts, aggs) -> Flat:
        """The structure neat-python builds, walked in Python (recurrent networks, unusual keys)."""
        structure = _recurrent_structure if self.recurrent else _feed_forward_structure
        input_set = set(self.input_keys)
        genome_start, node_slot, link_start = array("q", [0]), array("i"), array("q", [0])
        link_src, link_w = array("i"), array("d")
        out = self._attribute_arrays()
        stride = 0
        fixed_slots = {k: s for s, k in enumerate(self.input_keys + self.output_keys)}
        for genome in genomes:
            gene_nodes, connections = gene_dicts(genome)
            nodes = structure(connections, input_set, self.output_keys)
            slots = dict(fixed_slots)
            for n, _ in nodes:
                if n not in slots:
                    slots[n] = len(slots)
            self._node_attributes(genome, [n for n, _ in nodes], acts, aggs, out, gene_nodes)
            for n, node_links in nodes:
                node_slot.append(slots[n])
                for i, w in node_links:
                    slot = slots.get(i)
                    if slot is None:  # a source that is never evaluated: a constant 0.0 slot
                        slot = slots[i] = len(slots)
                    link_src.append(slot)
                    link_w.append(w)
                link_start.append(len(link_src))
            genome_start.append(len(node_slot))
            stride = max(stride, len(slots))
        return Flat(np.frombuffer(genome_start, np.int64), np.frombuffer(node_slot, np.int32), *out[:4],
                    np.frombuffer(link_start, np.int64), np.frombuffer(link_src, np.int32),
                    np.frombuffer(link_w, np.float64), stride, *out[4:])

    def _attribute_arrays(self) -> tuple:
        """Per-node attribute arrays to fill: activation, aggregation, bias, response (and time
        constant for a CTRNN)."""
        return (array("b"), array("b"), array("d"), array("d")) + ((array("d"),) if self._with_tau else ())

    @property
    def num_genomes(self) -> int:
        return len(self.genome_start) - 1


def _codes(ids: np.ndarray, names: tuple, functions: FunctionTable) -> np.ndarray:
    """Kernel codes (int8) of the nodes' function ids (names[id] is the function's name)."""
    unique, where = np.unique(ids, return_inverse=True)
    return np.array([functions.code(names[i]) for i in unique.tolist()], np.int8)[where]


def _time_constant(gene, key: int, genome) -> float:
    """A node gene's time_constant, which CTRNN.create reads; a clear error for a gene without one."""
    try:
        return gene.time_constant
    except AttributeError:
        raise ConfigError(f"network = ctrnn: node {key} of genome {genome.key} ({type(gene).__name__}) has no "
                          f"time_constant; use node genes that have one, as neat-python's DefaultNodeGene") from None


def genome_list(genomes: Iterable) -> list:
    """Accept genome objects or neat-python's (key, genome) pairs."""
    items = list(genomes.values()) if isinstance(genomes, dict) else list(genomes)
    return [g[1] if isinstance(g, tuple) and len(g) == 2 else g for g in items]
