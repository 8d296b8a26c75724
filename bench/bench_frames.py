"""Benchmark: what pictures of agents cost (neatpar/envs/unity/frames.py, neatpar/episodes/recording.py).

(a) A generation that records nothing: the ball build (32 agents, 64 realistic genomes, 100
    decisions an episode, seeded), played by the episode runner through a bridge with the Frames
    side channel registered and through one without, alternately, same seed: median and fastest
    seconds of each and their ratios; the returns must be the same. Then what registering the channel adds to
    a step at all: the side-channel manager's work of a step (the messages to send, the reply's to
    read, none of them the channel's), with and without it, timed alone.
(b) A recorded episode against the same episode played (EnvEvaluator.play_episodes, with and
    without the runner's on_decisions hook taking a picture at every decision), on the probe build
    (episodes of exactly 300 decisions): the cost of one frame of 256 x 256 sent raw (196,608
    bytes) over the loopback wire, and of that the drawing (the probe's and the ball's frame, timed
    alone in this process).
(c) Ball frames (the task stepped with random actions) encoded as PNG (Pillow, compress level 1
    and 6) and decoded again: what a PNG frame would cost the game and Python instead, and its size.
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
from stock_env import BUILDS, ROOT  # noqa: E402

sys.path.append(BUILDS)

from neatpar.processes import cpu_count  # noqa: E402
from neatpar.envs.unity.adapter import UnityAdapter  # noqa: E402
from neatpar.envs.unity.bridge import SimulatorBridge  # noqa: E402
from neatpar.episodes.env_evaluator import EnvEvaluator  # noqa: E402
from neatpar.episodes.runner import EpisodeRunner  # noqa: E402
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
    return {"with": (statistics.median(times[True]), min(times[True])),
            "without": (statistics.median(times[False]), min(times[False])), "same": same}


def manager_cost(steps: int = 200_000) -> dict:
    """(a): microseconds of a step's side-channel work (generate and process, nothing queued or
    received) with the bridge's channels, with and without the Frames channel."""
    from mlagents_envs.side_channel.engine_configuration_channel import EngineConfigurationChannel
    from mlagents_envs.side_channel.environment_parameters_channel import EnvironmentParametersChannel
    from mlagents_envs.side_channel.side_channel_manager import SideChannelManager
    from mlagents_envs.side_channel.stats_side_channel import StatsSideChannel

    from neatpar.envs.unity.frames import FrameChannel
    found = {}
    for frames in (False, True):
        channels = [EngineConfigurationChannel(), EnvironmentParametersChannel(), StatsSideChannel()]
        manager = SideChannelManager(channels + ([FrameChannel()] if frames else []))
        started = time.perf_counter()
        for _ in range(steps):
            manager.generate_side_channel_messages()
            manager.process_side_channel_message(b"")
        found[frames] = (time.perf_counter() - started) / steps * 1e6
    return found


def probe_settings() -> Settings:
    return Settings.create({"env": os.path.join(ROOT, "unity_builds", "probe"),
                            "env_args": "--agents 2 --obs 8 --discrete 2 --episode-decisions 300",
                            "behaviors": "Probe?team=0: population", "max_steps": 400, "seed": 3, "worker_id": 600})


def recording_cost(genome, config, reps: int) -> dict:
    """(b): median seconds of one probe episode with a picture at each decision and without."""
    with EnvEvaluator.from_settings(probe_settings()) as evaluator:
        environment = evaluator.environment
        plain, pictured, steps = [], [], 0

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
            assert len(environment.take_frames().images) == 300
            pictured.append(time.perf_counter() - started)
            steps = stats.scored["Probe?team=0"].lengths[0]
    return {"plain": statistics.median(plain), "pictured": statistics.median(pictured), "steps": steps}


def drawing_cost(name: str, frames: int = 300) -> tuple[float, list]:
    """Milliseconds to draw one frame of a task stepped with random actions, and the frames."""
    from neatpar_sim.tasks import TASKS
    rng = np.random.default_rng(5)
    task = TASKS[name]({"agents": 1} if name == "ball" else {"agents": 1, "obs": 8, "discrete": 2}, rng)
    behavior = task.behaviors[0]
    everyone = {behavior.name: np.ones(1, bool)}
    drawn, seconds = [], 0.0
    for _ in range(frames):
        actions = {behavior.name: (rng.uniform(-1, 1, (1, behavior.continuous)).astype(np.float32),
                                   rng.integers(0, 2, (1, len(behavior.branches))).astype(np.int32))}
        result = task.step(actions, everyone, everyone)[behavior.name]
        task.restart({behavior.name: np.flatnonzero(result.done)})
        started = time.perf_counter()
        drawn.append(task.render(behavior.name, 0))
        seconds += time.perf_counter() - started
    return seconds / frames * 1e3, drawn


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
    print(f"{cpu_count()} cores, median of {args.reps}\n")
    cost = generation_cost(genomes, config, args.reps)
    print("(a) a ball generation (32 agents, 64 genomes, 100 decisions) that records nothing\n")
    (median, fastest), (median_with, fastest_with) = cost["without"], cost["with"]
    print("| Frames channel | median s | ratio | fastest s | ratio |\n|---|---|---|---|---|")
    print(f"| not registered | {median:.3f} | 1.00 | {fastest:.3f} | 1.00 |")
    print(f"| registered | {median_with:.3f} | {median_with / median:.3f} | {fastest_with:.3f} | "
          f"{fastest_with / fastest:.3f} |")
    print(f"\nreturns the same with and without: {cost['same']}")
    work = manager_cost()
    print(f"a step's side-channel work: {work[False]:.2f} us without the channel, {work[True]:.2f} us with it\n")
    episode = recording_cost(genomes[0], config, args.reps)
    extra = (episode["pictured"] - episode["plain"]) / episode["steps"] * 1e3
    probe_draw, _ = drawing_cost("probe")
    ball_draw, frames = drawing_cost("ball")
    print(f"(b) one probe episode of {episode['steps']} decisions: {episode['plain'] * 1e3:.1f} ms played, "
          f"{episode['pictured'] * 1e3:.1f} ms with a raw 256x256 frame per decision: {extra:.3f} ms per frame, "
          f"of which drawing {probe_draw:.3f} ms (a ball frame: {ball_draw:.3f} ms); the rest, "
          f"{extra - probe_draw:.3f} ms, is the request, 196,608 bytes on the wire and the decoding\n")
    print("(c) ball frames as PNG (Pillow), per frame\n")
    print("| compress level | encode (game) ms | decode (Python) ms | bytes |\n|---|---|---|---|")
    for level, (encode, decode, size) in png_cost(frames).items():
        print(f"| {level} | {encode:.3f} | {decode:.3f} | {size:,.0f} |")


if __name__ == "__main__":
    main()
