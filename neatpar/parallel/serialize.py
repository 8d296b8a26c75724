"""Pickling by value that never changes the object being sent.

Sending an object to another process must leave the sender's copy exactly as it was. Plain
pickle does not promise that: neat-python 2.0's DefaultGenomeConfig.__getstate__ calls
next() on the config's node-key counter, so every pickle of a config (neat-python's own
ParallelEvaluator pickles it once per genome) makes the sender skip node keys and changes the
course of evolution. neatpar pickles through `dumps`, whose reductions for such classes read
their state without consuming it; the receiver rebuilds the same object.
"""
from __future__ import annotations

import copyreg
import io
import itertools
import pickle
from typing import Any

PROTOCOL = pickle.HIGHEST_PROTOCOL


def _peek_count(counter: itertools.count) -> int:
    """The value next(counter) would return, without calling next()."""
    return counter.__reduce__()[1][0]


def _reduce_genome_config(config) -> tuple:
    # The same state neat-python's __getstate__ produces, minus the side effect; its own
    # __setstate__ rebuilds the counter on the receiving side.
    state = config.__dict__.copy()
    indexer = state.get("node_indexer")
    state["_node_indexer_next_value"] = None if indexer is None else _peek_count(indexer)
    state["node_indexer"] = None
    return (copyreg.__newobj__, (type(config),), state)


def _dispatch_table() -> dict:
    table = copyreg.dispatch_table.copy()
    try:
        from neat.genome import DefaultGenomeConfig
    except ImportError:  # neat-python absent: nothing to correct
        return table
    table[DefaultGenomeConfig] = _reduce_genome_config
    return table


_DISPATCH = _dispatch_table()


def dumps(obj: Any) -> bytes:
    """pickle.dumps(obj) by value, leaving `obj` unchanged."""
    buffer = io.BytesIO()
    pickler = pickle.Pickler(buffer, PROTOCOL)
    pickler.dispatch_table = _DISPATCH
    pickler.dump(obj)
    return buffer.getvalue()
