"""Benchmark: what a run's clips (`[neatpar] video_interval`, neatpar/run/clips.py) cost the run.

The demo's run (configs/ball.cfg: 60 genomes, 32 agents, 2 episodes of up to 500 decisions,
seeded) for a few generations with `neatpar evolve --quiet`, in turns:
  off     this code, video_interval = 0
  clips   this code, video_interval = 5 (clips after generations 4 and 9, and the last)
  before  with --baseline DIR: the code of another checkout (e.g. the commit before clips, its C
          extensions built in place: python setup.py build_ext --inplace), whose config has no
          video_interval
Each generation's seconds come from stats.csv (neat-python's evaluation and the recorder's row, as
the progress line shows them); the generations between clips are compared with the same
generations of the other runs (median over repetitions, per generation, then the median of those
ratios), and a whole run's wall time gives what a clip costs. The stats (without timings) of every
run must be the same: recording changes nothing of a run.
Then a clip's TensorBoard GIF: 500 ball frames (the task stepped with random actions, drawn as the
build draws them) encoded by record/video.py's encode_gif (one shared palette of their colours)
and by Pillow's own palette per frame, as encode_gif did before; the frames must read back the same.
Usage: python bench/bench_clips.py [--generations 12] [--reps 3] [--baseline DIR] [--gif-only]
"""
import argparse
import csv
import io
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
from stock_env import BUILDS, ROOT

sys.path.append(BUILDS)

from neatpar.record.video import encode_gif, gif_delay

INTERVAL = 5
TIMING = ("seconds", "scored_steps_per_s")


def config_text(generations: int, interval: int | None) -> str:
    """configs/ball.cfg with its build's absolute path, `generations`, and video_interval (None:
    no such key, for code that does not know it)."""
    with open(os.path.join(ROOT, "configs", "ball.cfg")) as f:
        text = f.read().replace("../unity_builds/ball", os.path.join(ROOT, "unity_builds", "ball"))
    lines = []
    for line in text.splitlines():
        key = line.split("=")[0].strip()
        if key == "generations":
            line = f"generations = {generations}"
        elif key == "video_interval":
            continue
        lines.append(line)
    if interval is not None:
        lines.append(f"video_interval = {interval}")
    return "\n".join(lines) + "\n"


def run(folder: str, name: str, generations: int, interval: int | None, code: str | None) -> dict:
    """One `neatpar evolve` run; its wall seconds, stats rows and clips."""
    config = os.path.join(folder, f"{name}.cfg")
    with open(config, "w") as f:
        f.write(config_text(generations, interval))
    out = os.path.join(folder, name)
    env = dict(os.environ)
    if code is not None:
        env["PYTHONPATH"] = code
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "neatpar", "evolve", "--config", config, "--out", out, "--quiet"],
                          capture_output=True, text=True, cwd=folder, env=env)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{name}: exit status {done.returncode}: {done.stderr}")
    with open(os.path.join(out, "stats.csv")) as f:
        rows = list(csv.DictReader(f))
    videos = os.path.join(out, "videos")
    return {"wall": wall, "rows": rows, "clips": sorted(os.listdir(videos)) if os.path.isdir(videos) else []}


def ball_frames(count: int = 500) -> list:
    """Frames of the ball task stepped with random actions, drawn as the build draws them."""
    from neatpar_sim.tasks import TASKS
    rng = np.random.default_rng(5)
    task = TASKS["ball"]({"agents": 1}, rng)
    behavior = task.behaviors[0]
    everyone = {behavior.name: np.ones(1, bool)}
    frames = []
    for _ in range(count):
        actions = {behavior.name: (rng.uniform(-1, 1, (1, behavior.continuous)).astype(np.float32),
                                   np.zeros((1, 0), np.int32))}
        result = task.step(actions, everyone, everyone)[behavior.name]
        task.restart({behavior.name: np.flatnonzero(result.done)})
        frames.append(task.render(behavior.name, 0))
    return frames


def per_frame_palette_gif(frames: list, fps: float) -> bytes:
    """A GIF as Pillow makes it from RGB frames: a palette of its own for each frame."""
    from PIL import Image
    images = [Image.fromarray(f) for f in frames]
    out = io.BytesIO()
    images[0].save(out, format="GIF", save_all=True, append_images=images[1:], duration=gif_delay(fps), loop=0)
    return out.getvalue()


def gif_frames(data: bytes) -> list:
    from PIL import Image
    with Image.open(io.BytesIO(data)) as gif:
        frames = []
        for k in range(gif.n_frames):
            gif.seek(k)
            frames.append(np.asarray(gif.convert("RGB")))
    return frames


def gif_cost(reps: int) -> None:
    """A clip's GIF both ways, in turns: median seconds, the ratio, the size; both must read back
    as the same frames."""
    frames = ball_frames()
    encoders = {"shared palette (encode_gif)": encode_gif, "a palette per frame (Pillow's)": per_frame_palette_gif}
    times = {name: [] for name in encoders}
    made = {}
    for rep in range(reps):
        for name in list(encoders) if rep % 2 == 0 else list(reversed(encoders)):
            started = time.perf_counter()
            made[name] = encoders[name](frames, 25.0)
            times[name].append(time.perf_counter() - started)
    shared, own = (gif_frames(data) for data in made.values())
    same = len(shared) == len(own) and all((a == b).all() for a, b in zip(shared, own))
    base = statistics.median(times["a palette per frame (Pillow's)"])
    print(f"\na clip's GIF: {len(frames)} ball frames of 256 x 256 ({len(shared)} frames in the GIF); "
          f"both read back the same: {same}")
    for name, seconds in times.items():
        print(f"  {name:32s} {statistics.median(seconds):6.3f} s  ratio {statistics.median(seconds) / base:5.3f}  "
              f"{len(made[name]):8d} bytes")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--generations", type=int, default=12)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--baseline", help="a checkout of other code to run as 'before' (C extensions built in place)")
    parser.add_argument("--gif-only", action="store_true", help="only the GIF encoders, no runs")
    args = parser.parse_args()
    if args.gif_only:
        return gif_cost(args.reps)
    modes = {"off": (0, None), "clips": (INTERVAL, None)}
    if args.baseline:
        modes = {"before": (None, os.path.abspath(args.baseline)), **modes}
    results = {mode: [] for mode in modes}
    with tempfile.TemporaryDirectory(prefix="bench-clips-") as folder:
        for rep in range(args.reps):
            order = list(modes) if rep % 2 == 0 else list(reversed(modes))   # each mode first in turn
            for mode in order:
                interval, code = modes[mode]
                results[mode].append(run(folder, f"{mode}-{rep}", args.generations, interval, code))
    stats = {mode: [[{k: v for k, v in r.items() if k not in TIMING} for r in one["rows"]] for one in runs]
             for mode, runs in results.items()}
    reference = next(iter(stats.values()))[0]
    same = all(rows == reference for runs in stats.values() for rows in runs)
    recorded = {g for g in range(args.generations) if (g + 1) % INTERVAL == 0 or g + 1 == args.generations}
    between = [g for g in range(args.generations) if g not in recorded and g > 0]   # generation 0 launches the game

    def seconds(mode: str, generation: int) -> float:
        return statistics.median(float(one["rows"][generation]["seconds"]) for one in results[mode])

    print(f"The demo's run, {args.generations} generations, {args.reps} runs of each, in turns; clips after "
          f"generations {sorted(recorded)} (video_interval = {INTERVAL}); stats of every run the same: {same}")
    print(f"{'run':8s} {'median s per generation between clips':>40s} {'ratio':>7s} {'run wall s':>11s}")
    base = "before" if "before" in modes else "off"
    for mode in modes:
        per_generation = statistics.median(seconds(mode, g) for g in between)
        ratio = statistics.median(seconds(mode, g) / seconds(base, g) for g in between)
        wall = statistics.median(one["wall"] for one in results[mode])
        print(f"{mode:8s} {per_generation:40.3f} {ratio:7.3f} {wall:11.2f}")
    clips = results["clips"][0]["clips"]
    extra = statistics.median(c["wall"] for c in results["clips"]) - statistics.median(o["wall"] for o in results["off"])
    print(f"clips written: {', '.join(clips)}; a clip costs about {extra / max(1, len(clips)):.2f} s of the run's "
          f"wall time (recording, mp4 encoding, TensorBoard)")
    gif_cost(args.reps)


if __name__ == "__main__":
    main()
