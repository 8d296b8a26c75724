"""neatpar's drop-in for neat.DefaultGenome: the same genome, its operators in C, draw for draw.

A genome keeps its genes as compact records (`_core.Genes`). `genome.nodes` and
`genome.connections` are mappings over those records that behave as neat-python's dicts, and the
genes they hand out are neat-python's gene classes' objects (`_core.NodeGene` and
`_core.ConnectionGene`, subclasses of DefaultNodeGene and DefaultConnectionGene) whose attributes
are read from and written to the records: reading them makes no Python object per attribute, and
what code writes through them is what the next operator reads. Every operator gives neat-python's
result: configure_new, configure_crossover, mutate and distance run in C on the records, and
neat-python's own Python code runs for a genome whose genes are kept as objects (its dicts
replaced by code, or a checkpoint of that form), a subclass that overrides an operator (its genes
become neat-python's own objects at first use), or gene classes other than neat-python's defaults.

The class keeps neat-python's name, so `neat.Config` reads the config file's [DefaultGenome]
section unchanged; neatpar exports it as `neatpar.Genome`.
"""
from __future__ import annotations

import random
import sys
from collections.abc import MutableMapping

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


NODES, CONNECTIONS = 0, 1  # the C core's kinds of genes
_FIELDS = ("_nodes", "_connections")  # where a genome whose genes are objects keeps them
_NAMES = ("nodes", "connections")

# The records' mappings are mutable mappings (their methods are dict's, in C).
MutableMapping.register(_core.GeneMap)


def _objects(genome, kind: int):
    """genome.nodes or genome.connections where they are not the records' mappings: the genome's
    objects (its genes turned into neat-python's own objects first, for a class that changes an
    operator)."""
    if genome.__dict__.get("_genes") is not None:
        genome._to_objects()
    try:
        return genome.__dict__[_FIELDS[kind]]
    except KeyError:
        raise AttributeError(f"{type(genome).__name__!r} object has no attribute {_NAMES[kind]!r}") from None


def _assign(genome, kind: int, value, deleted: bool) -> None:
    """genome.nodes = value (or del genome.nodes): from then on the genome keeps its genes as
    objects, this mapping and the other as it was (the records' mapping, which stays what code
    holding it sees, or neat-python's dict)."""
    genes = genome.__dict__.get("_genes")
    if genes is not None:
        if getattr(_core, "NodeGene", None) is not None and plain_class(type(genome)):
            genome._nodes, genome._connections = genes.maps()
            genome._genes = None
        else:
            genome._to_objects()
    if deleted:
        if genome.__dict__.pop(_FIELDS[kind], None) is None:
            raise AttributeError(_NAMES[kind])
    else:
        genome.__dict__[_FIELDS[kind]] = value


class DefaultGenome(neat.DefaultGenome):
    """neat.DefaultGenome with its genes as C records and its operators in C, draw for draw."""

    nodes = _core.genes_slot(NODES, _objects, _assign)
    connections = _core.genes_slot(CONNECTIONS, _objects, _assign)

    def __init__(self, key):
        self.key = key
        self._genes = _core.Genes()
        self.fitness = None

    def _to_objects(self) -> None:
        """From records to neat-python's own gene objects, for good (a class that changes an
        operator runs neat-python's code on them)."""
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
    # that changes an operator, genes other than neat-python's defaults), neat-python's own code,
    # on neat-python's own gene objects (the genes it makes are of the config's gene classes).

    def _as_objects(self) -> None:
        if self.__dict__.get("_genes") is not None:
            self._to_objects()

    def configure_new(self, config):
        if _core.configure_new(self, config) is NotImplemented:
            self._as_objects()
            return super().configure_new(config)
        warn_initial_connection(config)

    def configure_crossover(self, genome1, genome2, config):
        if _core.crossover(self, genome1, genome2, config) is NotImplemented:
            self._as_objects()
            super().configure_crossover(genome1, genome2, config)

    def mutate(self, config):
        if _core.mutate(self, config) is NotImplemented:
            self._as_objects()
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
