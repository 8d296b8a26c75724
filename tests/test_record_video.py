"""Video files and TensorBoard clips (neatpar/record/video.py): mp4 and GIF chosen by the name, read
back by imageio's ffmpeg reader and Pillow frame by frame, written atomically; each bad request a
one-line error naming the fix; a clip in a run folder's event file as TensorBoard's own reader
sees it."""
import io
import os
import subprocess
import sys

import numpy as np
import pytest
from PIL import Image
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from neatpar.errors import ConfigError
from neatpar.record.video import (CLIP_TAG, HOLD_SECONDS, ClipLog, clip_kind, clip_summary, generation_video, gif_delay,
                                  remove_generation_videos, shared_palette, video_kind, write_video)
from support.paths import ROOT


def moving_square(count: int, height: int = 48, width: int = 64) -> list[np.ndarray]:
    """Frames of a white square that moves one step to the right per frame, on a dark ground."""
    frames = []
    for k in range(count):
        frame = np.full((height, width, 3), 20, np.uint8)
        frame[10:26, 2 + 2 * k:18 + 2 * k] = 235
        frames.append(frame)
    return frames


def mp4_frames(path, monkeypatch) -> list[np.ndarray]:
    import imageio.v3 as iio
    monkeypatch.setenv("IMAGEIO_FFMPEG_NO_PREVENT_SIGINT", "1")   # the reader's fork, as the writer avoids it
    return list(iio.imiter(path))


def gif_frames(path) -> tuple[list[np.ndarray], list[int]]:
    """A GIF's frames (RGB) and each one's delay in ms."""
    frames, delays = [], []
    with Image.open(path) as gif:
        for k in range(gif.n_frames):
            gif.seek(k)
            frames.append(np.asarray(gif.convert("RGB")))
            delays.append(gif.info["duration"])
    return frames, delays


def test_an_mp4_has_every_frame_in_order_and_holds_the_last(tmp_path, monkeypatch):
    frames = moving_square(17)
    path = write_video(str(tmp_path / "clip.mp4"), frames, 25.0)
    read = mp4_frames(path, monkeypatch)
    assert HOLD_SECONDS == 1.0 and len(read) == 17 + 25 and read[0].shape == (48, 64, 3)
    for got, sent in zip(read, frames + frames[-1:] * 25):   # lossy, but each frame is its own: the square moved
        assert np.abs(got.astype(int) - sent).mean() < 4
    assert os.listdir(tmp_path) == ["clip.mp4"]   # nothing but the file


def test_an_odd_sized_mp4_gets_an_edge_row_and_column(tmp_path, monkeypatch):
    frames = moving_square(5, height=47, width=63)
    read = mp4_frames(write_video(str(tmp_path / "odd.mp4"), frames, 10.0, hold=0), monkeypatch)
    assert len(read) == 5 and read[0].shape == (48, 64, 3)
    assert np.abs(read[2][:47, :63].astype(int) - frames[2]).mean() < 4


def test_a_gif_has_every_frame_in_order_with_the_delay_of_its_rate_the_last_held(tmp_path):
    frames = moving_square(12)
    read, delays = gif_frames(write_video(str(tmp_path / "clip.gif"), frames, 25.0))
    assert len(read) == 12 and all((a == b).all() for a, b in zip(read, frames))   # flat colours: exact
    assert delays == [40] * 11 + [40 + 1000 * HOLD_SECONDS]
    assert gif_frames(write_video(str(tmp_path / "clip.gif"), frames, 25.0, hold=0))[1] == [40] * 12
    assert [gif_delay(fps) for fps in (25, 50, 30, 35, 100, 4)] == [40, 20, 30, 30, 20, 250]


def test_a_gif_of_more_than_256_colours_together_gets_pillow_s_palette_per_frame(tmp_path):
    """Each frame below has 200 colours, the three together 600: no shared palette holds them."""
    frames = []
    for k in range(3):
        frame = np.zeros((20, 10, 3), np.uint8)
        frame[..., 0] = (np.arange(200) + 200 * k).reshape(20, 10) % 256
        frame[..., 1] = (np.arange(200) + 200 * k).reshape(20, 10) // 256
        frames.append(frame)
    assert shared_palette([Image.fromarray(f) for f in frames]) is None
    assert shared_palette([Image.fromarray(f) for f in frames[:1]]) is not None
    read, delays = gif_frames(write_video(str(tmp_path / "many.gif"), frames, 25.0, hold=0))
    assert len(read) == 3 and delays == [40] * 3
    for got, sent in zip(read, frames):   # each frame's own palette: its 200 colours, exactly
        assert (got == sent).all()


def test_a_gif_holds_a_still_stretch_as_one_longer_frame(tmp_path):
    frames = moving_square(3)
    still = frames[:2] + [frames[1]] * 3 + frames[2:]
    read, delays = gif_frames(write_video(str(tmp_path / "still.gif"), still, 25.0, hold=0))
    assert len(read) == 3 and delays == [40, 160, 40] and sum(delays) == 40 * len(still)


def test_a_video_replaces_an_older_one_whole(tmp_path):
    path = tmp_path / "clip.gif"
    path.write_bytes(b"an older file")
    write_video(str(path), moving_square(4), 25.0)
    assert gif_frames(path)[0][3].shape == (48, 64, 3) and os.listdir(tmp_path) == ["clip.gif"]


@pytest.mark.parametrize("name, message", [
    ("clip.avi", r"^video .*clip.avi: the name must end in .mp4 or .gif, which say the kind of video to write$"),
    ("missing/clip.mp4", r"^video .*: the folder .*missing does not exist: create it, or write the video elsewhere$"),
    ("folder.gif", r"^video .*folder.gif is a folder: name the file to write, e.g. .*episode.mp4$"),
])
def test_a_video_that_cannot_be_written_there_is_a_one_line_error_naming_the_fix(tmp_path, name, message):
    (tmp_path / "folder.gif").mkdir()
    with pytest.raises(ConfigError, match=message):
        write_video(str(tmp_path / name), moving_square(2), 25.0)
    assert video_kind(str(tmp_path / "CLIP.MP4")) == "mp4" and video_kind(str(tmp_path / "a.gif")) == "gif"


def test_frames_of_different_sizes_or_none_are_refused(tmp_path):
    with pytest.raises(ConfigError, match=r"one size \(48, 64, 3\); one is uint8 of shape \(20, 20, 3\)"):
        write_video(str(tmp_path / "a.gif"), moving_square(2) + [np.zeros((20, 20, 3), np.uint8)], 25.0)
    with pytest.raises(ConfigError, match="needs at least one frame"):
        write_video(str(tmp_path / "a.gif"), [], 25.0)


def test_without_the_video_extra_an_mp4_is_refused_with_the_install_and_a_gif_still_works(tmp_path):
    """imageio-ffmpeg made unimportable in a fresh interpreter, as where the extra is not installed."""
    script = ("import sys; sys.modules['imageio_ffmpeg'] = None\n"
              "import numpy as np\n"
              "from neatpar.record.video import clip_kind, write_video\n"
              "print(clip_kind())\n"
              f"write_video({str(tmp_path / 'a.gif')!r}, [np.zeros((4, 4, 3), np.uint8)], 10)\n"
              f"write_video({str(tmp_path / 'a.mp4')!r}, [np.zeros((4, 4, 3), np.uint8)], 10)\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 1 and os.path.isfile(tmp_path / "a.gif") and not os.path.exists(tmp_path / "a.mp4")
    assert done.stdout == "gif\n" and clip_kind() == "mp4"   # a run's clips: GIFs without the extra
    assert done.stderr.strip().splitlines()[-1] == (
        "neatpar.errors.ConfigError: writing an mp4 needs imageio-ffmpeg, which is not installed: pip install "
        "'neatpar[video]' (imageio-ffmpeg, which brings its own ffmpeg); or write a .gif")


def test_a_generation_s_clip_goes_in_the_run_folder_s_videos(tmp_path):
    path = generation_video(str(tmp_path), 7)
    assert path == os.path.join(tmp_path, "videos", "gen-7.mp4") and os.path.isdir(tmp_path / "videos")
    assert generation_video(str(tmp_path), 8, "gif").endswith(os.path.join("videos", "gen-8.gif"))


def test_a_resumed_run_removes_its_clips_from_the_generation_it_plays_again(tmp_path):
    videos = tmp_path / "videos"
    videos.mkdir()
    for name in ("gen-1.mp4", "gen-3.gif", "gen-10.mp4", "gen-2.mp4.part", "notes.txt", "gen-x.mp4"):
        (videos / name).write_bytes(b"")
    removed = remove_generation_videos(str(tmp_path), 3)
    assert sorted(os.path.basename(p) for p in removed) == ["gen-10.mp4", "gen-3.gif"]
    assert sorted(os.listdir(videos)) == ["gen-1.mp4", "gen-2.mp4.part", "gen-x.mp4", "notes.txt"]
    assert remove_generation_videos(str(tmp_path / "new"), 0) == []   # a run folder without clips


def test_a_clip_is_an_animated_image_at_its_generation_in_the_run_folder_s_tensorboard_run(tmp_path):
    frames = moving_square(6)
    clips = ClipLog(str(tmp_path))
    clips.add(3, frames, 25.0)
    clips.add(5, frames[:2], 25.0)
    clips.close()
    events = EventAccumulator(str(tmp_path), size_guidance={"images": 0})
    events.Reload()
    assert events.Tags()["images"] == [CLIP_TAG]
    first, second = events.Images(CLIP_TAG)
    assert (first.step, first.width, first.height, second.step) == (3, 64, 48, 5)
    with Image.open(io.BytesIO(first.encoded_image_string)) as gif:
        assert gif.format == "GIF" and gif.n_frames == 6
    summary = clip_summary(frames, 25.0, tag="Self-play/Champion vs best")
    assert summary.value[0].tag == "Self-play/Champion vs best"   # spaces kept, as TensorBoard shows ML-Agents' tags
