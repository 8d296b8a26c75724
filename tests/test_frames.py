"""neatpar's Frames side channel on Python's side (neatpar/envs/unity/frames.py): what it reads of a
game's announcement and frames (raw and PNG), what it refuses, and, through the bridge and real
simulator builds, frames that show each agent as it was at the decision they were asked at, sent
only while asked; a plain UnityEnvironment, which has no such channel, notices nothing of it."""
import io

import numpy as np
import pytest
from mlagents_envs.side_channel.outgoing_message import OutgoingMessage
from mlagents_envs.side_channel.side_channel_manager import SideChannelManager
from PIL import Image

from neatpar.envs.unity.adapter import UnityAdapter
from neatpar.envs.unity.bridge import SimulatorBridge
from neatpar.envs.unity.frames import FrameChannel
from neatpar.errors import FramesUnavailable, SimulatorError
from neatpar_sim import side_channels
from neatpar_sim.tasks import TASKS
from support.paths import BALL
from support.simulators import free_worker_id, simulator

BEHAVIOR = "Ball3D?team=0"


def announced() -> FrameChannel:
    channel = FrameChannel()
    channel.launched(side_channels.frames_announcement(4, 3, 25.0))
    return channel


def receive(channel: FrameChannel, *records: bytes) -> None:
    SideChannelManager([channel]).process_side_channel_message(b"".join(records))


def png_frame(agent: int, image: np.ndarray) -> bytes:
    """A frame record as a game that sends PNG writes it."""
    out = io.BytesIO()
    Image.fromarray(image).save(out, format="PNG")
    message = OutgoingMessage()
    for value in (side_channels.FRAMES_FRAME, agent, side_channels.FRAMES_PNG, *image.shape[:2]):
        message.write_int32(value)
    return side_channels.record(side_channels.FRAMES, bytes(message.buffer) + out.getvalue())


def test_raw_and_png_frames_come_back_as_the_images_sent_in_the_order_asked():
    rng = np.random.default_rng(1)
    images = [rng.integers(0, 256, (3, 4, 3), dtype=np.uint8) for _ in range(3)]
    channel = announced()
    assert channel.announcement == (4, 3, 25.0)
    for agent in (7, 8, 9):
        channel.request(BEHAVIOR, agent)
    receive(channel, side_channels.frame(7, images[0]), png_frame(8, images[1]), side_channels.frame(9, images[2]))
    taken = channel.take()
    assert len(taken) == 3 and all((a == b).all() and a.dtype == np.uint8 for a, b in zip(taken, images))
    assert channel.take() == []   # taken once


def test_an_episode_s_end_comes_unasked_after_the_frame_asked_for_and_in_its_place():
    images = [np.full((3, 4, 3), k, np.uint8) for k in range(3)]
    channel = announced()
    channel.request(BEHAVIOR, 7)
    channel.request(BEHAVIOR, 7)
    receive(channel, side_channels.frame(7, images[0]), side_channels.frame(7, images[1]),
            side_channels.frame(7, images[2], side_channels.FRAMES_END))
    assert [int(f[0, 0, 0]) for f in channel.take()] == [0, 1, 2]
    channel.request(BEHAVIOR, 7)
    receive(channel, side_channels.frame(7, images[2], side_channels.FRAMES_END))
    with pytest.raises(SimulatorError, match="the game sent 0 frames for 1 requests"):
        channel.take()   # an end is no answer to a request


def test_a_game_that_announces_nothing_is_refused_at_the_first_request_naming_the_way_to_watch_it():
    channel = FrameChannel()
    channel.launched(b"")
    with pytest.raises(FramesUnavailable, match=r"this game sends no frames .*neatpar play --graphics.*in the "
                                                r"Editor with Unity's Recorder"):
        channel.request(BEHAVIOR, 0)
    assert channel.message_queue == []


def test_missing_or_malformed_frames_are_errors_and_a_new_launch_forgets_what_was_asked():
    channel = announced()
    channel.request(BEHAVIOR, 1)
    channel.request(BEHAVIOR, 2)
    receive(channel, side_channels.frame(1, np.zeros((3, 4, 3), np.uint8)))
    with pytest.raises(SimulatorError, match="the game sent 1 frames for 2 requests"):
        channel.take()
    message = OutgoingMessage()
    for value in (side_channels.FRAMES_FRAME, 1, side_channels.FRAMES_RAW, 3, 4):
        message.write_int32(value)
    with pytest.raises(SimulatorError, match="a raw 4x3 frame of 5 bytes: 36 expected"):
        receive(channel, side_channels.record(side_channels.FRAMES, bytes(message.buffer) + b"12345"))
    channel.request(BEHAVIOR, 1)
    channel.launched(side_channels.frames_announcement(4, 3, 25.0))   # the game was relaunched
    assert channel.message_queue == [] and channel.take() == []


def test_a_plain_unity_environment_reads_nothing_of_the_announcement(capfd):
    with simulator("ball", args=["--agents", "2"]) as env:
        env.reset()
        env.step()
    assert "Unknown side channel" not in capfd.readouterr().out


def ball_adapter(*args) -> UnityAdapter:
    return UnityAdapter(SimulatorBridge(BALL, args=["--agents", "3", "--max-steps", "50", *args], seed=4,
                                        worker_id=free_worker_id()))


def test_the_bridge_learns_from_the_launch_whether_the_game_draws_frames():
    for args, expected in (((), (256, 256, 25.0)), (("--frames", "0"), None)):
        adapter = ball_adapter(*args)
        try:
            adapter.reset(None)
            assert adapter.bridge.frames.announcement == expected
        finally:
            adapter.close()
    assert SimulatorBridge(BALL, frames=False).frames is None


def test_each_frame_shows_the_agent_where_its_decision_s_observation_says_and_only_asked_frames_come():
    task = TASKS["ball"]({}, np.random.default_rng(0))
    x, z = task.scales()
    adapter = ball_adapter()
    try:
        adapter.reset(None)
        seen = []
        for step in range(12):
            batch = adapter.poll()[BEHAVIOR]
            agent = int(batch.decision_ids[step % len(batch.decision_ids)])
            row = list(batch.decision_ids).index(agent)
            seen.append(batch.observations[row, [2, 4]])   # ball x and z on the platform
            adapter.capture(BEHAVIOR, agent)
            adapter.act(BEHAVIOR, np.tile([0.8, -0.6], (len(batch.decision_ids), 1)))
            adapter.step()
        frames = adapter.take_frames()
        assert frames.fps == 25.0 and len(frames.images) == 12
        for image, (bx, bz) in zip(frames.images, seen):
            ys, xs = np.nonzero((image == task.BALL_COLOR).all(axis=2))
            assert abs(xs.mean() + 0.5 - x(bx)) < 0.5 and abs(ys.mean() + 0.5 - z(bz)) < 0.5
        adapter.step()   # nothing asked: nothing sent
        assert adapter.take_frames().images == []
    finally:
        adapter.close()
