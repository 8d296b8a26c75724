"""MixedPopulation (neatpar/nn/mixed.py): kernels of genomes with different input and output
counts (an asymmetric game's populations) as one, each row's outputs bit for bit its own kernel's."""
import neat
import numpy as np
import pytest

from neatpar.nn import FeedForwardPopulation, RecurrentPopulation
from neatpar.nn.mixed import MixedPopulation
from support.configs import make_config


def mutated(config, count, seed, rounds=4):
    genomes = list(neat.Population(config, seed=seed).population.values())[:count]
    for genome in genomes:
        for _ in range(rounds):
            genome.mutate(config.genome_config)
    return genomes


def configs(tmp_path, feed_forward="true"):
    options = dict(activation_options="tanh sigmoid relu", activation_mutate_rate=0.3, feed_forward=feed_forward)
    return (make_config(tmp_path, "narrow.cfg", num_inputs=3, num_outputs=2, **options),
            make_config(tmp_path, "wide.cfg", num_inputs=5, num_outputs=1, **options))


def separately(kernels, x, index, rows=None):
    """Each row through its own kernel (its first num_inputs columns), outputs padded to the widest."""
    out = np.zeros((len(x), max(k.num_outputs for k in kernels)))
    start = 0
    for kernel in kernels:
        mine = np.flatnonzero((index >= start) & (index < start + len(kernel)))
        if len(mine):
            got = kernel.activate(x[mine, :kernel.num_inputs], index[mine] - start,
                                  None if rows is None else rows[mine])
            out[mine, :kernel.num_outputs] = got
        start += len(kernel)
    return out


def test_feed_forward_rows_equal_their_own_kernel_s_outputs(tmp_path):
    narrow, wide = configs(tmp_path)
    a, b = mutated(narrow, 6, 1), mutated(wide, 5, 2)
    mixed = MixedPopulation([FeedForwardPopulation.create(a, narrow), FeedForwardPopulation.create(b, wide)])
    assert (mixed.num_inputs, mixed.num_outputs, len(mixed)) == (5, 2, 11)
    rng = np.random.default_rng(3)
    x, index = rng.normal(size=(200, 5)), rng.integers(0, 11, 200)
    reference = [FeedForwardPopulation.create(a, narrow), FeedForwardPopulation.create(b, wide)]
    expected = separately(reference, x, index)
    assert np.array_equal(mixed.activate(x, index), expected)
    assert (expected[index >= 6, 1] == 0).all()          # a one-output genome's second column is padding
    x[:, 3:][index < 6] = 99.0                           # a narrow genome never reads the padding
    assert np.array_equal(mixed.activate(x, index)[index < 6], expected[index < 6])


def test_recurrent_rows_keep_their_state_per_part_and_advance_matches(tmp_path):
    narrow, wide = configs(tmp_path, feed_forward="false")
    a, b = mutated(narrow, 4, 4), mutated(wide, 4, 5)
    mixed = MixedPopulation([RecurrentPopulation.create(a, narrow), RecurrentPopulation.create(b, wide)])
    reference = [RecurrentPopulation.create(a, narrow), RecurrentPopulation.create(b, wide)]
    rng = np.random.default_rng(6)
    index, rows = rng.integers(0, 8, 30), np.arange(30)
    state = np.zeros((30, mixed.tables.stride))
    for step in range(5):
        x = rng.normal(size=(30, 5))
        expected = separately(reference, x, index, rows)
        assert np.array_equal(mixed.activate(x, index, rows), expected), step
        advanced, state = mixed.advance(x, index, state)
        assert np.array_equal(advanced, expected), step
    mixed.reset(rows[:3])
    for kernel in reference:
        kernel.reset(rows[:3])
    x = rng.normal(size=(30, 5))
    assert np.array_equal(mixed.activate(x, index, rows), separately(reference, x, index, rows))


def test_parts_are_all_of_one_kind(tmp_path):
    narrow, wide = configs(tmp_path, feed_forward="false")
    with pytest.raises(ValueError, match="all feed-forward or all recurrent"):
        MixedPopulation([FeedForwardPopulation.create(mutated(narrow, 2, 1, 0), narrow),
                         RecurrentPopulation.create(mutated(wide, 2, 1, 0), wide)])
