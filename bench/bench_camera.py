"""Benchmark: time to solve the camera build (neatpar_sim/camera.py: reach a target seen only
through a 16 x 16 RGB camera), HyperNEAT (configs/camera.cfg) against direct NEAT
(configs/camera-direct.cfg) with the same budget: the same population, episodes, agents and
generations, over several seeds, each run a real `neatpar evolve` on the real build.

For each run: the first generation whose best genome's fitness (the mean of its episodes) reaches
the task's SOLVED return, the wall time until then, the best fitness of the run, and the winner's
mean return over --episodes fresh episodes (`neatpar play`): the task counts as solved when that is
at least SOLVED.

Usage: nice -n 19 python bench/bench_camera.py [--seeds 1 2 3 4 5] [--generations G] [--episodes E] [--jobs J]
(--jobs: runs at once, each its own `neatpar evolve`; the times then include their sharing the cores)
"""
import argparse
import concurrent.futures
import csv
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)
sys.path.append(os.path.join(ROOT, "unity_builds"))   # the simulators' package, neatpar_sim

from neatpar_sim.camera import SOLVED  # noqa: E402

CONFIGS = {"HyperNEAT": "camera.cfg", "direct NEAT": "camera-direct.cfg"}


def neatpar(*args: str) -> str:
    result = subprocess.run([sys.executable, "-m", "neatpar", *args], capture_output=True, text=True, cwd=ROOT)
    if result.returncode != 0:
        raise SystemExit(f"neatpar {' '.join(args)} failed: {result.stderr.strip()}")
    return result.stdout


def one_run(method: str, seed: int, generations: int, episodes: int, folder: str) -> dict:
    config = os.path.join(ROOT, "configs", CONFIGS[method])
    out = os.path.join(folder, f"{method.replace(' ', '-')}-{seed}")
    started = time.perf_counter()
    neatpar("evolve", "--config", config, "--out", out, "--seed", str(seed), "--generations", str(generations),
            "--quiet")
    seconds = time.perf_counter() - started
    with open(os.path.join(out, "stats.csv")) as f:
        rows = list(csv.DictReader(f))
    elapsed, solved_at, solved_seconds = 0.0, None, None
    for row in rows:
        elapsed += float(row["seconds"])
        if solved_at is None and float(row["best_fitness"]) >= SOLVED:
            solved_at, solved_seconds = int(row["generation"]), elapsed
    played = neatpar("play", "--config", config, "--genome", os.path.join(out, "winner.json"), "--episodes",
                     str(episodes))
    mean = float(re.search(r"mean return (-?[0-9.]+)", played).group(1))
    return {"best": max(float(r["best_fitness"]) for r in rows), "solved_at": solved_at,
            "solved_seconds": solved_seconds, "seconds": seconds, "winner_mean": mean}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3, 4, 5])
    parser.add_argument("--generations", type=int, default=48)
    parser.add_argument("--episodes", type=int, default=64, help="episodes of the winner's check (neatpar play)")
    parser.add_argument("--jobs", type=int, default=1, help="runs at once")
    args = parser.parse_args()
    results = {m: [] for m in CONFIGS}
    with tempfile.TemporaryDirectory() as folder, concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        runs = [(seed, method) for seed in args.seeds for method in CONFIGS]
        futures = [pool.submit(one_run, method, seed, args.generations, args.episodes, folder) for seed, method in runs]
        for (seed, method), future in zip(runs, futures):
            r = future.result()
            results[method].append(r)
            print(f"{method:12s} seed {seed}: best fitness {r['best']:.3f}, first generation >= {SOLVED}: "
                  f"{r['solved_at']}, winner's mean return {r['winner_mean']:.3f}, run {r['seconds']:.1f} s",
                  flush=True)
    print(f"\n| method | seeds solved (winner's mean return >= {SOLVED}) | generation first >= {SOLVED} (median) | "
          f"time to it (median) | winner's mean return (median) | best fitness (median) | run time (median) |")
    print("|---|---|---|---|---|---|---|")
    for method, runs in results.items():
        reached = [r for r in runs if r["solved_at"] is not None]
        gen = statistics.median(r["solved_at"] for r in reached) if reached else None
        sec = statistics.median(r["solved_seconds"] for r in reached) if reached else None
        print(f"| {method} | {sum(r['winner_mean'] >= SOLVED for r in runs)}/{len(runs)} | "
              f"{'-' if gen is None else f'{gen:g} ({len(reached)}/{len(runs)} runs)'} | "
              f"{'-' if sec is None else f'{sec:.1f} s'} | {statistics.median(r['winner_mean'] for r in runs):.3f} | "
              f"{statistics.median(r['best'] for r in runs):.3f} | "
              f"{statistics.median(r['seconds'] for r in runs):.1f} s |")


if __name__ == "__main__":
    main()
