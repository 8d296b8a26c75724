"""neatpar/evolution/core/'s foundations (the C core), checked against the real thing: its draws are
`random`'s own, its set orders CPython's own, and its fallback paths (state copied in and out of
`random`, real Python sets, one thread or several) give the same runs."""
import random

import pytest
from hypothesis import given, settings, strategies as st

from support.evolution import NEAT_PYTHON, Run, assert_runs_agree, neatpar_classes, network_fitness, size_fitness, write_config
from neatpar.evolution import _core
from neatpar.evolution.genome import reference_inputs, reference_union

CALLS = st.one_of(
    st.tuples(st.just("random")),
    st.tuples(st.just("below"), st.integers(1, 2 ** 31)),
    st.tuples(st.just("gauss"), st.floats(-5, 5), st.floats(0, 3)),
    st.tuples(st.just("uniform"), st.floats(-30, 0), st.floats(0, 30)),
)


def python_draw(call):
    kind, *args = call
    if kind == "below":
        return random.randrange(args[0])  # _randbelow(n)
    return {"random": random.random, "gauss": random.gauss, "uniform": random.uniform}[kind](*args)


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 2 ** 32), skip=st.integers(0, 700), plan=st.lists(CALLS, max_size=60))
def test_draws_made_in_c_are_randoms_own(seed, skip, plan):
    """The same values as random's functions, and random left in the same state (gauss's cached
    second value included; `skip` words in, so the twist of the 624-word state happens inside)."""
    random.seed(seed)
    for _ in range(skip):
        random.getrandbits(32)
    start = random.getstate()
    made = _core._testing.draws(plan)
    after_c = random.getstate()
    random.setstate(start)
    expected = [python_draw(call) for call in plan]
    assert made == expected
    assert after_c == random.getstate()


INNOVATIONS = st.lists(st.integers(1, 10 ** 6), max_size=400)


@settings(max_examples=400, deadline=None)
@given(first=INNOVATIONS, second=INNOVATIONS, shared=st.integers(0, 400))
def test_the_crossover_set_iterates_as_cpythons(first, second, shared):
    """set(innovations1) | set(innovations2), as configure_crossover builds it: keys repeated,
    shared, sparse and dense."""
    second = first[:shared] + second
    assert _core.emulated_union(first, second) == reference_union(first, second)


@settings(max_examples=300, deadline=None)
@given(outputs=st.integers(1, 12), inputs=st.integers(1, 400), hidden=st.sets(st.integers(0, 10 ** 5), max_size=300),
       order=st.randoms(use_true_random=False))
def test_the_possible_inputs_iterate_as_cpythons(outputs, inputs, hidden, order):
    """(set(nodes) - set(output_keys)) | set(input_keys), as mutate_add_connection builds it
    (input keys -1 and -2 share a hash)."""
    output_keys = list(range(outputs))
    nodes = output_keys + sorted(h + outputs for h in hidden)
    order.shuffle(nodes)
    input_keys = [-i - 1 for i in range(inputs)]
    emulated = _core.emulated_inputs(nodes, output_keys, input_keys)
    assert emulated is None or emulated == reference_inputs(nodes, output_keys, input_keys)


def test_this_python_is_drawn_in_place_with_re_enacted_sets():
    assert _core._testing.modes() == {"random_in_place": True, "sets_emulated": True}


@pytest.fixture
def fallback_modes():
    """The paths taken on another CPython: state copied through getstate/setstate, real sets."""
    before = _core._testing.modes()
    _core._testing.force_modes(0, 0)
    yield
    _core._testing.force_modes(before["random_in_place"], before["sets_emulated"])


@pytest.mark.parametrize("kind", ["feed-forward", "recurrent"])
def test_the_fallback_paths_give_neat_pythons_run(tmp_path, fallback_modes, kind):
    path = write_config(str(tmp_path / "neat.cfg"), pop_size=40, num_inputs=4, num_outputs=2,
                        feed_forward=kind == "feed-forward", conn_add_prob=0.5, node_add_prob=0.3,
                        initial_connection="partial_direct 0.5")
    reference = Run.new(NEAT_PYTHON, path, 4, network_fitness)
    candidate = Run.new(neatpar_classes(), path, 4, network_fitness)
    assert assert_runs_agree(reference, candidate, 6, f"{kind}, fallback paths") == 6


def test_the_number_of_distance_threads_changes_nothing(tmp_path):
    """A population of many species, speciated with 1, 2 and 4 threads: the same run (and the
    same as neat-python's)."""
    path = write_config(str(tmp_path / "neat.cfg"), pop_size=300, num_inputs=6, num_outputs=2,
                        compatibility_threshold=1.0, conn_add_prob=0.5, node_add_prob=0.3)
    runs, previous = [], _core.set_threads(1)
    try:
        for threads in (1, 2, 4):
            _core.set_threads(threads)
            run = Run.new(neatpar_classes(), path, 9, size_fitness)
            for _ in range(4):
                assert run.step()
            runs.append(run.snapshot())
        reference = Run.new(NEAT_PYTHON, path, 9, size_fitness)
        for _ in range(4):
            reference.step()
    finally:
        _core.set_threads(previous)
    assert runs[0] == runs[1] == runs[2] == reference.snapshot()
    assert len(dict(runs[0])["species"]) > 20
