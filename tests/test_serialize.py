"""Tests of parallel/serialize.py: pickling by value that leaves the sender unchanged."""
import pickle

import neat

from neatpar.parallel.serialize import _peek_count, dumps
from support.configs import load_config


def started_config():
    config = load_config()
    genome = next(iter(neat.Population(config, seed=1).population.values()))
    genome.mutate_add_node(config.genome_config)  # the node counter now exists
    return config


def test_plain_pickle_of_a_neat_config_changes_the_sender():
    """The failure neatpar guards against, as neat-python 2.0 has it: sending skips a node key."""
    config = started_config()
    before = _peek_count(config.genome_config.node_indexer)
    pickle.dumps(config)
    assert _peek_count(config.genome_config.node_indexer) == before + 1


def test_neatpar_dumps_leaves_the_sender_unchanged_and_the_copy_equal():
    config = started_config()
    before = _peek_count(config.genome_config.node_indexer)
    data = dumps(config)
    assert _peek_count(config.genome_config.node_indexer) == before
    assert dumps(config) == data  # repeatable: nothing moved
    copy = pickle.loads(data)
    assert next(copy.genome_config.node_indexer) == before
    assert next(config.genome_config.node_indexer) == before  # the sender's next key is intact


def test_config_without_a_started_counter_round_trips():
    config = load_config()
    copy = pickle.loads(dumps(config))
    assert copy.genome_config.node_indexer is None
    assert copy.pop_size == config.pop_size
