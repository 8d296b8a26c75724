"""Module-level state (neatpar/parallel/module_state.py): draws from the global generators made
without seeding them are recognised, for any count, and seeding never is."""
import random

import numpy as np
import pytest

from neatpar.parallel import module_state


@pytest.fixture
def generators_restored():
    state = random.getstate(), np.random.get_state()
    yield
    random.setstate(state[0])
    np.random.set_state(state[1])


WORDS = [0, 1, 2, 623, 624, 625, 1248, 5000, 624 * 100 + 7]  # 32-bit words drawn: within a block, across twists


@pytest.mark.parametrize("words", WORDS)
def test_draws_without_seeding_are_recognised_for_any_count(generators_restored, words):
    random.seed()  # from the OS, as a fresh interpreter does
    np.random.seed()
    before = module_state.snapshot()
    if words:
        random.getrandbits(32 * words)
        np.random.bytes(4 * words)  # 4 bytes per 32-bit word
    expected = ("random", "numpy.random") if words else ()
    assert module_state.unseeded_draws(before) == expected


@pytest.mark.parametrize("words", WORDS)
def test_seeding_is_never_taken_for_a_draw(generators_restored, words):
    random.seed()
    np.random.seed()
    before = module_state.snapshot()
    random.seed(words)  # any seed, then any number of draws: every process gets the same values
    np.random.seed(words)
    if words:
        random.getrandbits(32 * words)
        np.random.bytes(4 * words)
    assert module_state.unseeded_draws(before) == ()


def test_ordinary_draws_of_each_kind_are_recognised(generators_restored):
    for draw in (random.random, lambda: random.gauss(0, 1), lambda: random.shuffle(list(range(50))),
                 lambda: random.randrange(10 ** 30), np.random.random, lambda: np.random.normal(size=7),
                 lambda: np.random.randint(0, 10, size=1000), lambda: np.random.permutation(300)):
        before = module_state.snapshot()
        draw()
        assert module_state.unseeded_draws(before), draw


def test_draws_beyond_the_recognised_length_are_not_flagged(generators_restored):
    """The check gives up after MAX_TWISTS blocks: a miss, never a false alarm."""
    before = module_state.snapshot()
    random.getrandbits(32 * 624 * (module_state.MAX_TWISTS + 2))
    assert module_state.unseeded_draws(before) == ()
