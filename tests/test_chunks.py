"""Tests of parallel/chunks.py, the worker side of ParallelEvaluator: per-genome seeding, what a
returned value counts as, and a chunk evaluated genome by genome, on real neat-python genomes."""
import contextlib
import math
import random

import neat
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from support import fitness_fns
from support.configs import load_config
from neatpar.errors import ClearedGlobalError
from neatpar.parallel.chunks import GenomeResult, Status, evaluate_chunk, outcome_of, seed_genome
from neatpar.parallel.handles import ClearedGlobal


@pytest.fixture(scope="module")
def population():
    """A real first generation of the XOR config, as a list of genomes, and its config."""
    config = load_config("xor.cfg")
    return list(neat.Population(config, seed=3).population.values()), config


@contextlib.contextmanager
def generators_kept():
    """The global generators as they were, whatever the block draws or seeds."""
    state = random.getstate(), np.random.get_state()
    try:
        yield
    finally:
        random.setstate(state[0])
        np.random.set_state(state[1])


def numpy_state(state=None):
    name, keys, position, *rest = state or np.random.get_state()
    return name, keys.tolist(), position, *rest


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(-2**40, 2**40), key=st.integers(0, 2**34))
def test_a_genome_is_seeded_from_seed_plus_its_key_in_both_global_generators(seed, key):
    with generators_kept():
        seed_genome(seed, key)
        drawn = random.random(), float(np.random.random())
    assert drawn == (random.Random(seed + key).random(), float(np.random.RandomState((seed + key) % 2**32).random()))


def test_no_seed_leaves_both_global_generators_as_they_were():
    with generators_kept():
        random.seed(5)
        np.random.seed(5)
        before = random.getstate(), numpy_state()
        seed_genome(None, 17)
        assert (random.getstate(), numpy_state()) == before


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.integers(-2**70, 2**70), st.floats(allow_nan=False, allow_infinity=False),
                 st.floats(-1e30, 1e30).map(np.float32), st.integers(-2**62, 2**62).map(np.int64)))
def test_a_finite_real_number_is_the_fitness_as_a_float(value):
    outcome = outcome_of(value)
    assert outcome == GenomeResult(Status.OK, float(value)) and type(outcome.value) is float


@settings(max_examples=150, deadline=None)
@given(st.one_of(st.sampled_from([math.nan, math.inf, -math.inf, np.float64("nan"), np.float32("inf"), True, False,
                                  None, 1j]),
                 st.text(), st.lists(st.floats()), st.dictionaries(st.text(max_size=3), st.integers())))
def test_anything_else_is_a_bad_fitness_shown_by_its_repr_cut_at_200_characters(value):
    assert outcome_of(value) == GenomeResult(Status.BAD, repr(value)[:200])


def test_a_chunk_yields_one_outcome_per_genome_in_order_evaluating_each_only_when_asked(population):
    genomes, config = population
    called = []

    def fitness(genome, config):
        called.append(genome.key)
        return float(genome.key)
    outcomes = evaluate_chunk(fitness, config, None, genomes[:6])
    assert called == []  # a generator: the worker streams each outcome as it is made
    assert next(outcomes) == GenomeResult(Status.OK, float(genomes[0].key)) and called == [genomes[0].key]
    assert list(outcomes) == [GenomeResult(Status.OK, float(g.key)) for g in genomes[1:6]]
    assert called == [g.key for g in genomes[:6]]


def test_a_genome_whose_evaluation_raises_gets_its_traceback_and_the_chunk_goes_on(population, monkeypatch):
    genomes, config = population
    victim = genomes[2].key
    monkeypatch.setenv("NEATPAR_TEST_VICTIM", str(victim))
    outcomes = list(evaluate_chunk(fitness_fns.raise_for_victim, config, None, genomes[:5]))
    assert [o.status for o in outcomes] == [Status.OK, Status.OK, Status.RAISED, Status.OK, Status.OK]
    text = outcomes[2].value
    assert text.startswith("Traceback (most recent call last):")
    assert "in raise_for_victim" in text and text.endswith(f"ValueError: boom in genome {victim}\n")
    assert [o.value for i, o in enumerate(outcomes) if i != 2] == [float(g.key) for i, g in enumerate(genomes[:5])
                                                                  if i != 2]


def test_touching_a_cleared_global_ends_the_chunk_it_is_no_genome_s_failure(population):
    genomes, config = population
    cleared = ClearedGlobal("ENV", "ML-Agents environment")
    called = []

    def fitness(genome, config):
        called.append(genome.key)
        if len(called) == 2:
            return cleared.step()
        return 1.0
    outcomes = evaluate_chunk(fitness, config, None, genomes[:5])
    assert next(outcomes) == GenomeResult(Status.OK, 1.0)
    with pytest.raises(ClearedGlobalError, match="global 'ENV' \\(ML-Agents environment\\) of your main module"):
        next(outcomes)
    assert called == [g.key for g in genomes[:2]]  # no genome after it was evaluated


@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_a_genome_s_outcome_does_not_depend_on_its_chunk_or_its_place_in_it(population, data):
    """What lets any worker run any genome: the same fitness in any order and any cut into chunks."""
    genomes, config = population
    chosen = data.draw(st.permutations(genomes[:24]))
    cuts = sorted(data.draw(st.sets(st.integers(1, len(chosen) - 1), max_size=5)))
    with generators_kept():
        whole = dict(zip((g.key for g in genomes[:24]),
                         evaluate_chunk(fitness_fns.stochastic, config, 11, genomes[:24])))
        cut = {}
        for start, end in zip([0, *cuts], [*cuts, len(chosen)]):
            cut.update(zip((g.key for g in chosen[start:end]),
                           evaluate_chunk(fitness_fns.stochastic, config, 11, chosen[start:end])))
    assert cut == whole
    assert len({o.value for o in whole.values()}) == len(whole)  # really drawn per genome
