"""Tests of search/descriptors.py: `final_observation[i:j]` and `mean_observation[i:j]` parsed and
bound to an observation width, the per-row accumulator a runner feeds at each decision and reads
at each episode's end, the average over a genome's episodes, and a fitness function's returns
turned into outcomes, with one-line errors naming the genome whose descriptor is missing or wrong."""
import numpy as np
import pytest

from neatpar.errors import ConfigError, DescriptorError, FitnessError
from neatpar.search.descriptors import (DescriptorAccumulator, DescriptorSpec, GenomeDescriptors, descriptor_matrix,
                                        outcome_of, parse_descriptor)
from neatpar.search.results import Outcome


@pytest.mark.parametrize("text, spec", [
    ("final_observation[6:8]", DescriptorSpec("final_observation", 6, 8)),
    (" mean_observation[ 0 : 2 ] ", DescriptorSpec("mean_observation", 0, 2)),
    ("final_observation[-2:]", DescriptorSpec("final_observation", -2, None)),
    ("final_observation[:]", DescriptorSpec("final_observation", None, None)),
])
def test_the_two_forms_parse_with_python_slices(text, spec):
    assert parse_descriptor(text) == spec
    assert parse_descriptor(spec.text) == spec


@pytest.mark.parametrize("text", ["final_obs[0:2]", "final_observation[2]", "final_observation(0:2)",
                                  "mean_observation[0:2:1]", "", "final_observation[a:b]"])
def test_other_values_are_a_one_line_config_error(text):
    with pytest.raises(ConfigError, match=r"is not final_observation\[i:j\] or mean_observation\[i:j\]"):
        parse_descriptor(text)


def test_binding_resolves_the_slice_and_refuses_one_that_selects_nothing_within_the_observation():
    bound = parse_descriptor("final_observation[-2:]").bind(12)
    assert (bound.start, bound.stop, bound.width) == (10, 12, 2)
    assert parse_descriptor("mean_observation[:3]").bind(8).width == 3
    assert parse_descriptor("final_observation[0:8]").bind(8).width == 8   # up to the end is within
    for text in ("final_observation[5:5]", "final_observation[3:1]", "final_observation[8:]"):
        with pytest.raises(ConfigError, match=r"selects no values of an observation of 8 values \(indices 0-7\): "
                                              r"give indices from 0 to 8 \(e.g. final_observation\[0:2\]\)$"):
            parse_descriptor(text).bind(8)


@pytest.mark.parametrize("text, width, message", [
    ("final_observation[10:14]", 12, "descriptor = final_observation[10:14] reaches past the end of an observation "
                                     "of 12 values (indices 0-11): give indices from 0 to 12 (e.g. "
                                     "final_observation[10:12])"),
    ("mean_observation[20:22]", 12, "descriptor = mean_observation[20:22] reaches past the end of an observation of "
                                    "12 values (indices 0-11): give indices from 0 to 12 (e.g. mean_observation[0:2])"),
    ("final_observation[-9:]", 8, "descriptor = final_observation[-9:] reaches before the start of an observation "
                                  "of 8 values (indices 0-7): give indices from 0 to 8 (e.g. final_observation[0:8])"),
    ("final_observation[0:3]", 1, "descriptor = final_observation[0:3] reaches past the end of an observation of 1 "
                                  "value (index 0): give indices from 0 to 1 (e.g. final_observation[0:1])"),
])
def test_a_slice_reaching_outside_the_observation_is_refused_saying_so(text, width, message):
    """Python would cut such a slice short; neatpar refuses it (a miscounted sensor) and names the
    observation's indices, with the slice cut to them as the example when that selects values."""
    with pytest.raises(ConfigError) as error:
        parse_descriptor(text).bind(width)
    assert str(error.value) == message


def test_final_observation_is_the_terminal_observation_or_else_the_last_decision():
    acc = DescriptorAccumulator(parse_descriptor("final_observation[1:3]").bind(4), rows=3)
    acc.decide(np.array([0, 2]), np.array([[0, 1, 2, 3], [0, 5, 6, 7]], np.float32))
    acc.decide(np.array([0]), np.array([[0, 10, 20, 30]], np.float32))
    assert acc.end(np.array([0, 2])).tolist() == [[10, 20], [5, 6]]
    acc.decide(np.array([1]), np.array([[9, 9, 9, 9]], np.float32))
    assert acc.end(np.array([1]), np.array([[0, -1, -2, -3]])).tolist() == [[-1, -2]]


def test_mean_observation_is_the_mean_over_the_decisions_and_rows_start_afresh_after_an_end():
    acc = DescriptorAccumulator(parse_descriptor("mean_observation[0:2]").bind(3), rows=2)
    for value in (1.0, 2.0, 6.0):
        acc.decide(np.array([0, 1]), np.array([[value, -value, 0], [value, 1, 0]]))
    assert acc.end(np.array([1]), np.array([[100.0, 100.0, 0]])).tolist() == [[3.0, 1.0]]   # terminal not a decision
    acc.decide(np.array([1]), np.array([[4.0, 4.0, 0]]))
    assert acc.end(np.array([0, 1])).tolist() == [[3.0, -3.0], [4.0, 4.0]]


def test_an_episode_with_no_observation_is_an_error_naming_the_row():
    acc = DescriptorAccumulator(parse_descriptor("final_observation[0:1]").bind(2), rows=4)
    with pytest.raises(DescriptorError, match="agent row 3 ended an episode without an observation"):
        acc.end(np.array([3]))


def test_a_genomes_descriptor_is_the_mean_of_its_episodes():
    tally = GenomeDescriptors()
    tally.add(7, np.array([1.0, 2.0]))
    tally.add(8, np.array([5.0, 5.0]))
    tally.add(7, np.array([3.0, -2.0]))
    assert tally.mean(7).tolist() == [2.0, 0.0] and tally.mean(8).tolist() == [5.0, 5.0]
    with pytest.raises(DescriptorError, match="genome 9 finished no episode"):
        tally.mean(9)


def test_a_fitness_function_returns_a_number_or_a_fitness_and_a_descriptor():
    assert outcome_of(1, 2.5, needs_descriptor=False) == Outcome(2.5)
    got = outcome_of(2, (1.0, [0.5, -0.5]), needs_descriptor=True)
    assert got.fitness == 1.0 and got.descriptor.tolist() == [0.5, -0.5]
    with pytest.raises(DescriptorError, match="genome 3's fitness function returned a number, not"):
        outcome_of(3, 2.0, needs_descriptor=True)
    with pytest.raises(DescriptorError, match="genome 4's descriptor holds nan"):
        outcome_of(4, (1.0, [0.0, float("nan")]), needs_descriptor=True)
    with pytest.raises(DescriptorError, match="genome 5's descriptor 'ab' is not a sequence of numbers"):
        outcome_of(5, (1.0, "ab"), needs_descriptor=True)
    with pytest.raises(FitnessError, match="genome 6's fitness is inf"):
        outcome_of(6, (float("inf"), [1.0]), needs_descriptor=True)
    with pytest.raises(FitnessError, match="genome 7's fitness function returned str"):
        outcome_of(7, "high", needs_descriptor=False)


def test_the_generations_descriptors_need_one_width_for_every_genome_and_name_the_first_that_fails():
    outcomes = {1: Outcome(0.0, np.array([1.0, 2.0])), 2: Outcome(0.0, np.array([3.0, 4.0])),
                3: Outcome(0.0, None), 4: Outcome(0.0, np.array([1.0, 2.0, 3.0]))}
    assert descriptor_matrix(outcomes, [2, 1]).tolist() == [[3.0, 4.0], [1.0, 2.0]]
    with pytest.raises(DescriptorError, match="genome 3 has no descriptor"):
        descriptor_matrix(outcomes, [1, 2, 3])
    with pytest.raises(DescriptorError, match="genome 4's descriptor has 3 values, the search's have 2"):
        descriptor_matrix(outcomes, [1, 4])
    with pytest.raises(DescriptorError, match="genome 1's descriptor has 2 values, the search's have 3"):
        descriptor_matrix(outcomes, [1], width=3)


def test_the_accumulator_grows_with_the_runner_s_rows_and_keeps_what_they_saw():
    accumulator = DescriptorAccumulator(parse_descriptor("mean_observation[1:3]").bind(4), 1)
    accumulator.decide(np.array([0]), np.array([[0.0, 1.0, 2.0, 3.0]]))
    accumulator.grow(3)
    accumulator.grow(2)   # never shrinks
    accumulator.decide(np.array([0, 2]), np.array([[0.0, 3.0, 4.0, 0.0], [0.0, 5.0, 6.0, 0.0]]))
    assert accumulator.end(np.array([0, 2])).tolist() == [[2.0, 3.0], [5.0, 6.0]]
    assert len(accumulator.seen) == 3
