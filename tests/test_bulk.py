"""The bulk step decode and encode (neatpar/envs/unity/bulk.py) against mlagents-envs' own
conversion: UnityEnvironment's _update_behavior_specs, _update_state (rpc_utils.steps_from_proto)
and _generate_step_input, run unchanged on an unconnected UnityEnvironment, on the stored
fixtures, on property-generated messages and on the real gRPC bytes of the simulator builds; and
the bridge's environment on the bulk path against the same on mlagents-envs' own, step by step and
over whole seeded runs."""
import dataclasses
import math
import os
import queue
import re
import struct
import uuid
from concurrent.futures import ThreadPoolExecutor

import grpc
import neat
import numpy as np
import pytest
from google.protobuf.message import DecodeError
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mlagents_envs.base_env import (
    ActionSpec,
    ActionTuple,
    BehaviorSpec,
    DecisionSteps,
    DimensionProperty,
    ObservationSpec,
    ObservationType,
)
from mlagents_envs.communicator import Communicator
from mlagents_envs.communicator_objects.agent_info_pb2 import AgentInfoProto
from mlagents_envs.communicator_objects.observation_pb2 import PNG
from mlagents_envs.communicator_objects.unity_message_pb2 import UnityMessageProto
from mlagents_envs.environment import UnityEnvironment
from mlagents_envs.exception import UnityTimeOutException
from mlagents_envs.side_channel.environment_parameters_channel import EnvironmentParametersChannel
from mlagents_envs.side_channel.raw_bytes_channel import RawBytesChannel
from mlagents_envs.side_channel.side_channel_manager import SideChannelManager
from mlagents_envs import timers

from support.configs import write_config
from support.images import pillow_png
from support.paths import BUILDS
from support.processes import wait_gone
from support.simulators import free_worker_id
from neatpar import settings as settings_module
from neatpar.envs.unity import bulk
from neatpar.envs.unity.bridge import SimulatorBridge
from neatpar.episodes.env_evaluator import UnityEvaluator

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")
RAW_CHANNEL = uuid.UUID("a1d8f7b7-cec8-50f9-b78b-d3e165a78520")

pytestmark = [pytest.mark.filterwarnings("ignore:`np.bool` is a deprecated alias:DeprecationWarning"),
              pytest.mark.filterwarnings("ignore:overflow encountered in reduce:RuntimeWarning")]


# ---------------------------------------------------------------- mlagents-envs' own conversion

def unconnected_environment(specs=None, agent_counts=None, side_channels=()) -> UnityEnvironment:
    """A UnityEnvironment with no game behind it, so its own conversion methods run as they are."""
    env = UnityEnvironment.__new__(UnityEnvironment)
    env._env_specs = dict(specs or {})
    env._env_state = {name: (DecisionSteps([], None, np.arange(n, dtype=np.int32), None, None, None), None)
                      for name, n in (agent_counts or {}).items()}
    env._side_channel_manager = SideChannelManager(list(side_channels) or [RawBytesChannel(RAW_CHANNEL)])
    return env


def mlagents_decode(data: bytes, specs):
    """(status, specs, states, side channel) as UnityEnvironment.step() takes them from a reply."""
    message = UnityMessageProto.FromString(data)
    if message.header.status != 200:
        return message.header.status, None, None, None
    env = unconnected_environment(specs)
    env._update_behavior_specs(message.unity_output)
    env._update_state(message.unity_output.rl_output)
    return 200, env._env_specs, env._env_state, message.unity_output.rl_output.side_channel


def mlagents_encode(actions, agent_counts, side_channel_values=()) -> tuple[bytes, bytes, bytes]:
    """What UnityEnvironment sends for a step (as its communicator wraps it): the message in
    protobuf's deterministic and default serializations, and its side-channel bytes."""
    parameters = EnvironmentParametersChannel()
    for key, value in side_channel_values:
        parameters.set_float_parameter(key, value)
    env = unconnected_environment(agent_counts=agent_counts, side_channels=[parameters])
    message = UnityMessageProto()
    message.header.status = 200
    message.unity_input.CopyFrom(env._generate_step_input(actions))
    return (message.SerializeToString(deterministic=True), message.SerializeToString(),
            message.unity_input.rl_input.side_channel)


def outcome(function, *args):
    """The result of a call, or the type and message of what it raised (object addresses aside:
    Pillow names the file object it could not read)."""
    try:
        return "returned", function(*args)
    except Exception as error:  # noqa: BLE001 - the errors themselves are compared
        return "raised", (type(error), re.sub(r"0x[0-9a-f]+", "0x...", str(error)))


def assert_same_array(actual, expected, where):
    assert type(actual) is type(expected), f"{where}: {type(actual)} != {type(expected)}"
    if isinstance(expected, np.ndarray):
        assert (actual.dtype, actual.shape) == (expected.dtype, expected.shape), where
        assert actual.tobytes() == expected.tobytes(), f"{where}: {actual} != {expected}"
    elif isinstance(expected, list):
        assert len(actual) == len(expected), where
        for i, (a, e) in enumerate(zip(actual, expected)):
            assert_same_array(a, e, f"{where}[{i}]")
    else:
        assert actual == expected, f"{where}: {actual} != {expected}"


def assert_same_steps(actual, expected, name):
    decision, terminal = actual
    expected_decision, expected_terminal = expected
    for field in ("obs", "reward", "agent_id", "action_mask", "group_id", "group_reward"):
        assert_same_array(getattr(decision, field), getattr(expected_decision, field), f"{name} decision.{field}")
    for field in ("obs", "reward", "interrupted", "agent_id", "group_id", "group_reward"):
        assert_same_array(getattr(terminal, field), getattr(expected_terminal, field), f"{name} terminal.{field}")


def assert_decodes_as_mlagents(data: bytes, specs) -> bulk.DecodedOutput | None:
    """bulk.decode_output(data, specs) gives what mlagents-envs gives, or raises what it raises."""
    expected = outcome(mlagents_decode, data, specs)
    actual = outcome(bulk.decode_output, data, specs)
    if expected[0] == "raised":
        assert actual == expected
        return None
    assert actual[0] == "returned", actual
    status, expected_specs, expected_states, side_channel = expected[1]
    decoded = actual[1]
    assert decoded.status == status
    if status != 200:
        return decoded
    assert list({**specs, **decoded.new_specs}.items()) == list(expected_specs.items())
    assert list(decoded.states) == list(expected_states)
    for name, steps in expected_states.items():
        assert_same_steps(decoded.states[name], steps, name)
    assert decoded.side_channel == side_channel
    return decoded


# ---------------------------------------------------------------- the stored fixtures

def fixture(name: str) -> bytes:
    with open(os.path.join(FIXTURES, f"{name}.bin"), "rb") as f:
        return f.read()


def fixture_specs():
    """The fixture behaviors' specs, as mlagents-envs reads them from init + first step."""
    message = UnityMessageProto.FromString(fixture("step_output"))
    message.unity_output.rl_initialization_output.CopyFrom(
        UnityMessageProto.FromString(fixture("init")).unity_output.rl_initialization_output)
    return mlagents_decode(message.SerializeToString(), {})[1], message


def test_fixture_replies_decode_as_mlagents():
    specs, announced = fixture_specs()
    assert set(specs) == {"Ball3D?team=0", "Purple?team=1"}
    decoded = assert_decodes_as_mlagents(fixture("step_output"), specs)
    assert decoded.fallbacks == {}
    purple_decision, purple_terminal = decoded.states["Purple?team=1"]
    assert [m.shape for m in purple_decision.action_mask] == [(1, 3), (1, 2)]
    assert len(purple_terminal) == 1 and purple_decision.group_id == [0]
    # the announcing message (specs from the first agent) and the initialization alone (no agents)
    assert list(assert_decodes_as_mlagents(announced.SerializeToString(), {}).new_specs) == list(specs)
    assert assert_decodes_as_mlagents(fixture("init"), {}).new_specs == {}
    # Announced without agents: mlagents-envs' lookup adds an empty agent list, read by
    # steps_from_proto (group ids a list); a behavior absent from a reply gets DecisionSteps.empty.
    assert assert_decodes_as_mlagents(fixture("init"), specs).states["Ball3D?team=0"][0].group_id == []
    empty = UnityMessageProto()
    empty.header.status = 200
    assert assert_decodes_as_mlagents(empty.SerializeToString(), specs).states["Ball3D?team=0"][0].group_id.dtype \
        == np.int32


def test_fixture_step_input_actions_encode_as_mlagents():
    rl_input = UnityMessageProto.FromString(fixture("step_input")).unity_input.rl_input
    actions, counts = {}, {}
    for name, agents in rl_input.agent_actions.items():
        counts[name] = len(agents.value)
        continuous = [list(a.continuous_actions) for a in agents.value]
        discrete = [list(a.discrete_actions) for a in agents.value]
        actions[name] = ActionTuple(continuous=np.array(continuous, np.float32).reshape(counts[name], -1),
                                    discrete=np.array(discrete, np.int32).reshape(counts[name], -1))
    expected, _, side_channel = mlagents_encode(actions, counts, [("agents", 12.0)])
    assert bulk.encode_step(actions, counts, side_channel) == expected


# ---------------------------------------------------------------- property-generated replies

NAMES = st.text(alphabet="ab?=é", max_size=3)  # short, so that one name is often a prefix of another
VALUES = st.floats(-1e4, 1e4, width=32)
SPECIAL = [math.nan, math.inf, -math.inf, 3e38, -3e38, -0.0, 1e-45]
SHAPES = st.one_of(st.tuples(st.integers(0, 4)), st.tuples(st.integers(1, 4)),
                   st.tuples(st.integers(1, 3), st.integers(1, 2)),
                   st.sampled_from([(3,), (2, 2, 1), (3, 2, 3)]))  # rank 3: visual, decoded by pixels.py


@st.composite
def behavior_specs(draw):
    shapes = draw(st.lists(SHAPES, max_size=3))
    observations = [ObservationSpec(shape, (DimensionProperty.UNSPECIFIED,) * len(shape), ObservationType.DEFAULT,
                                    f"sensor{i}") for i, shape in enumerate(shapes)]
    return BehaviorSpec(observations, ActionSpec(draw(st.integers(0, 2)),
                                                 tuple(draw(st.lists(st.integers(1, 3), max_size=3)))))


def add_observations(draw, info, spec, change):
    """The spec's observations; or one fewer, one more, one of another size or shape field."""
    shapes = [tuple(o.shape) for o in spec.observation_specs]
    if change == "fewer" and shapes:
        shapes = shapes[:-1]
    elif change == "more":
        shapes = shapes + [(2,)]
    for i, shape in enumerate(shapes):
        observation = info.observations.add()
        count = int(np.prod(shape)) + (1 if change == "size" and i == len(shapes) - 1 else 0)
        observation.shape.extend((count,) if change == "shape field" else shape)
        if len(shape) == 3 and draw(st.booleans()):  # a camera's PNG (of another height for "size")
            height = shape[0] + (1 if change == "size" and i == len(shapes) - 1 else 0)
            pixels = np.array(draw(st.lists(st.integers(0, 255), min_size=height * shape[1] * 3,
                                            max_size=height * shape[1] * 3)), np.uint8)
            observation.compression_type = PNG
            observation.compressed_data = pillow_png(pixels.reshape(height, shape[1], 3))
        else:
            observation.float_data.data.extend(draw(st.lists(VALUES, min_size=count, max_size=count)))
        observation.dimension_properties.extend([1] * len(shape))
        observation.name = f"sensor{i}"


def add_agent(draw, infos, spec, agent_id, done, change="none"):
    info = infos.add()
    info.id, info.done = agent_id, done
    info.max_step_reached = done and draw(st.booleans())
    info.reward, info.group_reward = draw(VALUES), draw(st.sampled_from([0.0, 0.0, 1.0, -0.5]))
    info.group_id = draw(st.integers(0, 3))
    mask_size = sum(spec.action_spec.discrete_branches)
    length = draw(st.sampled_from([mask_size, mask_size, 0, mask_size + 1, max(mask_size - 1, 0)]))
    info.action_mask.extend(draw(st.lists(st.booleans(), min_size=length, max_size=length)))
    add_observations(draw, info, spec, change)


@st.composite
def replies(draw):
    """(bytes of a game reply, the specs known before it)."""
    message = UnityMessageProto()
    message.header.status = draw(st.sampled_from([200] * 9 + [500]))
    output = message.unity_output
    known = {}
    for name, spec in draw(st.dictionaries(NAMES, behavior_specs(), max_size=3)).items():
        role = draw(st.sampled_from(["known", "announced", "known and announced", "unknown"]))
        if "known" in role.split():
            known[name] = spec
        if "announced" in role:
            brain = output.rl_initialization_output.brain_parameters.add()
            brain.brain_name = name
            brain.action_spec.num_continuous_actions = spec.action_spec.continuous_size
            brain.action_spec.num_discrete_actions = spec.action_spec.discrete_size
            brain.action_spec.discrete_branch_sizes.extend(spec.action_spec.discrete_branches)
        agents = draw(st.sampled_from(["agents"] * 4 + ["empty list", "absent"]))
        if agents == "absent":
            continue
        infos = output.rl_output.agentInfos[name].value
        count = draw(st.integers(1, 6)) if agents == "agents" else 0
        change = draw(st.sampled_from(["none"] * 6 + ["fewer", "more", "size", "shape field"]))
        changed = draw(st.integers(0, max(count - 1, 0)))
        for agent_id in range(count):
            if draw(st.integers(0, 3)) == 0:  # its episode ended, and it asks for a decision again
                add_agent(draw, infos, spec, agent_id, True)
            add_agent(draw, infos, spec, agent_id, draw(st.integers(0, 5)) == 0,
                      change if agent_id == changed else "none")
    poison(draw, output)
    if draw(st.booleans()):
        payload = draw(st.binary(max_size=8))
        output.rl_output.side_channel = RAW_CHANNEL.bytes_le + struct.pack("<i", len(payload)) + payload
    return message.SerializeToString(), known


def poison(draw, output):
    """Sometimes one special value (NaN, infinity, a huge value...) in one agent's data."""
    infos = [info for agents in output.rl_output.agentInfos.values() for info in agents.value]
    if not infos or draw(st.integers(0, 2)) > 0:
        return
    info = draw(st.sampled_from(infos))
    value = draw(st.sampled_from(SPECIAL))
    target = draw(st.sampled_from(["reward", "group_reward", "observation"]))
    data = [o.float_data.data for o in info.observations if len(o.float_data.data)]
    if target == "observation" and data:
        chosen = draw(st.sampled_from(data))
        chosen[draw(st.integers(0, len(chosen) - 1))] = value
        if value == 3e38 and len(chosen) > 1:  # finite values whose float32 mean overflows
            chosen[0] = chosen[-1] = value
    elif target != "observation":
        setattr(info, target, value)


decode_settings = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@decode_settings
@given(replies())
def test_generated_replies_decode_as_mlagents(reply):
    data, specs = reply
    decoded = assert_decodes_as_mlagents(data, specs)
    if decoded is not None and decoded.status == 200:
        for name, reason in decoded.fallbacks.items():
            assert reason, name


# ---------------------------------------------------------------- the fallback, explicitly

VECTOR_SPEC = BehaviorSpec([ObservationSpec((3,), (DimensionProperty.UNSPECIFIED,), ObservationType.DEFAULT, "v")],
                           ActionSpec(0, (2, 2)))
VISUAL_SPEC = BehaviorSpec(VECTOR_SPEC.observation_specs + [
    ObservationSpec((2, 2, 1), (DimensionProperty.UNSPECIFIED,) * 3, ObservationType.DEFAULT, "camera")],
    ActionSpec(1, ()))


def agent_bytes(values=(1.0, 2.0, 3.0), visual=False, **fields) -> bytes:
    info = AgentInfoProto(id=fields.pop("id", 7), reward=fields.pop("reward", 0.5), **fields)
    observation = info.observations.add()
    observation.shape.append(len(values))
    observation.float_data.data.extend(values)
    if visual:
        camera = info.observations.add()
        camera.shape.extend([2, 2, 1])
        camera.float_data.data.extend([0.25, 0.5, 0.75, 1.0])
    return info.SerializeToString()


def reply_bytes(*agents: bytes, name=b"B", extra_rl_output=b"", extra_message=b"") -> bytes:
    """A reply whose one agent list holds the given AgentInfoProto bytes (fields appended raw)."""
    list_bytes = b"".join(b"\x0a" + varint(len(a)) + a for a in agents)
    entry = b"\x0a" + varint(len(name)) + name + b"\x12" + varint(len(list_bytes)) + list_bytes
    rl_output = b"\x12" + varint(len(entry)) + entry + extra_rl_output
    output = b"\x0a" + varint(len(rl_output)) + rl_output
    return b"\x0a\x03\x08\xc8\x01" + b"\x12" + varint(len(output)) + output + extra_message


def varint(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7f | 0x80)
        value >>= 7
    return bytes(out + bytearray([value]))


def test_visual_observations_are_read_by_the_bulk_reader():
    data = reply_bytes(agent_bytes(visual=True), agent_bytes(visual=True, id=8, done=True))
    decoded = assert_decodes_as_mlagents(data, {"B": VISUAL_SPEC})
    assert decoded.fallbacks == {} and bulk.bulk_refusal(VISUAL_SPEC) is None
    assert decoded.states["B"][0].obs[1].shape == (1, 2, 2, 1)


def test_visual_decode_errors_come_in_mlagents_order():
    """A NaN in the vector observation (checked first, observation 0) wins over a broken PNG
    (observation 1); without it, the PNG's error; a NaN in a reward comes after both."""
    camera = AgentInfoProto(id=2)
    camera.CopyFrom(AgentInfoProto.FromString(agent_bytes(id=2)))
    broken = camera.observations.add()
    broken.shape.extend([2, 2, 1])
    broken.compression_type = PNG
    broken.compressed_data = b"\x89PNG not really"
    nan_vector = AgentInfoProto.FromString(agent_bytes(values=(math.nan, 1.0, 2.0), visual=True, id=3))
    nan_reward = AgentInfoProto.FromString(agent_bytes(visual=True, id=4, reward=math.nan))
    for agents, error in [((nan_vector, camera), RuntimeError), ((camera,), "UnidentifiedImageError"),
                          ((nan_reward, camera), "UnidentifiedImageError"), ((nan_reward,), RuntimeError)]:
        data = reply_bytes(*(a.SerializeToString() for a in agents))
        expected = outcome(mlagents_decode, data, {"B": VISUAL_SPEC})
        assert expected[0] == "raised" and (expected[1][0] is error or expected[1][0].__name__ == error)
        assert_decodes_as_mlagents(data, {"B": VISUAL_SPEC})


@pytest.mark.parametrize("agent, reason", [
    (agent_bytes(values=(1.0, 2.0)), "observation 0 of agent 7 has 2 values, the behavior spec 3"),
    (AgentInfoProto(id=3).SerializeToString(), "agent 3 has 0 observations, the behavior spec 1"),
    (agent_bytes() + b"\xa0\x01\x05", "unknown field 20 in AgentInfoProto"),
    (agent_bytes() + b"\x50\x09", "field 10 of AgentInfoProto given twice"),
    (agent_bytes() + b"\x58\x01", "field 11 of AgentInfoProto has wire type 0, not 2"),  # an unpacked mask
    (agent_bytes() + b"\x3d\x00\x00\x80\x3f", "field 7 of AgentInfoProto given twice"),
])
def test_agents_outside_the_bulk_form_are_read_by_mlagents(agent, reason):
    data = reply_bytes(agent_bytes(id=1), agent)
    decoded = assert_decodes_as_mlagents(data, {"B": VECTOR_SPEC})
    if decoded is not None:
        assert decoded.fallbacks == {"B": reason}
    else:  # mlagents-envs raised for these agents, and so did the bulk path
        assert bulk._wire.count(data, *bulk._wire.index(data)[3][0][1:], (3,)) == reason


def test_packed_fields_in_several_chunks_are_read_in_bulk():
    floats = struct.pack("<3f", 1.5, -2.0, 0.25)
    float_data = b"\x0a\x04" + floats[:4] + b"\x0a\x08" + floats[4:]  # FloatData.data in two packed chunks
    observation = b"\x0a\x01\x03" + b"\x22" + varint(len(float_data)) + float_data
    mask = b"\x5a\x01\x01" + b"\x5a\x03\x00\x00\x01"  # AgentInfoProto.action_mask in two chunks
    agent = AgentInfoProto(id=5).SerializeToString() + mask + b"\x6a" + varint(len(observation)) + observation
    decoded = assert_decodes_as_mlagents(reply_bytes(agent), {"B": VECTOR_SPEC})
    assert decoded.fallbacks == {}
    assert decoded.states["B"][0].obs[0].tolist() == [[1.5, -2.0, 0.25]]
    assert [m.tolist() for m in decoded.states["B"][0].action_mask] == [[[True, False]], [[False, True]]]


def test_any_nonzero_varint_is_true_as_protobuf_reads_bools():
    observation = AgentInfoProto.FromString(agent_bytes()).observations[0].SerializeToString()
    fields = b"\x6a" + varint(len(observation)) + observation
    ended = AgentInfoProto(id=1).SerializeToString() + b"\x40\x02\x48\x80\x01" + fields  # done 2, max_step 128
    masked = AgentInfoProto(id=2).SerializeToString() + b"\x5a\x04\x02\x00\x00\x03" + fields  # mask 2, 0, 0, 3
    decoded = assert_decodes_as_mlagents(reply_bytes(ended, masked), {"B": VECTOR_SPEC})
    decision, terminal = decoded.states["B"]
    assert terminal.agent_id.tolist() == [1] and terminal.interrupted.tolist() == [True]
    assert [m.tolist() for m in decision.action_mask] == [[[True, False]], [[False, True]]]


def test_more_observations_than_the_bulk_reader_takes_are_read_by_mlagents():
    count = bulk._wire.MAX_OBSERVATIONS + 1
    spec = BehaviorSpec([ObservationSpec((1,), (DimensionProperty.UNSPECIFIED,), ObservationType.DEFAULT, f"s{i}")
                         for i in range(count)], ActionSpec(1, ()))
    info = AgentInfoProto(id=1)
    for i in range(count):
        info.observations.add(shape=[1]).float_data.data.append(float(i))
    decoded = assert_decodes_as_mlagents(reply_bytes(info.SerializeToString()), {"B": spec})
    assert decoded.fallbacks == {"B": f"{count} observations (the bulk reader takes {count - 1})"}


@pytest.mark.parametrize("data, reason", [
    (reply_bytes(agent_bytes(), extra_message=b"\x1a\x00"), "message: unknown field 3 in UnityMessageProto"),
    (reply_bytes(agent_bytes(), extra_rl_output=2 * (b"\x1a\x15" + RAW_CHANNEL.bytes_le + b"\x01\x00\x00\x00x")),
     "message: field 3 of UnityRLOutputProto given twice"),
    (reply_bytes(agent_bytes()) + reply_bytes(agent_bytes())[5:], "message: field 2 of UnityMessageProto given twice"),
])
def test_messages_outside_the_bulk_form_are_read_by_mlagents(data, reason):
    decoded = assert_decodes_as_mlagents(data, {"B": VECTOR_SPEC})
    assert decoded.fallbacks == {"B": reason}


def observation_named(name: bytes) -> bytes:
    """An AgentInfoProto field 13 (an observation of three floats) whose name is these bytes."""
    observation = AgentInfoProto.FromString(agent_bytes()).observations[0].SerializeToString()
    observation += b"\x42" + varint(len(name)) + name
    return b"\x6a" + varint(len(observation)) + observation


@pytest.mark.parametrize("data", [
    reply_bytes(agent_bytes(), name=b"\xff\xfeB"),                         # a behavior name that is not UTF-8
    reply_bytes(AgentInfoProto(id=1).SerializeToString() + observation_named(b"\xc3(")),  # an observation name
    reply_bytes(agent_bytes())[:-3],                                      # truncated
])
def test_malformed_bytes_raise_as_protobuf_does(data):
    with pytest.raises(DecodeError):
        UnityMessageProto.FromString(data)
    with pytest.raises(DecodeError):
        bulk.decode_output(data, {"B": VECTOR_SPEC})


def test_masks_follow_mlagents_rules():
    rows = [agent_bytes(id=1, action_mask=[True, False, False, True]),  # right length: True = forbidden
            agent_bytes(id=2, action_mask=[True, True]),                 # wrong length: ignored
            agent_bytes(id=3),                                           # none
            agent_bytes(id=4, action_mask=[True, True, True, True], done=True)]
    decoded = assert_decodes_as_mlagents(reply_bytes(*rows), {"B": VECTOR_SPEC})
    left, right = decoded.states["B"][0].action_mask
    assert left.tolist() == [[True, False], [False, False], [False, False]]
    assert right.tolist() == [[False, True], [False, False], [False, False]]


@pytest.mark.parametrize("value, message", [
    (math.nan, "The observations provided had NaN values."),
    (math.inf, "The observations provided had Infinite values."),
    (3e38, "The observations provided had Infinite values."),  # finite, but their float32 mean overflows
])
def test_non_finite_observations_raise_as_mlagents(value, message):
    data = reply_bytes(agent_bytes(values=(value, value, 1.0)))
    with pytest.raises(RuntimeError, match=message):
        bulk.decode_output(data, {"B": VECTOR_SPEC})
    assert_decodes_as_mlagents(data, {"B": VECTOR_SPEC})


# ---------------------------------------------------------------- encode

@st.composite
def step_actions(draw):
    """(actions per behavior, decision agents per behavior, side-channel parameters)."""
    actions, counts = {}, {}
    for name in draw(st.lists(NAMES, unique=True, max_size=4)):
        n, extra = draw(st.integers(0, 4)), draw(st.integers(0, 2))
        continuous_size, discrete_size = draw(st.integers(0, 3)), draw(st.integers(0, 3))
        bits = draw(st.lists(st.integers(0, 2**32 - 1), min_size=(n + extra) * continuous_size,
                             max_size=(n + extra) * continuous_size))
        continuous = np.array(bits, np.uint32).view(np.float32).reshape(n + extra, continuous_size)
        discrete = np.array(draw(st.lists(st.integers(-2**31, 2**31 - 1), min_size=(n + extra) * discrete_size,
                                          max_size=(n + extra) * discrete_size)), np.int32)
        kind = draw(st.sampled_from(["both", "continuous", "discrete", "none"]))
        actions[name] = ActionTuple(continuous=continuous if kind in ("both", "continuous") else None,
                                    discrete=discrete.reshape(n + extra, discrete_size) if kind in ("both", "discrete")
                                    else None)
        counts[name] = n
    parameters = draw(st.lists(st.tuples(st.text("abc", max_size=4), st.floats(width=32)), max_size=2))
    return actions, counts, parameters


@settings(max_examples=300, deadline=None)
@given(step_actions())
def test_generated_actions_encode_byte_identical(step):
    actions, counts, parameters = step
    deterministic, default, side_channel = mlagents_encode(actions, counts, parameters)
    encoded = bulk.encode_step(actions, counts, side_channel)
    assert encoded == deterministic
    if sum(1 for name, n in counts.items() if n > 0) <= 1:
        assert encoded == default  # one behavior: protobuf's default serialization is the same bytes


def test_signaling_nan_actions_are_sent_quiet_as_protobuf_sends_them():
    continuous = np.array([[0x7f800001, 0xff800002, 0x7fc00003]], np.uint32).view(np.float32)
    actions = {"B": ActionTuple(continuous=continuous)}
    expected, _, _ = mlagents_encode(actions, {"B": 1})
    assert bulk.encode_step(actions, {"B": 1}) == expected
    assert b"\x01\x00\xc0\x7f" in expected


@pytest.mark.parametrize("action, counts, message", [
    (ActionTuple(continuous=np.zeros((1, 2), np.float32)), {"B": 2}, "continuous actions of behavior 'B' must be"),
    (ActionTuple(continuous=np.zeros(2, np.float32)), {"B": 1}, "must be a 2-D float32 array"),
    (ActionTuple(continuous=np.zeros((2, 2), np.float32)), {}, "actions for behavior 'B', which has no agent count"),
])
def test_bad_actions_are_one_line_errors(action, counts, message):
    with pytest.raises(ValueError, match=message) as error:
        bulk.encode_step({"B": action}, counts)
    assert "\n" not in str(error.value)


# ---------------------------------------------------------------- real gRPC bytes of the simulator builds

class RecordingCommunicator(Communicator):
    """mlagents-envs' Communicator on a gRPC server that takes and gives the raw message bytes, and
    records them: `received` from the game, `sent` to it."""

    SERVICE = "communicator_objects.UnityToExternalProto"

    def __init__(self, worker_id=0, base_port=5005, timeout_wait=30):
        super().__init__(worker_id, base_port)
        self.timeout_wait = timeout_wait
        self.received, self.sent = [], []
        self.requests, self.replies = queue.Queue(), queue.Queue()
        handler = grpc.unary_unary_rpc_method_handler(self._exchange)
        self.server = grpc.server(ThreadPoolExecutor(max_workers=2))
        self.server.add_generic_rpc_handlers([grpc.method_handlers_generic_handler(
            self.SERVICE, {"Exchange": handler, "Initialize": handler})])
        self.server.add_insecure_port(f"127.0.0.1:{base_port + worker_id}")
        self.server.start()

    def _exchange(self, request: bytes, context) -> bytes:
        self.requests.put(request)
        return self.replies.get()

    def _receive(self, poll_callback) -> UnityMessageProto:
        for _ in range(self.timeout_wait * 10):
            try:
                data = self.requests.get(timeout=0.1)
            except queue.Empty:
                if poll_callback is not None:
                    poll_callback()
                continue
            self.received.append(data)
            return UnityMessageProto.FromString(data)
        raise UnityTimeOutException("the simulator sent nothing")

    def _send(self, inputs, status=200) -> None:
        message = UnityMessageProto()
        message.header.status = status
        if inputs is not None:
            message.unity_input.CopyFrom(inputs)
        self.sent.append(message.SerializeToString())
        self.replies.put(self.sent[-1])

    def initialize(self, inputs, poll_callback=None):
        first = self._receive(poll_callback).unity_output
        self._send(inputs)
        self._receive(poll_callback)
        return first

    def exchange(self, inputs, poll_callback=None):
        self._send(inputs)
        output = self._receive(poll_callback)
        return output.unity_output if output.header.status == 200 else None

    def close(self):
        self._send(None, status=400)
        self.server.stop(1.0)


class RecordingEnvironment(UnityEnvironment):
    @staticmethod
    def _get_communicator(worker_id, base_port, timeout_wait):
        return RecordingCommunicator(worker_id, base_port, timeout_wait)


def play_and_check(build, args, steps):
    """Steps a stock UnityEnvironment on a simulator build with random actions; every reply the
    game sent decodes to the environment's own state, every step input encodes byte for byte.
    Returns the fallbacks of the last reply."""
    rng = np.random.default_rng(0)
    env = RecordingEnvironment(os.path.join(BUILDS, build), worker_id=free_worker_id(), seed=1, no_graphics=True,
                               additional_args=list(args), timeout_wait=30)
    process, communicator = env._process, env._communicator
    try:
        specs = dict(bulk.decode_output(communicator.received[0], {}).new_specs)  # the initialization
        assert specs == dict(env.behavior_specs)
        env.reset()
        decoded = assert_decodes_as_mlagents(communicator.received[-1], specs)
        specs.update(decoded.new_specs)
        seen = {"terminal": 0, "interrupted": 0}
        for _ in range(steps):
            actions, counts = {}, {}
            for name, spec in env.behavior_specs.items():
                n = counts[name] = len(env.get_steps(name)[0])
                actions[name] = ActionTuple(
                    continuous=rng.uniform(-1, 1, (n, spec.action_spec.continuous_size)).astype(np.float32),
                    discrete=np.array([rng.integers(0, b, n) for b in spec.action_spec.discrete_branches],
                                      np.int32).reshape(-1, n).T.copy())
                env.set_actions(name, actions[name])
            env.step()
            sent = UnityMessageProto.FromString(communicator.sent[-1])
            encoded = bulk.encode_step(actions, counts, sent.unity_input.rl_input.side_channel)
            assert encoded == sent.SerializeToString(deterministic=True)
            assert UnityMessageProto.FromString(encoded) == sent
            if len(specs) == 1:
                assert encoded == communicator.sent[-1]
            decoded = bulk.decode_output(communicator.received[-1], specs)
            specs.update(decoded.new_specs)
            assert specs == dict(env.behavior_specs)
            for name in specs:
                assert_same_steps(decoded.states[name], env.get_steps(name), name)
                seen["terminal"] += len(decoded.states[name][1])
                seen["interrupted"] += int(decoded.states[name][1].interrupted.sum())
        return decoded.fallbacks, seen
    finally:
        env.close()
        if process.poll() is None:
            process.kill()
        process.wait()
        assert not wait_gone([process.pid], 2.0)


def test_ball_simulator_bytes():
    fallbacks, seen = play_and_check("ball", ["--agents", "16", "--max-steps", "6"], 14)
    assert fallbacks == {} and seen["terminal"] > 0 and seen["interrupted"] > 0


def test_teams_simulator_bytes_two_behaviors_masks_and_groups():
    fallbacks, seen = play_and_check("teams", ["--areas", "3", "--max-steps", "8"], 20)
    assert fallbacks == {} and seen["terminal"] > 0


@pytest.mark.parametrize("build, args", [
    ("ball", ["--agents", "4", "--visual", "1"]),
    ("camera", ["--agents", "5", "--max-steps", "4"]),
    ("camera", ["--agents", "3", "--gray", "1", "--size", "21", "--max-steps", "3"]),
    ("camera", ["--agents", "3", "--grid", "5", "--size", "7", "--max-steps", "3"]),
    ("camera", ["--agents", "3", "--compression", "0", "--size", "5", "--max-steps", "3"]),
], ids=["ball, uncompressed", "camera", "camera, grayscale", "camera, grid sensor", "camera, uncompressed"])
def test_visual_simulator_bytes_are_read_by_the_bulk_reader(build, args):
    fallbacks, seen = play_and_check(build, args, 8)
    assert fallbacks == {} and (build == "ball" or seen["interrupted"] > 0)


# ---------------------------------------------------------------- the bulk path in the bridge's environment

LOCKSTEP = {
    # name: (build, arguments, steps; a reset halfway)
    "ball": ("ball", ["--agents", "6", "--max-steps", "7", "--stats", "1"], 16),
    "teams: two behaviors, masks, groups": ("teams", ["--areas", "3", "--max-steps", "8", "--stats", "1"], 20),
    "probe: a behavior that arrives late": ("probe", ["--behaviors", "2", "--agents", "3", "--spawn-after", "0,5",
                                                      "--episode-decisions", "3,4", "--lifetime", "0,5",
                                                      "--stats", "1"], 20),
    "visual observations": ("camera", ["--agents", "3", "--max-steps", "3", "--stats", "1"], 10),
}


def random_actions(env, rng) -> dict:
    """Random actions for every deciding agent of every behavior."""
    actions = {}
    for name, spec in env.behavior_specs.items():
        n = len(env.get_steps(name)[0])
        branches = spec.action_spec.discrete_branches
        actions[name] = ActionTuple(
            continuous=rng.uniform(-1, 1, (n, spec.action_spec.continuous_size)).astype(np.float32),
            discrete=np.stack([rng.integers(0, b, n) for b in branches], axis=1).astype(np.int32) if branches
            else np.zeros((n, 0), np.int32))
    return actions


def logged(caplog, call) -> list[tuple[str, str]]:
    """(logger, message) of the records logged during call()."""
    caplog.clear()
    call()
    return [(r.name, r.getMessage()) for r in caplog.records]


def timers_of(call) -> set[str]:
    """The names of mlagents-envs' timers that ran during call()."""
    timers.reset_timers()
    call()
    names, stack = set(), [timers.get_timer_tree()]
    while stack:
        for name, child in stack.pop().get("children", {}).items():
            names.add(name)
            stack.append(child)
    return names


@pytest.mark.parametrize("case", LOCKSTEP)
def test_the_bridge_on_the_bulk_path_equals_mlagents_step_by_step(case, tmp_path, caplog):
    """Two bridges on the same build and seed, one per codec, take the same actions: after every
    reset and step, the same specs, steps, 'Connected new brain' lines and side-channel data."""
    build, args, steps = LOCKSTEP[case]
    rng = np.random.default_rng(7)
    bridges = [SimulatorBridge(os.path.join(BUILDS, build), args=args, seed=3, worker_id=free_worker_id(),
                               log_folder=str(tmp_path / str(bulk)), bulk=bulk) for bulk in (True, False)]
    bulk_env, mlagents_env = [b.env for b in bridges]
    try:
        with caplog.at_level("DEBUG"):
            brains, fallbacks = [], []
            for step in range(steps):
                if step in (0, steps // 2):
                    calls = [bulk_env.reset, mlagents_env.reset]
                else:
                    actions = random_actions(mlagents_env, rng)
                    for env in (bulk_env, mlagents_env):
                        for name, action in actions.items():
                            env.set_actions(name, action)
                    calls = [bulk_env.step, mlagents_env.step]
                records = [logged(caplog, call) for call in calls]
                lines = [[m for logger, m in r if logger == "mlagents_envs.environment"] for r in records]
                assert lines[0] == lines[1] and all(m.startswith("Connected new brain") for m in lines[0]), step
                brains += [(step, line) for line in lines[0]]
                fallbacks += [m for logger, m in records[0] if logger == "neatpar"]
                assert list(bulk_env.behavior_specs.items()) == list(mlagents_env.behavior_specs.items()), step
                for name in mlagents_env.behavior_specs:
                    assert_same_steps(bulk_env.get_steps(name), mlagents_env.get_steps(name), f"step {step} {name}")
        stats = [b.stats.get_and_reset_stats() for b in bridges]
        assert stats[0] == stats[1] and stats[0]  # episode statistics arrived on the side channel
        # Each codec is the one that ran: mlagents-envs' conversion has timers of its own.
        assert "_generate_step_input" not in " ".join(timers_of(bulk_env.step))
        assert "UnityEnvironment._generate_step_input" in timers_of(mlagents_env.step)
    finally:
        for bridge in bridges:
            bridge.close()
    if "late" in case:  # Probe announced by the first reset's reply, Rival when its agents arrive
        assert brains == [(0, "Connected new brain: Probe?team=0"), (5, "Connected new brain: Rival?team=1")]
    assert fallbacks == []


EVOLUTIONS = {
    # name: (build, arguments, behaviors, inputs, outputs, max_steps)
    "ball": ("ball", "--agents 4 --max-steps 40", "Ball3D?team=0: population", 8, 2, 40),
    "teams": ("teams", "--areas 3 --max-steps 20", "Blue?team=0: population, Purple?team=1: champion", 8, 7, 20),
    "probe, late behavior": ("probe", "--behaviors 2 --spawn-after 0,5 --agents 3 --episode-decisions 4,0",
                             "Probe?team=0: population, Rival?team=1: champion", 4, 1, 20),
}


def evolve(tmp_path, case: str, generations: int = 3):
    """A seeded neat-python run through UnityEvaluator: each generation's fitnesses (by genome key)
    and stats (less the time), and the codec the bridge used."""
    build, args, behaviors, inputs, outputs, max_steps = EVOLUTIONS[case]
    path = write_config(tmp_path, f"{build}.cfg", neatpar={
        "env": os.path.join(BUILDS, build), "env_args": args, "behaviors": behaviors, "max_steps": max_steps, "seed": 4,
        "worker_id": free_worker_id()}, pop_size=8, num_inputs=inputs, num_outputs=outputs,
        activation_options="tanh", activation_default="tanh")
    config, run = settings_module.load(path)
    history = []
    with UnityEvaluator.from_settings(run) as evaluator:
        def fitness(genomes, config):
            evaluator.evaluate(genomes, config)
            stats = dataclasses.asdict(evaluator.last_stats)
            stats.pop("seconds")
            history.append(([(key, genome.fitness) for key, genome in genomes], stats))

        neat.Population(config, seed=5).run(fitness, generations)
        codec = evaluator.environment.bridge.bulk_in_use
    return history, codec


@pytest.mark.parametrize("case", EVOLUTIONS)
def test_a_seeded_run_is_identical_with_and_without_the_bulk_path(case, tmp_path, monkeypatch):
    runs = {}
    for switch in ("1", "0"):
        monkeypatch.setenv("NEATPAR_BULKWIRE", switch)
        (tmp_path / switch).mkdir()
        runs[switch] = evolve(tmp_path / switch, case)
    (bulk_history, bulk_codec), (mlagents_history, mlagents_codec) = runs["1"], runs["0"]
    assert (bulk_codec, mlagents_codec) == (True, False)
    assert bulk_history == mlagents_history
    fitnesses = [f for generation, _ in bulk_history for _, f in generation]
    assert len(bulk_history) == 3 and len(set(fitnesses)) > 1
