"""Benchmark: agent-steps per second of a generation with N simulators (`envs = N`), N = 1 up to a
few past the cores this machine has, each simulator with the same number of agents, measured in
one run; the ratio is against N = 1 (one simulator in the main process) of the same run.

The population is realistic evolved genomes (bench/realistic_genomes.py) on the ball build; each
N evaluates one warm-up generation (which launches the simulators) and then GENERATIONS measured
ones. With --ray, N = 2 up to the cores also run as Ray actors on a local Ray instance.
Usage: python bench/bench_hosts.py [--genomes 512] [--agents 64] [--max-envs N] [--ray]
"""
import argparse
import dataclasses
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from realistic_genomes import realistic  # noqa: E402
from stock_env import ROOT  # noqa: E402

from neatpar.settings import BehaviorRole, Settings  # noqa: E402
from neatpar.run.evaluator import UnityEvaluator  # noqa: E402

GENERATIONS = 2


def measure(run: Settings, config, genomes) -> float:
    """Agent-steps per second over GENERATIONS generations, after one warm-up generation."""
    pairs = [(g.key, g) for g in genomes]
    with UnityEvaluator.from_settings(run) as evaluator:
        evaluator.evaluate(pairs, config)
        steps = seconds = 0.0
        for _ in range(GENERATIONS):
            evaluator.evaluate(pairs, config)
            steps += evaluator.last_stats.agent_steps
            seconds += evaluator.last_stats.seconds
    return steps / seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--genomes", type=int, default=512)
    parser.add_argument("--agents", type=int, default=64, help="agents per simulator")
    parser.add_argument("--max-steps", type=int, default=200)
    parser.add_argument("--max-envs", type=int, default=(os.cpu_count() or 1) + 2)
    parser.add_argument("--ray", action="store_true", help="also run the env hosts as Ray actors")
    args = parser.parse_args()
    config, genomes = realistic(args.genomes, seed=2)
    base = Settings(env=os.path.join(ROOT, "unity_builds", "ball"), behaviors=(BehaviorRole("Ball3D?team=0", "population"),),
                    env_args=("--agents", str(args.agents), "--max-steps", str(args.max_steps)),
                    max_steps=args.max_steps, seed=1, worker_id=random.randint(2000, 4000))
    backends = ["local"] + (["ray"] if args.ray else [])
    print(f"{os.cpu_count()} cores; {args.genomes} genomes, {args.agents} agents per simulator, "
          f"max {args.max_steps} steps per episode\n")
    print("| envs | backend | agent-steps/s | vs envs = 1 |")
    print("|---|---|---|---|")
    baseline = None
    for envs in range(1, args.max_envs + 1):
        for backend in backends:
            if backend == "ray" and not 2 <= envs <= (os.cpu_count() or 1):
                continue  # an actor reserves a CPU of the local Ray instance
            run = dataclasses.replace(base, envs=envs, backend=backend)
            rate = measure(run, config, genomes)
            baseline = baseline or rate
            where = "main process" if envs == 1 else backend
            print(f"| {envs} | {where} | {rate:,.0f} | {rate / baseline:.2f}x |", flush=True)


if __name__ == "__main__":
    main()
