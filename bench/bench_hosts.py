"""Benchmark: generation wall time with N simulators (`envs = N`) against one simulator in the main
process (`envs = 1`), measured in one run, for several shapes of game: agents per simulator below,
equal to and above population / N.

The population is realistic evolved genomes (bench/realistic_genomes.py) on a light game: the probe
build (8 constant observations, a discrete branch of 2; every episode exactly --episode decisions,
so a generation is a known amount of work), or the ball build (--game ball: episodes end when the
ball falls, mostly early for these untrained genomes). For each shape and N, one warm-up
generation (which launches the simulators and counts the agents) and then GENERATIONS measured
ones; the table shows the median generation time, its ratio to envs = 1 of the same shape, and the
scored agent-steps per second (the decisions of genomes being evaluated: the work a generation
needs). With --ray, N = 2 also runs as Ray actors.
Usage: python bench/bench_hosts.py [--genomes 256] [--agents 64,128,256] [--envs 2] [--game probe|ball] [--ray]
"""
import argparse
import dataclasses
import os
import random
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from realistic_genomes import realistic  # noqa: E402
from stock_env import ROOT  # noqa: E402

from neatpar.processes import cpu_count  # noqa: E402
from neatpar.episodes.env_evaluator import UnityEvaluator  # noqa: E402
from neatpar.config.behaviors import BehaviorRole  # noqa: E402
from neatpar.config.settings_model import Settings  # noqa: E402

GENERATIONS = 3


def game(name: str, agents: int, episode: int) -> tuple[str, tuple[str, ...], str]:
    """(build, its arguments, the population's behavior) of a shape."""
    if name == "ball":
        return "ball", ("--agents", str(agents), "--max-steps", str(episode)), "Ball3D?team=0"
    return "probe", ("--agents", str(agents), "--obs", "8", "--discrete", "2", "--episode-decisions",
                     str(episode)), "Probe?team=0"


def measure(settings: Settings, config, genomes) -> tuple[float, float]:
    """(median generation seconds, scored agent-steps per second) after one warm-up generation."""
    pairs = [(g.key, g) for g in genomes]
    with UnityEvaluator.from_settings(settings) as evaluator:
        evaluator.evaluate(pairs, config)
        seconds, steps = [], 0
        for _ in range(GENERATIONS):
            evaluator.evaluate(pairs, config)
            seconds.append(evaluator.last_stats.seconds)
            steps += evaluator.last_stats.scored_steps
    return statistics.median(seconds), steps / sum(seconds)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--genomes", type=int, default=256)
    parser.add_argument("--agents", default="64,128,256", help="agents per simulator, comma-separated")
    parser.add_argument("--envs", default="2", help="simulator counts to compare with 1, comma-separated")
    parser.add_argument("--episode", type=int, default=200, help="decisions per episode (max_steps)")
    parser.add_argument("--game", choices=("probe", "ball"), default="probe")
    parser.add_argument("--ray", action="store_true", help="also run the env hosts as Ray actors")
    args = parser.parse_args()
    config, genomes = realistic(args.genomes, seed=2)
    print(f"{cpu_count()} cores; population {args.genomes}, {args.game} build, {args.episode} decisions per "
          f"episode{' at most' if args.game == 'ball' else ''}; median of {GENERATIONS} generations\n")
    print("| agents per simulator | envs | where | generation time | vs envs = 1 | scored agent-steps/s |")
    print("|---|---|---|---|---|---|")
    for agents in (int(a) for a in args.agents.split(",")):
        build, build_args, behavior = game(args.game, agents, args.episode)
        base = Settings(env=os.path.join(ROOT, "unity_builds", build), behaviors=(BehaviorRole(behavior, "population"),),
                        env_args=build_args, max_steps=args.episode, seed=1, worker_id=random.randint(2000, 4000))
        baseline, rate = measure(base, config, genomes)
        print(f"| {agents} | 1 | main process | {baseline:.2f} s | 1.00x | {rate:,.0f} |", flush=True)
        for envs in (int(e) for e in args.envs.split(",")):
            for backend in ["local"] + (["ray"] if args.ray else []):
                seconds, rate = measure(dataclasses.replace(base, envs=envs, backend=backend), config, genomes)
                print(f"| {agents} | {envs} | {backend} hosts | {seconds:.2f} s | {seconds / baseline:.2f}x | "
                      f"{rate:,.0f} |", flush=True)


if __name__ == "__main__":
    main()
