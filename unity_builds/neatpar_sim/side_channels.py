"""Side channels as the game side of ML-Agents speaks them: [16-byte UUID (bytes_le), int32
length, payload] records, payloads read and written with mlagents-envs' own message classes.

Besides ML-Agents' own channels, the builds speak neatpar's Frames channel (FRAMES), on which Python
asks for pictures of an agent to make a clip of it (neatpar/envs/unity/frames.py is Python's side).
Each payload starts with an int32 kind:
  - FRAMES_ANNOUNCE, game to Python, in the rl_output of the initialization message (which
    mlagents-envs' own UnityEnvironment does not read, so a client without the channel sees
    nothing): int32 width, int32 height, float32 frames per second of a clip. A game that does not
    announce cannot send frames.
  - FRAMES_REQUEST, Python to game, with a step: string behavior, int32 agent id. The game draws
    that agent as it is when the message arrives (the state of its latest decision, before the
    actions of the step execute) and sends the frame with its next output.
  - FRAMES_FRAME, game to Python: int32 agent id, int32 encoding (FRAMES_RAW: height x width x 3
    bytes, RGB, row by row; FRAMES_PNG: a PNG file), int32 height, int32 width, then the image.
  - FRAMES_NONE, game to Python: int32 agent id, string reason (no frame of that agent).
  - FRAMES_END, game to Python, unasked: an agent asked for whose episode ended before the next
    output (in the steps the request travelled with), drawn as that episode ended (the state its
    terminal step's observation shows, before the agent restarts), after the frame asked for; laid
    out as FRAMES_FRAME. A clip thus shows the episode to its end.
"""
from __future__ import annotations

import struct
import uuid
from typing import Iterator, NamedTuple

from mlagents_envs.side_channel.incoming_message import IncomingMessage
from mlagents_envs.side_channel.outgoing_message import OutgoingMessage
from mlagents_envs.side_channel.stats_side_channel import StatsAggregationMethod

ENGINE_CONFIGURATION = uuid.UUID("e951342c-4f7e-11ea-b238-784f4387d1f7")
ENVIRONMENT_PARAMETERS = uuid.UUID("534c891e-810f-11ea-a9d0-822485860400")
TRAINING_ANALYTICS = uuid.UUID("b664a4a9-d86f-5a5f-95cb-e8353a7e8356")
STATS = uuid.UUID("a1d8f7b7-cec8-50f9-b78b-d3e165a78520")
FRAMES = uuid.UUID("fcdebe15-7357-4fbf-bb2d-13a18b7da4da")   # neatpar's own
FRAMES_ANNOUNCE, FRAMES_REQUEST, FRAMES_FRAME, FRAMES_NONE, FRAMES_END = 0, 1, 2, 3, 4
FRAMES_RAW, FRAMES_PNG = 0, 1

# EngineConfigurationChannel.ConfigurationType
_ENGINE_FIELDS = {0: ("screen_resolution", "ii"), 1: ("quality_level", "i"), 2: ("time_scale", "f"),
                  3: ("target_frame_rate", "i"), 4: ("capture_frame_rate", "i")}
STATS_AVERAGE = StatsAggregationMethod.AVERAGE.value


class EpisodeStat(NamedTuple):
    """One StatsRecorder.Add the builds make at every episode end (with --stats 1)."""
    key: str
    aggregation: StatsAggregationMethod
    value: str  # "return" (the episode's float32 running return), "length" (academy steps) or "one"


EPISODE_STATS = (EpisodeStat("Environment/Cumulative Reward", StatsAggregationMethod.AVERAGE, "return"),
                 EpisodeStat("Environment/Episode Length", StatsAggregationMethod.AVERAGE, "length"),
                 EpisodeStat("Game/Episodes", StatsAggregationMethod.SUM, "one"),
                 EpisodeStat("Game/Last Return", StatsAggregationMethod.MOST_RECENT, "return"),
                 EpisodeStat("Game/Return", StatsAggregationMethod.HISTOGRAM, "return"))


def split(data: bytes) -> Iterator[tuple[uuid.UUID, bytes]]:
    """The (channel id, payload) records of a side-channel blob."""
    offset = 0
    while offset < len(data):
        if offset + 20 > len(data):
            raise ValueError(f"truncated side-channel record at byte {offset}")
        channel = uuid.UUID(bytes_le=data[offset:offset + 16])
        (length,) = struct.unpack_from("<i", data, offset + 16)
        offset += 20
        if length < 0 or offset + length > len(data):
            raise ValueError(f"side-channel record of {length} bytes overruns the message")
        yield channel, data[offset:offset + length]
        offset += length


def record(channel: uuid.UUID, payload: bytes) -> bytes:
    return channel.bytes_le + struct.pack("<i", len(payload)) + payload


def read_engine_configuration(payload: bytes) -> dict:
    """One EngineConfiguration message: {"time_scale": 20.0} and the like."""
    (kind,) = struct.unpack_from("<i", payload, 0)
    if kind not in _ENGINE_FIELDS:
        raise ValueError(f"unknown engine configuration type {kind}")
    name, fmt = _ENGINE_FIELDS[kind]
    values = struct.unpack_from("<" + fmt, payload, 4)
    return {name: values if len(values) > 1 else values[0]}


def read_environment_parameter(payload: bytes) -> tuple[str, float | None]:
    """One EnvironmentParameters message: (key, float value); samplers give (key, None)."""
    message = IncomingMessage(payload)
    key = message.read_string()
    kind = message.read_int32()
    return key, (message.read_float32() if kind == 0 else None)


def stat(key: str, value: float, aggregation: int = STATS_AVERAGE) -> bytes:
    """A Stats record, as Unity's StatsRecorder.Add(key, value, aggregation) sends it
    (aggregation: a StatsAggregationMethod value, Average by default)."""
    message = OutgoingMessage()
    message.write_string(key)
    message.write_float32(value)
    message.write_int32(aggregation)
    return record(STATS, bytes(message.buffer))


def episode_stats(returns: list[float], lengths: list[int]) -> bytes:
    """The Stats records of EPISODE_STATS for each ended episode, in order."""
    out = bytearray()
    for episode_return, length in zip(returns, lengths):
        values = {"return": float(episode_return), "length": float(length), "one": 1.0}
        for entry in EPISODE_STATS:
            out += stat(entry.key, values[entry.value], entry.aggregation.value)
    return bytes(out)


def frames_announcement(width: int, height: int, fps: float) -> bytes:
    """The Frames record that says this game sends frames of width x height pixels."""
    message = OutgoingMessage()
    for value in (FRAMES_ANNOUNCE, width, height):
        message.write_int32(value)
    message.write_float32(fps)
    return record(FRAMES, bytes(message.buffer))


class FrameRequest(NamedTuple):
    """Python asks for a frame of one agent."""
    behavior: str
    agent: int


def read_frame_request(payload: bytes) -> FrameRequest:
    """One Frames message from Python (a request; any other kind is a ValueError)."""
    message = IncomingMessage(payload)
    kind = message.read_int32()
    if kind != FRAMES_REQUEST:
        raise ValueError(f"frames message of kind {kind} from Python: only requests ({FRAMES_REQUEST}) go this way")
    behavior = message.read_string()
    return FrameRequest(behavior, message.read_int32())


def frame(agent: int, image, kind: int = FRAMES_FRAME) -> bytes:
    """The Frames record of one frame: `image` (height, width, 3) uint8, sent raw; `kind`
    FRAMES_END for the picture of an episode's end."""
    height, width, _ = image.shape
    message = OutgoingMessage()
    for value in (kind, agent, FRAMES_RAW, height, width):
        message.write_int32(value)
    return record(FRAMES, bytes(message.buffer) + image.tobytes())


def no_frame(agent: int, reason: str) -> bytes:
    """The Frames record that says why there is no frame of an agent."""
    message = OutgoingMessage()
    message.write_int32(FRAMES_NONE)
    message.write_int32(agent)
    message.write_string(reason)
    return record(FRAMES, bytes(message.buffer))
