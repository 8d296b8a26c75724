"""Benchmark: what pictures of agents cost (neatpar/envs/unity/frames.py, neatpar/run/recording.py).

(a) A generation that records nothing: the ball build (32 agents, 64 realistic genomes, 100
    decisions an episode, seeded), played by the episode runner through a bridge with the Frames
    side channel registered and through one without, alternately, same seed: median seconds of
    each and their ratio; the returns must be the same.
(b) A recorded episode against the same episode played (EnvEvaluator.play_episodes, with and
    without the runner's on_decisions hook taking a picture at every decision): the cost of one
    frame of 256 x 256 sent raw (196,608 bytes) over the loopback wire, drawing included.
(c) The frames of (b) encoded as PNG (Pillow, compress level 1 and 6) and decoded again: what a
    PNG frame would cost the game and Python instead, and its size.
Usage: python bench/bench_frames.py [--reps N]
"""
import argparse
import io
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from realistic_genomes import realistic  # noqa: E402
from stock_env import ROOT  # noqa: E402

from neatpar.envs.unity.adapter import UnityAdapter  # noqa: E402
from neatpar.envs.unity.bridge import SimulatorBridge  # noqa: E402
from neatpar.run.evaluator import EnvEvaluator  # noqa: E402
from neatpar.run.runner import EpisodeRunner  # noqa: E402
from neatpar.settings import Settings  # noqa: E402

BALL = os.path.join(ROOT, "unity_builds", "ball")
BEHAVIOR = "Ball3D?team=0"


def settings(worker_id: int) -> Settings:
    return Settings.create({"env": BALL, "env_args": "--agents 32 --max-steps 100",
                            "behaviors": f"{BEHAVIOR}: population", "max_steps": 100, "seed": 3,
                            "worker_id": worker_id})


def generation_cost(genomes, config, reps: int) -> dict:
    """(a): median seconds per generation with and without the channel, and whether returns agree."""
    runners = {}
    for frames, worker_id in ((True, 400), (False, 500)):
        bridge = SimulatorBridge(BALL, args=["--agents", "32", "--max-steps", "100"], seed=3,
                                 worker_id=worker_id, frames=frames)
        runners[frames] = EpisodeRunner(UnityAdapter(bridge), settings(worker_id), config)
    times = {True: [], False: []}
    same = True
    try:
        for runner in runners.values():
            runner.evaluate(genomes)   # warm-up: launch and first compile
        for rep in range(reps):
            returns = {}
            for frames in (True, False) if rep % 2 else (False, True):   # each first in turn
                runner = runners[frames]
                started = time.perf_counter()
                returns[frames], _ = runner.evaluate(genomes, generation=rep)
                times[frames].append(time.perf_counter() - started)
            same &= returns[True] == returns[False]
    finally:
        for runner in runners.values():
            runner.environment.close()
    return {"with": statistics.median(times[True]), "without": statistics.median(times[False]), "same": same}


def recording_cost(genome, config, reps: int) -> tuple[dict, list]:
    """(b): median seconds of one episode with a picture at each decision and without; its frames."""
    with EnvEvaluator.from_settings(settings(600)) as evaluator:
        environment = evaluator.environment
        plain, pictured, steps, frames = [], [], 0, []

        def decided(behavior, agents, genomes):
            for agent in agents.tolist():
                environment.capture(behavior, agent)

        evaluator.play_episodes(genome, config)   # warm-up: launch
        for _ in range(reps):
            started = time.perf_counter()
            evaluator.play_episodes(genome, config)
            plain.append(time.perf_counter() - started)
            started = time.perf_counter()
            _, stats = evaluator.play_episodes(genome, config, on_decisions=decided)
            frames = environment.take_frames().images
            pictured.append(time.perf_counter() - started)
            steps = stats.scored[BEHAVIOR].lengths[0]
    return {"plain": statistics.median(plain), "pictured": statistics.median(pictured), "steps": steps}, frames


def png_cost(frames: list) -> dict:
    """(c): per frame, PNG encode and decode (ms) and size (bytes) at compress levels 1 and 6."""
    from PIL import Image
    found = {}
    for level in (1, 6):
        encode, decode, sizes = [], [], []
        for frame in frames:
            started = time.perf_counter()
            out = io.BytesIO()
            Image.fromarray(frame).save(out, format="PNG", compress_level=level)
            encode.append(time.perf_counter() - started)
            sizes.append(len(out.getvalue()))
            started = time.perf_counter()
            np.asarray(Image.open(io.BytesIO(out.getvalue())).convert("RGB"))
            decode.append(time.perf_counter() - started)
        found[level] = (statistics.median(encode) * 1e3, statistics.median(decode) * 1e3, statistics.median(sizes))
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=9)
    args = parser.parse_args()
    config, genomes = realistic(64, seed=2)
    print(f"{os.cpu_count()} cores, median of {args.reps}\n")
    cost = generation_cost(genomes, config, args.reps)
    print("(a) a ball generation (32 agents, 64 genomes, 100 decisions) that records nothing\n")
    print("| Frames channel | seconds | ratio |\n|---|---|---|")
    print(f"| not registered | {cost['without']:.3f} | 1.00 |")
    print(f"| registered | {cost['with']:.3f} | {cost['with'] / cost['without']:.3f} |")
    print(f"\nreturns the same with and without: {cost['same']}\n")
    episode, frames = recording_cost(genomes[0], config, args.reps)
    extra = (episode["pictured"] - episode["plain"]) / episode["steps"] * 1e3
    print(f"(b) one ball episode of {episode['steps']} decisions: {episode['plain'] * 1e3:.1f} ms played, "
          f"{episode['pictured'] * 1e3:.1f} ms with a raw 256x256 frame per decision: {extra:.3f} ms per frame "
          f"(drawing, 196,608 bytes on the wire, decoding)\n")
    print("(c) the same frames as PNG (Pillow), per frame\n")
    print("| compress level | encode (game) ms | decode (Python) ms | bytes |\n|---|---|---|---|")
    for level, (encode, decode, size) in png_cost(frames).items():
        print(f"| {level} | {encode:.3f} | {decode:.3f} | {size:,.0f} |")


if __name__ == "__main__":
    main()
