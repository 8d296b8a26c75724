"""A genome's genes as arrays, for code that reads many genomes fast (neatpar's compile): no gene
objects are made, and the genome keeps its form.

Works on neatpar's genomes whose genes are records; `gene_dicts` gives any genome's gene dicts
(copies made for a record genome, which stays as it is).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from . import _core

# The C records (Node and Conn in core/core.h), field by field.
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


def genes(genome) -> "_core.Genes | None":
    """The genome's records, or None when its genes are objects (or it is not neatpar's)."""
    found = getattr(genome, "_genes", None)
    return found if type(found) is _core.Genes else None


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


def enabled_links(genomes) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """(inputs, outputs, weights, starts) of every enabled connection, genome after genome in
    dict order; None unless every genome's genes are records."""
    found = [genes(g) for g in genomes]
    if any(g is None for g in found):
        return None
    ins, outs, weights, starts = _core.enabled_links(found)
    return (np.frombuffer(ins, np.int64), np.frombuffer(outs, np.int64), np.frombuffer(weights, np.float64),
            np.frombuffer(starts, np.int64))
