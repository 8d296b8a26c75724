"""Video files and TensorBoard clips of an episode's frames (RGB uint8 images, one per decision).

The kind of file is chosen by its name: `.mp4` (H.264, yuv420p, by the ffmpeg binary that the
imageio-ffmpeg wheel ships: `pip install 'neatpar[video]'`) or `.gif` (Pillow, installed with
neatpar). Files are written atomically: a reader sees no file or the whole video. ffmpeg is given
the frames on its standard input as imageio-ffmpeg's `write_frames` gives them, but started apart
from the terminal's Ctrl+C (processes.apart_from_terminal: a session of its own, or on Windows a
process group) rather than through `preexec_fn`: a fork that runs Python code while other threads
run (gRPC's, in a process that talks to a game) failed about 1 time in 13 here. A GIF stores
delays in hundredths of a second, so its frame rate is 100 / round(100 / fps) (25 and 50 exactly),
and like every GIF writer Pillow shows a stretch of identical frames as one frame held longer.
A run's clips (run/clips.py) are mp4 where the video extra is installed, else GIFs (`clip_kind`),
in the run folder's videos/gen-N.mp4. A video holds its last frame (the episode's end) HOLD_SECONDS
more, so that the end of an episode is seen, and a short one (a solved task's few decisions) can be
watched at all.

A TensorBoard clip is what tensorboardX's `add_video` writes, an animated GIF as an image summary
(TensorBoard's Images tab plays it), made here with Pillow: `add_video` needs moviepy, whose
releases that install beside numpy 1.23 are from 2020.
"""
from __future__ import annotations

import io
import os
import subprocess
import tempfile
from typing import Sequence

import numpy as np

from .. import processes
from ..errors import ConfigError, VideoError, one_line
from .atomic import check_output_file, write_atomic

KINDS = {".mp4": "mp4", ".gif": "gif"}
INSTALL_HINT = "pip install 'neatpar[video]' (imageio-ffmpeg, which brings its own ffmpeg)"
VIDEOS = "videos"                # a run folder's clips: videos/gen-N.mp4
CLIP_TAG = "Champion/Episode"    # the TensorBoard tag of a generation's clip
FLUSH_SECONDS = 2
HOLD_SECONDS = 1.0               # a video's last frame is held this long after the episode


def video_kind(path: str, name: str = "video") -> str:
    """"mp4" or "gif", by the file's name, after checking that it can be written there (its folder
    exists, and for mp4 the video extra is installed); else a one-line ConfigError naming the fix,
    which begins with `name` (the flag that gave the path, e.g. "--video")."""
    kind = KINDS.get(os.path.splitext(path)[1].lower())
    if kind is None:
        raise ConfigError(f"{name} {path}: the name must end in .mp4 or .gif, which say the kind of video to write")
    check_output_file(path, name, "episode.mp4", "video")
    if kind == "mp4":
        ffmpeg()
    return kind


def clip_kind() -> str:
    """The kind of a run's clips: "mp4" where the video extra is installed, else "gif" (Pillow)."""
    try:
        ffmpeg()
    except ConfigError:
        return "gif"
    return "mp4"


def ffmpeg() -> str:
    """The ffmpeg program imageio-ffmpeg ships, or the ConfigError that says what to install."""
    try:
        import imageio_ffmpeg
    except ImportError:
        raise ConfigError(f"writing an mp4 needs imageio-ffmpeg, which is not installed: {INSTALL_HINT}; or write "
                          f"a .gif") from None
    return imageio_ffmpeg.get_ffmpeg_exe()


def write_video(path: str, frames: Sequence[np.ndarray], fps: float, hold: float = HOLD_SECONDS) -> str:
    """Write `frames` as the video `path` names (.mp4 or .gif), atomically, the last held `hold`
    seconds more; returns the path."""
    kind = video_kind(path)
    images = held(_checked(frames), fps, hold)
    write_atomic(path, encode_mp4(images, fps) if kind == "mp4" else encode_gif(images, fps))
    return path


def _checked(frames: Sequence[np.ndarray]) -> list[np.ndarray]:
    images = [np.asarray(f) for f in frames]
    if not images:
        raise ConfigError("a video needs at least one frame; the episode gave none")
    shape = images[0].shape
    for image in images:
        if image.dtype != np.uint8 or image.ndim != 3 or image.shape[2] != 3 or image.shape != shape:
            raise ConfigError(f"video frames must all be RGB uint8 images of one size {shape}; one is {image.dtype} "
                              f"of shape {image.shape}")
    return images


def held(frames: list[np.ndarray], fps: float, seconds: float = HOLD_SECONDS) -> list[np.ndarray]:
    """`frames` with the last repeated for `seconds` more at `fps` (whole frames)."""
    return frames + frames[-1:] * round(seconds * fps)


def encode_mp4(frames: Sequence[np.ndarray], fps: float) -> bytes:
    """H.264 (yuv420p, which every player takes) of `frames`; an odd width or height gets one more
    column or row, repeated from the edge (yuv420p needs even sizes)."""
    program = ffmpeg()
    height, width = frames[0].shape[:2]
    pad = ((0, height % 2), (0, width % 2), (0, 0))
    raw = b"".join(np.ascontiguousarray(np.pad(f, pad, mode="edge") if any(pad[0] + pad[1]) else f).tobytes()
                   for f in frames)
    with tempfile.TemporaryDirectory(prefix="neatpar-video-") as folder:
        path = os.path.join(folder, "video.mp4")
        command = [program, "-y", "-loglevel", "error", "-f", "rawvideo", "-vcodec", "rawvideo",
                   "-s", f"{width + width % 2}x{height + height % 2}", "-pix_fmt", "rgb24", "-r", f"{fps:g}",
                   "-i", "-", "-an", "-vcodec", "libx264", "-pix_fmt", "yuv420p", path]
        done = subprocess.run(command, input=raw, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              **processes.apart_from_terminal())   # Ctrl+C stays with neatpar, as imageio-ffmpeg keeps it
        if done.returncode != 0:
            raise VideoError(f"ffmpeg could not write the mp4 (exit status {done.returncode}): "
                             f"{one_line(done.stderr.decode(errors='replace'), limit=300) or 'no message'}")
        with open(path, "rb") as f:
            return f.read()


def gif_delay(fps: float) -> int:
    """A GIF frame's delay in milliseconds for `fps`: whole hundredths of a second, at least 2
    (browsers show shorter delays as a tenth of a second)."""
    return 10 * max(2, round(100.0 / fps))


def encode_gif(frames: Sequence[np.ndarray], fps: float) -> bytes:
    """An animated GIF of `frames` that loops. Frames of at most 256 colours together (a simulator
    build's flat drawing, CartPole's) are mapped exactly onto one palette of those colours, several
    times faster than Pillow's own palette per frame, which more colours get."""
    from PIL import Image
    images = [Image.fromarray(np.ascontiguousarray(f)) for f in frames]
    palette = shared_palette(images)
    if palette is not None:
        images = [image.quantize(palette=palette, dither=Image.Dither.NONE) for image in images]
    out = io.BytesIO()
    images[0].save(out, format="GIF", save_all=True, append_images=images[1:], duration=gif_delay(fps), loop=0)
    return out.getvalue()


def shared_palette(images: Sequence):
    """A palette image of the colours of `images` (RGB Pillow images), or None when they have more
    than a GIF's 256 together."""
    from PIL import Image
    colours: set = set()
    for image in images:
        counted = image.getcolors(256)
        if counted is None:
            return None
        colours.update(colour for _, colour in counted)
        if len(colours) > 256:
            return None
    values = [value for colour in sorted(colours) for value in colour]
    palette = Image.new("P", (1, 1))
    palette.putpalette(values + [0] * (768 - len(values)))
    return palette


def generation_video(folder: str, generation: int, kind: str = "mp4") -> str:
    """The path of a generation's clip in a run folder (videos/gen-N.mp4), its folder made."""
    videos = os.path.join(folder, VIDEOS)
    os.makedirs(videos, exist_ok=True)
    return os.path.join(videos, f"gen-{generation}.{kind}")


def remove_generation_videos(folder: str, first: int) -> list[str]:
    """Remove a run folder's clips of generation `first` and later (a resumed run plays those
    generations again, and records again those its schedule names); the paths removed."""
    videos, removed = os.path.join(folder, VIDEOS), []
    for name in sorted(os.listdir(videos)) if os.path.isdir(videos) else ():
        stem, kind = os.path.splitext(name)
        number = stem[len("gen-"):]
        if stem.startswith("gen-") and number.isdigit() and kind in KINDS and int(number) >= first:
            os.remove(os.path.join(videos, name))
            removed.append(os.path.join(videos, name))
    return removed


def clip_summary(frames: Sequence[np.ndarray], fps: float, tag: str = CLIP_TAG, hold: float = HOLD_SECONDS):
    """A TensorBoard summary of `frames` as tensorboardX's add_video makes it (an animated GIF as an
    image, the last frame held `hold` seconds more, as a video), with the tag exactly as given."""
    from tensorboardX.proto.summary_pb2 import Summary
    images = held(_checked(frames), fps, hold)
    height, width, channels = images[0].shape
    image = Summary.Image(height=height, width=width, colorspace=channels,
                          encoded_image_string=encode_gif(images, fps))
    return Summary(value=[Summary.Value(tag=tag, image=image)])


class ClipLog:
    """The clips of a run folder in its own TensorBoard event file (in the run folder's own
    TensorBoard run, beside the curves), one per recorded generation at step = generation.
    `resume_at` is the first generation of a resumed run (None for a new run), as for EventLog."""

    def __init__(self, folder: str, resume_at: int | None = None):
        self.folder, self.resume_at = folder, resume_at
        self._writer = None

    def add(self, generation: int, frames: Sequence[np.ndarray], fps: float, tag: str = CLIP_TAG) -> None:
        if self._writer is None:
            from tensorboardX import SummaryWriter
            self._writer = SummaryWriter(self.folder, purge_step=self.resume_at, flush_secs=FLUSH_SECONDS,
                                         filename_suffix=f".clips.{os.getpid()}")
        self._writer.file_writer.add_summary(clip_summary(frames, fps, tag), generation)

    def close(self) -> None:
        """Write everything out and close the file (a later add opens a new one)."""
        writer, self._writer = self._writer, None
        if writer is not None:
            writer.close()
