"""Benchmark: how a run's winner holds up on fresh episodes, chosen by today's rule (the best
training fitness seen, `--winner-episodes 0`) against the default check on fresh episodes
(winner_candidates, winner_episodes, winner_interval; episodes/validation.py), on the noisy camera
build (random starts) and the maze, several seeds each, each run a real `neatpar evolve`.

Both rules train the same population (the check plays no training episode and draws nothing from
the run's random state): the script verifies that their stats.csv's training columns are equal,
then plays each winner on --episodes fresh episodes (`neatpar play`) and prints, per run, the
winner's recorded score (its training fitness; under the check also its fresh score), what it plays,
and the share of the run's time the checks took (the checked run's extra wall time over its wall
time: the runs are otherwise the same).

Usage: nice -n 19 python bench/bench_winners.py [--seeds 1 2 3 4 5] [--tasks camera maze]
       [--generations camera=48 maze=30] [--episodes 64]
"""
import argparse
import csv
import json
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

CONFIGS = {"camera": "camera.cfg", "maze": "maze.cfg"}
RULES = {"best training fitness": ["--winner-episodes", "0"], "checked on fresh episodes": []}
TRAINING = ("generation", "best_fitness", "mean_fitness", "stdev_fitness", "species", "episodes", "scored_steps",
            "mean_return")


def neatpar(*args: str) -> str:
    result = subprocess.run([sys.executable, "-m", "neatpar", *args], capture_output=True, text=True, cwd=ROOT)
    if result.returncode != 0:
        raise SystemExit(f"neatpar {' '.join(args)} failed: {result.stderr.strip()}")
    return result.stdout


def one_run(task: str, rule: str, seed: int, generations: int, episodes: int, folder: str) -> dict:
    config = os.path.join(ROOT, "configs", CONFIGS[task])
    out = os.path.join(folder, f"{task}-{seed}-{len(RULES[rule])}")
    started = time.perf_counter()
    neatpar("evolve", "--config", config, "--out", out, "--seed", str(seed), "--generations", str(generations),
            "--quiet", *RULES[rule])
    wall = time.perf_counter() - started
    with open(os.path.join(out, "stats.csv")) as f:
        rows = list(csv.DictReader(f))
    with open(os.path.join(out, "winner.json")) as f:
        winner = json.load(f)
    played = neatpar("play", "--config", config, "--genome", os.path.join(out, "winner.json"), "--episodes",
                     str(episodes))
    returns = [float(r) for r in re.search(r"^returns: (.*)$", played, re.M).group(1).split()]
    return {"training": [{k: r[k] for k in TRAINING} for r in rows], "fitness": winner["fitness"],
            "fresh": winner.get("fresh"), "played": statistics.fmean(returns),
            "noise": statistics.stdev(returns) / math.sqrt(len(returns)), "seconds": wall}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3, 4, 5])
    parser.add_argument("--tasks", nargs="+", default=list(CONFIGS), choices=list(CONFIGS))
    parser.add_argument("--generations", nargs="+", default=["camera=48", "maze=30"], help="TASK=N")
    parser.add_argument("--episodes", type=int, default=64, help="fresh episodes each winner plays (neatpar play)")
    args = parser.parse_args()
    generations = {k: int(v) for k, v in (g.split("=") for g in args.generations)}
    table = []
    with tempfile.TemporaryDirectory() as folder:
        for task in args.tasks:
            for seed in args.seeds:
                runs = {rule: one_run(task, rule, seed, generations[task], args.episodes, folder) for rule in RULES}
                today, checked = runs.values()
                if today["training"] != checked["training"]:
                    raise SystemExit(f"{task} seed {seed}: the two rules trained different populations")
                # the same training: what the checked run took more is its checks (the final one included)
                checked["share"] = max(0.0, checked["seconds"] - today["seconds"]) / checked["seconds"]
                today["share"] = 0.0
                for rule, r in runs.items():
                    recorded = r["fitness"] if r["fresh"] is None else r["fresh"]["fitness"]
                    table.append((task, seed, rule, r))
                    print(f"{task} seed {seed}, {rule}: training fitness {r['fitness']:.3f}, recorded {recorded:.3f}, "
                          f"plays {r['played']:.3f} +- {r['noise']:.3f} on {args.episodes} fresh episodes, checks "
                          f"{r['share']:.1%} of {r['seconds']:.0f} s", flush=True)
    print(f"\n| task | seed | winner by | its training fitness | its fresh score (episodes) | plays on "
          f"{args.episodes} fresh episodes | recorded minus played | checks' share of the run's time |")
    print("|---|---|---|---|---|---|---|---|")
    for task, seed, rule, r in table:
        fresh = "-" if r["fresh"] is None else f"{r['fresh']['fitness']:.3f} ({r['fresh']['episodes']})"
        recorded = r["fitness"] if r["fresh"] is None else r["fresh"]["fitness"]
        print(f"| {task} | {seed} | {rule} | {r['fitness']:.3f} | {fresh} | {r['played']:.3f} +- {r['noise']:.3f} | "
              f"{recorded - r['played']:+.3f} | {r['share']:.1%} |")
    print(f"\n| task | winner by | mean of the winners' returns on {args.episodes} fresh episodes | "
          f"largest recorded minus played | checks' share (mean) |")
    print("|---|---|---|---|---|")
    for task in args.tasks:
        for rule in RULES:
            rs = [r for t, _, u, r in table if t == task and u == rule]
            gaps = [(r["fitness"] if r["fresh"] is None else r["fresh"]["fitness"]) - r["played"] for r in rs]
            print(f"| {task} | {rule} | {statistics.fmean(r['played'] for r in rs):.3f} | {max(gaps):+.3f} | "
                  f"{statistics.fmean(r['share'] for r in rs):.1%} |")


if __name__ == "__main__":
    main()
