"""Tests of neatpar_sim/side_channels.py, the side channels as the simulator builds speak them: the records
mlagents-envs' own channels write are split and read back as they were set, and the Stats records
the builds write are read by mlagents-envs' own StatsSideChannel as Unity's StatsRecorder sends them."""
import uuid

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mlagents_envs.side_channel.engine_configuration_channel import EngineConfigurationChannel
from mlagents_envs.side_channel.environment_parameters_channel import EnvironmentParametersChannel
from mlagents_envs.side_channel.raw_bytes_channel import RawBytesChannel
from mlagents_envs.side_channel.side_channel_manager import SideChannelManager
from mlagents_envs.side_channel.stats_side_channel import StatsAggregationMethod, StatsSideChannel

from neatpar_sim import side_channels

keys = st.text(st.characters(max_codepoint=127), max_size=40)  # mlagents-envs writes strings as ASCII
float32s = st.floats(width=32, allow_nan=False)


def sent(*channels) -> bytes:
    """What UnityEnvironment sends for the messages queued on `channels`."""
    return bytes(SideChannelManager(list(channels)).generate_side_channel_messages())


def test_every_engine_setting_is_read_as_the_engine_configuration_channel_sets_it():
    engine = EngineConfigurationChannel()
    engine.set_configuration_parameters(width=80, height=60, quality_level=2, time_scale=20.0, target_frame_rate=30,
                                        capture_frame_rate=60)
    records = list(side_channels.split(sent(engine)))
    assert {channel for channel, _ in records} == {side_channels.ENGINE_CONFIGURATION}
    read = {}
    for _, payload in records:
        read.update(side_channels.read_engine_configuration(payload))
    assert read == {"screen_resolution": (80, 60), "quality_level": 2, "time_scale": 20.0, "target_frame_rate": 30,
                    "capture_frame_rate": 60}


def test_an_unknown_engine_setting_is_an_error_naming_its_type():
    with pytest.raises(ValueError, match="unknown engine configuration type 7"):
        side_channels.read_engine_configuration((7).to_bytes(4, "little") + bytes(4))


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(keys, float32s | st.none()), max_size=5), st.binary(max_size=64))
def test_environment_parameters_and_other_channels_are_split_in_order_and_read_back(parameters, raw):
    """Float parameters read back as set (samplers as None), between them a channel the builds do
    not know, its bytes intact."""
    params = EnvironmentParametersChannel()
    custom = RawBytesChannel(uuid.UUID("0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"))
    for key, value in parameters:
        if value is None:
            params.set_uniform_sampler_parameters(key, 0.0, 1.0, 5)
        else:
            params.set_float_parameter(key, value)
    if raw:
        custom.send_raw_data(bytearray(raw))
    records = list(side_channels.split(sent(params, custom)))
    assert [payload for channel, payload in records if channel == custom.channel_id] == ([raw] if raw else [])
    read = [side_channels.read_environment_parameter(p) for c, p in records if c == side_channels.ENVIRONMENT_PARAMETERS]
    assert read == parameters
    assert len(records) == len(parameters) + bool(raw)


@given(st.lists(st.tuples(st.uuids(), st.binary(max_size=40)), max_size=6))
def test_records_split_into_the_channels_and_payloads_they_were_made_of(pairs):
    data = b"".join(side_channels.record(channel, payload) for channel, payload in pairs)
    assert list(side_channels.split(data)) == pairs


@pytest.mark.parametrize("data, message", [
    (bytes(19), "truncated side-channel record at byte 0"),
    (side_channels.record(side_channels.STATS, b"ab") + bytes(5), "truncated side-channel record at byte 22"),
    (uuid.uuid4().bytes_le + (9).to_bytes(4, "little") + b"short", "side-channel record of 9 bytes overruns the message"),
    (uuid.uuid4().bytes_le + (-1).to_bytes(4, "little", signed=True), "side-channel record of -1 bytes overruns"),
], ids=["zeros", "cut-payload", "short-payload", "negative-length"])   # the same names in every pytest-xdist process
def test_a_record_cut_short_or_overrunning_is_an_error_naming_where(data, message):
    with pytest.raises(ValueError, match=message):
        list(side_channels.split(data))


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(float32s, st.integers(1, 10**6)), max_size=6))
def test_episode_stats_reach_mlagents_stats_channel_with_their_aggregation_methods(episodes):
    stats = StatsSideChannel()
    SideChannelManager([stats]).process_side_channel_message(
        side_channels.episode_stats([r for r, _ in episodes], [n for _, n in episodes]))
    received = stats.get_and_reset_stats()
    if not episodes:
        assert dict(received) == {}
        return
    returns, lengths = [r for r, _ in episodes], [float(n) for _, n in episodes]
    assert dict(received) == {
        "Environment/Cumulative Reward": [(r, StatsAggregationMethod.AVERAGE) for r in returns],
        "Environment/Episode Length": [(n, StatsAggregationMethod.AVERAGE) for n in lengths],
        "Game/Episodes": [(1.0, StatsAggregationMethod.SUM)] * len(episodes),
        "Game/Last Return": [(r, StatsAggregationMethod.MOST_RECENT) for r in returns],
        "Game/Return": [(r, StatsAggregationMethod.HISTOGRAM) for r in returns]}


@given(keys, float32s, st.sampled_from(list(StatsAggregationMethod)))
def test_a_stat_is_read_by_mlagents_as_statsrecorder_add_sends_it(key, value, method):
    stats = StatsSideChannel()
    SideChannelManager([stats]).process_side_channel_message(side_channels.stat(key, value, method.value))
    assert dict(stats.get_and_reset_stats()) == {key: [(value, method)]}
    SideChannelManager([stats]).process_side_channel_message(side_channels.stat(key, np.float32(value)))
    assert dict(stats.get_and_reset_stats()) == {key: [(value, StatsAggregationMethod.AVERAGE)]}
