"""Tests of neatpar/environment.py, the seam between the episode runner and an environment: a behavior's
Layout (inputs and outputs a network needs), the game statistics' aggregation numbers as
ML-Agents sends them, and that both kinds of environment (Unity, Gymnasium) implement the whole
Environment interface with its signatures."""
import inspect

from hypothesis import given
from hypothesis import strategies as st
from mlagents_envs.side_channel.stats_side_channel import StatsAggregationMethod

from neatpar.environment import Aggregation, Environment, Layout
from neatpar.envs.gym import GymEnvironment
from neatpar.envs.unity.adapter import UnityAdapter

sizes = st.lists(st.integers(0, 10**6), max_size=6).map(tuple)


@given(sizes, st.integers(0, 10**4), sizes)
def test_a_layout_needs_an_input_per_observed_value_and_an_output_per_action_choice(observations, continuous, branches):
    layout = Layout(observations, continuous, branches)
    assert layout.inputs == sum(observations)
    assert layout.outputs == continuous + sum(branches)
    assert layout.describe_actions() == f"{continuous} continuous, discrete branches {branches}"


def test_layouts_compare_by_value_and_have_no_branches_unless_given():
    assert Layout((8,), 2) == Layout((8,), 2, ()) and Layout((8,), 2).branches == ()
    assert Layout((8,), 2) != Layout((4, 4), 2) and hash(Layout((3,), 0, (2,))) == hash(Layout((3,), 0, (2,)))


def test_aggregations_are_ml_agents_stats_aggregation_methods_name_for_name_and_number_for_number():
    assert {a.name: a.value for a in Aggregation} == {m.name: m.value for m in StatsAggregationMethod}


def interface():
    """The Environment protocol's members: name -> its signature, or "property"."""
    members = {}
    for name, member in vars(Environment).items():
        if name.startswith("_"):
            continue
        members[name] = "property" if isinstance(member, property) else inspect.signature(member)
    return members


def test_both_kinds_of_environment_implement_the_whole_interface_with_its_signatures():
    wanted = interface()
    assert set(wanted) == {"reset", "set_parameters", "poll", "layout", "act", "step", "expect", "take_game_stats",
                           "capture", "take_frames", "close", "kill", "process_pid"}
    for kind in (UnityAdapter, GymEnvironment):
        for name, signature in wanted.items():
            member = inspect.getattr_static(kind, name)
            if signature == "property":
                assert isinstance(member, property), (kind.__name__, name)
            else:
                assert list(inspect.signature(member).parameters) == list(signature.parameters), (kind.__name__, name)
