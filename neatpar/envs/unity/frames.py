"""neatpar's Frames side channel, Python's side: pictures of one agent, asked of a game that can
draw them, to make a clip of it.

A game that speaks the channel announces it in its first message (the initialization output's
rl_output, which mlagents-envs' UnityEnvironment does not read: a client without the channel sees
nothing); the simulator builds do (unity_builds/neatpar_sim/side_channels.py has the game's side and the
message formats), a real Unity game does not, and then asking for a frame is a FramesUnavailable
error naming the way to watch it instead. Requests travel with a step only while a clip is being
recorded, so a generation that records nothing sends and receives nothing on the channel. A game
may also send, unasked, the picture of an agent asked for whose episode ended in the steps the
request travelled with (the state its terminal step shows, which no later decision can ask for): it
takes its place after the frame asked for, so that a clip shows the episode to its end.
"""
from __future__ import annotations

import io
import uuid
from typing import NamedTuple

import numpy as np
from mlagents_envs.side_channel.incoming_message import IncomingMessage
from mlagents_envs.side_channel.outgoing_message import OutgoingMessage
from mlagents_envs.side_channel.side_channel import SideChannel
from mlagents_envs.side_channel.side_channel_manager import SideChannelManager

from ...errors import FramesUnavailable, SimulatorError

CHANNEL_ID = uuid.UUID("fcdebe15-7357-4fbf-bb2d-13a18b7da4da")
ANNOUNCE, REQUEST, FRAME, NONE, END = 0, 1, 2, 3, 4   # a message's kind, its first int32
RAW, PNG = 0, 1                               # a frame's encoding

NO_FRAMES = ("this game sends no frames (only neatpar's simulator builds speak its Frames side channel): watch "
             "it in its own window instead (neatpar play --graphics), or record it in the Editor with Unity's "
             "Recorder (see Watching a run)")


class Announcement(NamedTuple):
    """What a game that sends frames says about them: their size and the rate a clip plays at."""
    width: int
    height: int
    fps: float


class FrameChannel(SideChannel):
    """Asks the game for frames of agents and keeps the frames it sends, in order."""

    def __init__(self):
        super().__init__(CHANNEL_ID)
        self.announcement: Announcement | None = None
        self._frames: list[np.ndarray] = []
        self._missing: list[str] = []
        self._requested = 0
        self._ends = 0   # the frames of episodes' ends among _frames, which come unasked

    def launched(self, side_channel: bytes) -> None:
        """A new game process: its initialization message's side-channel bytes say whether it sends
        frames; whatever was asked of the previous process is forgotten."""
        self.announcement = None
        self.message_queue = []
        self._frames, self._missing, self._requested, self._ends = [], [], 0, 0
        if side_channel:
            SideChannelManager([self]).process_side_channel_message(side_channel)

    def request(self, behavior: str, agent: int) -> None:
        """Ask for a frame of the agent as it is now (at its decision); it arrives with the next
        step's reply. A game that did not announce frames is a FramesUnavailable error."""
        if self.announcement is None:
            raise FramesUnavailable(NO_FRAMES)
        message = OutgoingMessage()
        message.write_int32(REQUEST)
        message.write_string(behavior)
        message.write_int32(int(agent))
        self.queue_message_to_send(message)
        self._requested += 1

    def take(self) -> list[np.ndarray]:
        """The frames asked for since the last call, in order, each episode's end the game drew
        after the last frame of that episode; a frame the game did not send is a SimulatorError
        with its reason. Nothing asked stays queued."""
        frames, missing, requested, ends = self._frames, self._missing, self._requested, self._ends
        self._frames, self._missing, self._requested, self._ends = [], [], 0, 0
        self.message_queue = []
        if missing:
            raise SimulatorError(f"the game sent no frame for {len(missing)} of {requested} requests: {missing[0]}")
        if len(frames) - ends != requested:
            raise SimulatorError(f"the game sent {len(frames) - ends} frames for {requested} requests: take frames "
                                 f"only after a step has carried the requests")
        return frames

    def on_message_received(self, msg: IncomingMessage) -> None:
        kind = msg.read_int32()
        if kind == ANNOUNCE:
            width, height = msg.read_int32(), msg.read_int32()
            self.announcement = Announcement(width, height, msg.read_float32())
        elif kind in (FRAME, END):
            msg.read_int32()  # the agent: frames arrive in the order they were asked for
            encoding, height, width = msg.read_int32(), msg.read_int32(), msg.read_int32()
            self._frames.append(decode(encoding, height, width, memoryview(msg.buffer)[msg.offset:]))
            self._ends += kind == END
        elif kind == NONE:
            agent = msg.read_int32()
            self._missing.append(f"agent {agent}: {msg.read_string()}")
        else:
            raise SimulatorError(f"the game sent a Frames message of unknown kind {kind}: use simulator builds "
                                 f"of this neatpar version")


def decode(encoding: int, height: int, width: int, data: bytes | memoryview) -> np.ndarray:
    """A frame's image, (height, width, 3) uint8, from its encoding (a raw one is not copied)."""
    if encoding == RAW:
        if len(data) != height * width * 3:
            raise SimulatorError(f"a raw {width}x{height} frame of {len(data)} bytes: {height * width * 3} expected")
        return np.frombuffer(data, np.uint8).reshape(height, width, 3)
    if encoding == PNG:
        from PIL import Image   # mlagents-envs' own dependency (its PNG observations)
        image = np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))
        if image.shape[:2] != (height, width):
            raise SimulatorError(f"a PNG frame of {image.shape[1]}x{image.shape[0]} said to be {width}x{height}")
        return image
    raise SimulatorError(f"the game sent a frame in unknown encoding {encoding}: use simulator builds of this "
                         f"neatpar version")
