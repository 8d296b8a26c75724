"""Tests of neatpar_sim/spec.py, what a simulator task declares and how its options are checked: single and
per-behavior integer options (one value, a comma-separated list, `option.INDEX` from the side
channel), the names no task takes, and the defaults a task inherits."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from neatpar_sim.spec import Behavior, OptionError, StepResult, Task, integer, per_behavior, unknown_options

NAMES = ("Probe?team=0", "Rival?team=1", "Third?team=2")


@given(st.integers(-50, 50), st.integers(-50, 50), st.integers(-60, 60), st.booleans())
def test_a_single_option_is_an_integer_in_its_range_given_as_int_or_integral_float(low, span, value, as_float):
    high = low + abs(span)
    given_value = float(value) if as_float else value
    if low <= value <= high:
        assert integer({"n": given_value}, "n", low, low, high) == value
        assert type(integer({"n": given_value}, "n", low, low, high)) is int
    else:
        with pytest.raises(OptionError, match=f"n must be an integer from {low} to {high}, got {value}"):
            integer({"n": given_value}, "n", low, low, high)
    assert integer({}, "n", high, low, high) == high  # the default when absent
    assert [integer({"n": edge}, "n", low, low, high) for edge in (low, high)] == [low, high]
    for outside in (low - 1, high + 1):
        with pytest.raises(OptionError, match=f"got {outside}$"):
            integer({"n": outside}, "n", low, low, high)


@pytest.mark.parametrize("value, message", [
    ((1, 2), "agents takes one value, got 1,2"),
    (2.5, "agents must be an integer from 1 to 9, got 2.5"),
    (True, "agents must be an integer from 1 to 9, got True"),
])
def test_a_single_option_refuses_lists_fractions_and_switches(value, message):
    with pytest.raises(OptionError) as error:
        integer({"agents": value}, "agents", 1, 1, 9)
    assert str(error.value) == message


@given(st.integers(1, 3), st.data())
def test_per_behavior_values_come_from_one_value_a_list_or_an_indexed_key(behaviors, data):
    names = NAMES[:behaviors]
    values = st.integers(0, 9)
    single = data.draw(values)
    assert per_behavior({"k": single}, "k", 5, names, 0, 9) == (single,) * behaviors
    listed = tuple(data.draw(st.lists(values, min_size=behaviors, max_size=behaviors)))
    options = {"k": listed if behaviors > 1 else listed[0]}
    expected = list(listed)
    for index in data.draw(st.lists(st.integers(0, behaviors - 1), unique=True)):
        options[f"k.{index}"] = expected[index] = data.draw(values)
    assert per_behavior(options, "k", 5, names, 0, 9) == tuple(expected)
    assert per_behavior({}, "k", 5, names, 0, 9) == (5,) * behaviors


@pytest.mark.parametrize("options, names, message", [
    ({"obs": (4, 6, 8)}, NAMES[:2], "obs needs one value per behavior (2: Probe?team=0, Rival?team=1), got 3: 4,6,8"),
    ({"obs": (4, 0)}, NAMES[:2], "obs must be an integer from 1 to 99 for Rival?team=1, got 0"),
    ({"obs": 4, "obs.0": 100}, NAMES[:2], "obs must be an integer from 1 to 99 for Probe?team=0, got 100"),
    ({"obs": -1}, NAMES[:1], "obs must be an integer from 1 to 99, got -1"),
])
def test_a_bad_per_behavior_value_names_the_behavior(options, names, message):
    with pytest.raises(OptionError) as error:
        per_behavior(options, "obs", 4, names, 1, 99)
    assert str(error.value) == message


def test_names_no_option_takes_are_the_unknown_ones():
    options = {"agents": 1, "seed": 2, "obs.1": 3, "obs": 4, "seed.0": 5, "obs.x": 6, "agent": 7, "obs.": 8}
    assert unknown_options(options, singles=("seed",), per_behavior_keys=("agents", "obs")) == \
        ["seed.0", "obs.x", "agent", "obs."]


class OneRow(Task):
    """A task that implements only what every task must."""
    behaviors = (Behavior("Only", 2, continuous=1),)

    def __init__(self):
        self.restarted = []

    def rows(self, behavior):
        return 3

    def restart(self, rows):
        self.restarted.append(rows)


def test_a_task_inherits_no_groups_no_masks_no_intro_its_own_timing_none_and_spawns_as_restarts():
    task = OneRow()
    assert task.group_ids("Only").tolist() == [0, 0, 0] and task.group_ids("Only").dtype == np.int32
    assert task.masks("Only") is None and task.spawn_after("Only") == 0 and task.timing() is None
    rows = {"Only": np.array([2])}
    task.spawned(rows)
    assert task.restarted == [rows]
    for unimplemented in (lambda: Task().rows("Only"), lambda: Task().observe("Only"),
                          lambda: Task().step({}, {}, {}), lambda: Task().restart({})):
        with pytest.raises(NotImplementedError):
            unimplemented()


def test_behaviors_compare_by_their_specs_and_a_step_result_destroys_nothing_by_default():
    assert Behavior("B", 4, 1) == Behavior("B", 4, 1, ()) and Behavior("B", 4, 1) != Behavior("B", 5, 1)
    result = StepResult(np.zeros(2, np.float32), np.zeros(2, np.float32), np.zeros(2, bool), np.zeros(2, bool))
    assert result.destroyed is None
