"""Clips read back: an mp4's frames through imageio's ffmpeg reader, a GIF's frames and the steps
its delays stand for, TensorBoard's clips of a run folder; and a Gymnasium environment that cannot
give pictures."""
import io

import gymnasium
import numpy as np
from gymnasium import spaces
from PIL import Image


class NoPictures(gymnasium.Env):
    """An environment that renders for people only (render mode "human"): gymnasium:support.videos:NoPictures."""
    metadata = {"render_modes": ["human"]}
    observation_space = spaces.Box(-1.0, 1.0, (2,), np.float32)
    action_space = spaces.Discrete(2)

    def __init__(self, render_mode=None):
        self.render_mode = render_mode

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return np.zeros(2, np.float32), {}

    def step(self, action):
        return np.zeros(2, np.float32), 1.0, True, False, {}


def mp4_frames(path, monkeypatch) -> list[np.ndarray]:
    """An mp4's frames, decoded."""
    import imageio.v3 as iio
    monkeypatch.setenv("IMAGEIO_FFMPEG_NO_PREVENT_SIGINT", "1")   # the reader's fork, with gRPC's threads about
    return list(iio.imiter(path))


def gif_frames(data: bytes, delay_ms: int) -> list[np.ndarray]:
    """A GIF's frames as RGB images, one per step of `delay_ms` (a still stretch, which a GIF keeps
    as one frame held longer, given back as the frames it stands for)."""
    frames = []
    with Image.open(io.BytesIO(data)) as gif:
        for k in range(gif.n_frames):
            gif.seek(k)
            frames += [np.asarray(gif.convert("RGB"))] * (gif.info["duration"] // delay_ms)
    return frames


def gif_steps(path, delay_ms: int) -> int:
    """The frames a GIF shows, still stretches (kept as one frame held longer) counted in steps of
    `delay_ms`."""
    delays = []
    with Image.open(path) as gif:
        for k in range(gif.n_frames):
            gif.seek(k)
            delays.append(gif.info["duration"])
    return sum(delays) // delay_ms


def tensorboard_clips(folder, tag="Champion/Episode") -> list:
    """The clips (image events) of a TensorBoard run folder under `tag`, in step order."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    events = EventAccumulator(str(folder), size_guidance={"images": 0})
    events.Reload()
    return list(events.Images(tag)) if tag in events.Tags()["images"] else []
