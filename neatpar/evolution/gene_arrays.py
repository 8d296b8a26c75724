"""A genome's genes as arrays, for code that reads many genomes fast (neatpar's compile): no gene
objects are made, and the genome keeps its form.

neatpar's genomes keep their genes as records; `read_genes` gives any genomes' records (read in C
from a genome's gene objects where it keeps them as objects), and `links` and `node_table` read
many genomes' records at once. `gene_dicts` gives any genome's gene dicts (neat-python's own gene
objects, copies for a record genome, which stays as it is).
"""
from __future__ import annotations

from typing import NamedTuple, Sequence

import numpy as np

from . import _core

# The C records (Node and Conn in core/genes.h), field by field.
NODE_RECORD = np.dtype({"names": ["key", "bias", "response", "time_constant", "activation", "aggregation"],
                        "formats": ["i8", "f8", "f8", "f8", "i4", "i4"], "offsets": [0, 8, 16, 24, 32, 36],
                        "itemsize": 40})
CONNECTION_RECORD = np.dtype({"names": ["input", "output", "innovation", "weight", "enabled"],
                              "formats": ["i8", "i8", "i8", "f8", "i4"], "offsets": [0, 8, 16, 24, 32],
                              "itemsize": 40})


class GeneRecords(NamedTuple):
    """One genome's genes in its dicts' order (read-only arrays)."""
    nodes: np.ndarray        # NODE_RECORD
    connections: np.ndarray  # CONNECTION_RECORD
    names: tuple             # activation/aggregation id in a node record -> function name


class Links(NamedTuple):
    """Connections of many genomes, genome after genome in dict order: genome i's are
    [starts[i], starts[i + 1])."""
    inputs: np.ndarray   # int64
    outputs: np.ndarray  # int64
    weights: np.ndarray  # float64
    enabled: np.ndarray  # bool
    starts: np.ndarray   # int64, one more than genomes


class NodeTable(NamedTuple):
    """Attributes of chosen nodes of many genomes, in the order asked."""
    activations: np.ndarray   # int32 ids into names
    aggregations: np.ndarray  # int32 ids into names
    biases: np.ndarray
    responses: np.ndarray
    time_constants: np.ndarray
    names: tuple


def genes(genome) -> "_core.Genes | None":
    """The genome's records, or None when its genes are objects (or it is not neatpar's)."""
    found = getattr(genome, "_genes", None)
    return found if type(found) is _core.Genes else None


def read_genes(genomes: Sequence) -> list | None:
    """Every genome's records: its own, or read now from its gene objects (in C, one pass; the
    genome keeps them); None if a genome's genes lack an attribute neat-python's gene classes have."""
    found = []
    for genome in genomes:
        records = genes(genome)
        if records is None:
            try:
                records = _core.genes_of(genome)
            except (AttributeError, TypeError, ValueError):
                return None
        found.append(records)
    return found


def gene_records(genome) -> GeneRecords | None:
    """The genome's genes as arrays, or None when its genes are objects."""
    found = genes(genome)
    if found is None:
        return None
    nodes, connections = found.records()
    return GeneRecords(np.frombuffer(nodes, NODE_RECORD), np.frombuffer(connections, CONNECTION_RECORD),
                       _core.names())


def gene_dicts(genome) -> tuple[dict, dict]:
    """(nodes, connections) as neat-python's gene dicts, without changing the genome's form."""
    found = genes(genome)
    return (genome.nodes, genome.connections) if found is None else _core.materialize(found)


def links(records: list, enabled_only: bool) -> Links:
    """The connections of every genome's records (`read_genes`): the enabled ones, or all."""
    ins, outs, weights, enabled, starts = (_core.enabled_links if enabled_only else _core.all_links)(records)
    return Links(np.frombuffer(ins, np.int64), np.frombuffer(outs, np.int64), np.frombuffer(weights, np.float64),
                 np.frombuffer(enabled, np.bool_), np.frombuffer(starts, np.int64))


def node_table(records: list, keys: np.ndarray, starts: np.ndarray) -> NodeTable:
    """The attributes of genome i's nodes keys[starts[i]:starts[i + 1]] (a KeyError for a key it
    has no node gene for, as neat-python's networks' create raises)."""
    acts, aggs, biases, responses, taus = _core.node_table(
        records, np.ascontiguousarray(keys, np.int64), np.ascontiguousarray(starts, np.int64))
    return NodeTable(np.frombuffer(acts, np.int32), np.frombuffer(aggs, np.int32), np.frombuffer(biases, np.float64),
                     np.frombuffer(responses, np.float64), np.frombuffer(taus, np.float64), _core.names())


def enabled_links(genomes) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """(inputs, outputs, weights, starts) of every enabled connection, genome after genome in
    dict order; None unless every genome's genes are records."""
    found = [genes(g) for g in genomes]
    if any(g is None for g in found):
        return None
    found_links = links(found, enabled_only=True)
    return found_links.inputs, found_links.outputs, found_links.weights, found_links.starts
