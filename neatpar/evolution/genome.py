"""neatpar's drop-in for neat.DefaultGenome: the same genome, its operators in C, draw for draw.

A genome keeps its genes as compact records (`_core.Genes`) until code asks for
`genome.nodes` or `genome.connections`: then they become dicts of neat-python's own gene
objects, exactly what neat.DefaultGenome holds, and stay so (code may keep and change them). In
both forms every operator gives neat-python's result: configure_new, configure_crossover, mutate
and distance run in C when the genes are records (or, for distance and as parents, are read from
the objects), and neat-python's own Python code runs otherwise: for a genome in object form, a
subclass that overrides an operator, or gene classes other than neat-python's defaults.

The class keeps neat-python's name, so `neat.Config` reads the config file's [DefaultGenome]
section unchanged; neatpar exports it as `neatpar.Genome`.
"""
from __future__ import annotations

import random
import sys

import neat
from neat.attributes import BoolAttribute, FloatAttribute, StringAttribute
from neat.genes import DefaultConnectionGene, DefaultNodeGene
from neat.innovation import InnovationTracker

from . import _core

# The gene attributes the C records hold, in neat-python's order.
NODE_ATTRIBUTES = (("bias", FloatAttribute), ("response", FloatAttribute), ("activation", StringAttribute),
                   ("aggregation", StringAttribute), ("time_constant", FloatAttribute))
CONNECTION_ATTRIBUTES = (("weight", FloatAttribute), ("enabled", BoolAttribute))

# neat-python's methods that reach a genome's genes; a subclass overriding one gets neat-python's
# Python code for all of them, so its override is called where neat-python calls it.
OPERATORS = ("configure_new", "configure_crossover", "mutate", "mutate_add_node", "mutate_delete_node",
             "mutate_add_connection", "mutate_delete_connection", "add_connection", "create_node",
             "create_connection", "compute_full_connections", "connect_fs_neat_nohidden",
             "connect_fs_neat_hidden", "connect_full_nodirect", "connect_full_direct",
             "connect_partial_nodirect", "connect_partial_direct", "distance")


def reference_union(innovations1: list[int], innovations2: list[int]) -> list[int]:
    """The set configure_crossover walks, built as neat-python builds it (the exact reference)."""
    return list(set(dict.fromkeys(innovations1).keys()) | set(dict.fromkeys(innovations2).keys()))


def reference_inputs(node_keys: list[int], output_keys: list[int], input_keys: list[int]) -> list[int]:
    """mutate_add_connection's possible_inputs, built as neat-python builds it."""
    return list((set(dict.fromkeys(node_keys)) - set(output_keys)) | set(input_keys))


def sets_match(cases: int = 300, seed: int = 20231) -> bool:
    """Whether the C core's re-enacted set orders equal this Python's real ones on varied keys
    (checked once, at the first operation; a private generator leaves `random` alone)."""
    rng = random.Random(seed)
    for case in range(cases):
        size = rng.choice((0, 1, 3, 5, 8, 20, 60, 200, 700))
        span = rng.choice((size + 2, 4 * size + 8, 10 ** 6))
        first = [rng.randrange(1, span + 1) for _ in range(size)]
        second = first[: rng.randrange(size + 1)] + [rng.randrange(1, span + 1) for _ in range(rng.randrange(size + 2))]
        rng.shuffle(second)
        if _core.emulated_union(first, second) != reference_union(first, second):
            return False
        outputs = list(range(rng.choice((1, 2, 3, 9, 12))))
        inputs = [-i - 1 for i in range(rng.choice((1, 2, 8, 40, 336)))]
        hidden = rng.sample(range(len(outputs), len(outputs) + 3 * size + 5), min(size, 3 * size + 5))
        nodes = outputs + hidden
        rng.shuffle(nodes)
        emulated = _core.emulated_inputs(nodes, outputs, inputs)
        if emulated is not None and emulated != reference_inputs(nodes, outputs, inputs):
            return False
    return True


_plain_classes: dict[type, bool] = {}


def _attributes_are(gene_type, expected) -> bool:
    found = getattr(gene_type, "_gene_attributes", ())
    return len(found) == len(expected) and all(
        a.name == name and type(a) is kind for a, (name, kind) in zip(found, expected))


# neat-python's gene attribute lists as this module found them; the C core checks they are unchanged.
_NODE_LIST, _CONNECTION_LIST = DefaultNodeGene._gene_attributes, DefaultConnectionGene._gene_attributes


def plain_class(cls) -> bool:
    """Whether `cls` keeps neatpar's operators (a subclass may add to a genome, not change them)."""
    known = _plain_classes.get(cls)
    if known is None:
        known = _plain_classes[cls] = all(getattr(cls, name) is getattr(DefaultGenome, name) for name in OPERATORS)
    return known


class DefaultGenome(neat.DefaultGenome):
    """neat.DefaultGenome with its genes as C records and its operators in C, draw for draw."""

    def __init__(self, key):
        self.key = key
        self._genes = _core.Genes()
        self.fitness = None

    # -- the gene dicts neat-python's interface promises --------------------------------------

    @property
    def nodes(self) -> dict:
        if self._genes is not None:
            self._to_objects()
        return self._nodes

    @nodes.setter
    def nodes(self, value: dict) -> None:
        if self._genes is not None:
            self._to_objects()
        self._nodes = value

    @property
    def connections(self) -> dict:
        if self._genes is not None:
            self._to_objects()
        return self._connections

    @connections.setter
    def connections(self, value: dict) -> None:
        if self._genes is not None:
            self._to_objects()
        self._connections = value

    def _to_objects(self) -> None:
        """From records to neat-python's gene objects, for good (code may hold on to them)."""
        self._nodes, self._connections = _core.materialize(self._genes)
        self._genes = None

    def _view(self) -> neat.DefaultGenome:
        """A neat.DefaultGenome with copies of these genes, for neat-python's read-only helpers."""
        view = neat.DefaultGenome(self.key)
        view.fitness = self.fitness
        view.nodes, view.connections = _core.materialize(self._genes)
        return view

    # -- operators ----------------------------------------------------------------------------

    # Each operator runs in C, or, where C returns NotImplemented (genes kept as objects, a class
    # that changes an operator, genes other than neat-python's defaults), neat-python's own code.

    def configure_new(self, config):
        if _core.configure_new(self, config) is NotImplemented:
            return super().configure_new(config)
        warn_initial_connection(config)

    def configure_crossover(self, genome1, genome2, config):
        if _core.crossover(self, genome1, genome2, config) is NotImplemented:
            super().configure_crossover(genome1, genome2, config)

    def mutate(self, config):
        if _core.mutate(self, config) is NotImplemented:
            super().mutate(config)

    def distance(self, other, config):
        d = _core.distance(self, other, config)
        return super().distance(other, config) if d is NotImplemented else d

    def size(self):
        if self._genes is None:
            return super().size()
        return self._genes.size()

    def get_pruned_copy(self, genome_config):
        if self._genes is None:
            return super().get_pruned_copy(genome_config)
        return self._view().get_pruned_copy(genome_config)

    def __str__(self):
        if self._genes is None:
            return super().__str__()
        return neat.DefaultGenome.__str__(self._view())


def warn_initial_connection(config) -> None:
    """configure_new's warnings for the ambiguous schemes, word for word."""
    kind, hidden = config.initial_connection, config.num_hidden > 0
    if not hidden:
        return
    if kind == "fs_neat":
        print("Warning: initial_connection = fs_neat will not connect to hidden nodes;",
              "\tif this is desired, set initial_connection = fs_neat_nohidden;",
              "\tif not, set initial_connection = fs_neat_hidden", sep="\n", file=sys.stderr)
    elif kind == "full":
        print("Warning: initial_connection = full with hidden nodes will not do direct input-output connections;",
              "\tif this is desired, set initial_connection = full_nodirect;",
              "\tif not, set initial_connection = full_direct", sep="\n", file=sys.stderr)
    elif kind == "partial":
        print("Warning: initial_connection = partial with hidden nodes will not do direct input-output connections;",
              f"\tif this is desired, set initial_connection = partial_nodirect {config.connection_fraction};",
              f"\tif not, set initial_connection = partial_direct {config.connection_fraction}",
              sep="\n", file=sys.stderr)


_core.setup(DefaultNodeGene, DefaultConnectionGene,
            _NODE_LIST if _attributes_are(DefaultNodeGene, NODE_ATTRIBUTES) else None,
            _CONNECTION_LIST if _attributes_are(DefaultConnectionGene, CONNECTION_ATTRIBUTES) else None,
            DefaultGenome, plain_class, InnovationTracker, reference_union, reference_inputs, sets_match)
