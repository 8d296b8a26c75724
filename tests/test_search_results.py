"""Tests of search/results.py: the best genome by true fitness (kept unless a later generation beats
it strictly) and its plain-dict form for checkpoints."""
import pickle
import types

import numpy as np

from neatpar.search.results import Best, track_best


def genomes(*keys):
    return [(key, types.SimpleNamespace(key=key)) for key in keys]


def test_the_best_is_replaced_only_by_a_strictly_higher_fitness_and_the_first_of_equals_wins():
    best = track_best(None, genomes(4, 5, 6), np.array([1.0, 3.0, 3.0]), np.array([[0.0], [1.0], [2.0]]), 0)
    assert (best.genome.key, best.fitness, best.descriptor.tolist(), best.generation) == (5, 3.0, [1.0], 0)
    assert track_best(best, genomes(7), np.array([3.0]), None, 1) is best
    better = track_best(best, genomes(8), np.array([3.5]), None, 2)
    assert (better.genome.key, better.fitness, better.descriptor, better.generation) == (8, 3.5, None, 2)


def test_the_dict_form_round_trips_through_pickle():
    best = Best(types.SimpleNamespace(key=3), -1.5, np.array([0.25, 0.5]), 7)
    back = Best.from_dict(pickle.loads(pickle.dumps(best.to_dict())))
    assert (back.genome.key, back.fitness, back.descriptor.tolist(), back.generation) == (3, -1.5, [0.25, 0.5], 7)
    assert Best.from_dict(None) is None
