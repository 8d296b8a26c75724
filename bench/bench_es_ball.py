"""Benchmark: ES-HyperNEAT against fixed-substrate HyperNEAT on the ball build (neatpar_sim's
Ball3D: keep a ball on a tilting platform, +0.1 a step, -1 and the end when it falls), the same
budget for both: the same CPPN genome settings, population, generations, episodes and agents,
over several seeds, each run a real `neatpar evolve` on the real build.

Both substrates have the ball's 8 observations on a line at y = -1 and its 2 actions at y = 1
(HyperNEAT's default layout). HyperNEAT adds a hand-laid hidden line of 8 nodes at y = 0
(`substrate_hidden = 8`, every input to every hidden node to every output); ES-HyperNEAT lets
each CPPN's quadtree search place hidden nodes and links (PUREPLES' parameters, tanh nodes as
HyperNEAT's; and again with es_band_threshold = 0.1, which keeps more links). For each run: the
best fitness (a genome's mean return over its episodes), the first generation whose best genome
reached --target (every episode kept to the end), and the winner's mean return over --episodes
fresh episodes (`neatpar play`).

Usage: nice -n 19 python bench/bench_es_ball.py [--seeds 1 2 3 4 5] [--generations G] [--pop N]
       [--max-steps S] [--target T] [--episodes E]
"""
import argparse
import configparser
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

# The CPPN (5 inputs: x1, y1, x2, y2, 1.0; the weight), HyperNEAT's usual functions, for both kinds.
CPPN = {"num_inputs": "5", "num_outputs": "1", "num_hidden": "0", "activation_default": "tanh",
        "activation_options": "tanh sin gauss sigmoid abs identity", "activation_mutate_rate": "0.2",
        "node_add_prob": "0.2", "conn_add_prob": "0.5"}
METHODS = {"HyperNEAT (hidden line of 8)": {"network": "hyperneat", "substrate_hidden": "8",
                                             "hyperneat_activation": "tanh"},
           "ES-HyperNEAT": {"network": "es-hyperneat", "es_activation": "tanh"},
           "ES-HyperNEAT (band 0.1)": {"network": "es-hyperneat", "es_activation": "tanh", "es_band_threshold": "0.1"}}


def neatpar(*args: str) -> str:
    result = subprocess.run([sys.executable, "-m", "neatpar", *args], capture_output=True, text=True, cwd=ROOT)
    if result.returncode != 0:
        raise SystemExit(f"neatpar {' '.join(args)} failed: {result.stderr.strip()}")
    return result.stdout


def write_config(method: str, args, folder: str) -> str:
    """configs/ball.cfg with the CPPN genome, the method's network keys and the budget."""
    config = configparser.ConfigParser(inline_comment_prefixes=("#",))
    config.read(os.path.join(ROOT, "configs", "ball.cfg"))
    config["NEAT"].update({"pop_size": str(args.pop), "fitness_threshold": str(args.target)})
    config["DefaultGenome"].update(CPPN)
    config["neatpar"].update({"env": os.path.join(ROOT, "unity_builds", "ball"), "max_steps": str(args.max_steps),
                              "env_args": f"--agents {args.agents} --max-steps {args.max_steps}",
                              "episodes_per_genome": str(args.episodes_per_genome), "video_interval": "0",
                              "checkpoint_interval": str(args.generations), **METHODS[method]})
    path = os.path.join(folder, f"method-{list(METHODS).index(method)}.cfg")
    with open(path, "w") as f:
        config.write(f)
    return path


def one_run(method: str, config: str, seed: int, args, folder: str) -> dict:
    out = os.path.join(folder, f"method-{list(METHODS).index(method)}-{seed}")
    started = time.perf_counter()
    neatpar("evolve", "--config", config, "--out", out, "--seed", str(seed), "--generations", str(args.generations),
            "--quiet")
    seconds = time.perf_counter() - started
    with open(os.path.join(out, "stats.csv")) as f:
        rows = list(csv.DictReader(f))
    reached = [int(r["generation"]) for r in rows if float(r["best_fitness"]) >= args.target]
    played = neatpar("play", "--config", config, "--genome", os.path.join(out, "winner.json"), "--episodes",
                     str(args.episodes))
    returns = [float(r) for r in re.search(r"^returns: (.*)$", played, re.M).group(1).split()]
    return {"best": max(float(r["best_fitness"]) for r in rows), "reached": reached[0] if reached else None,
            "winner": statistics.fmean(returns), "seconds": seconds}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3, 4, 5])
    parser.add_argument("--generations", type=int, default=12)
    parser.add_argument("--pop", type=int, default=40)
    parser.add_argument("--agents", type=int, default=32)
    parser.add_argument("--max-steps", type=int, default=250)
    parser.add_argument("--episodes-per-genome", type=int, default=3)
    parser.add_argument("--target", type=float, default=24.9, help="the fitness a run should reach")
    parser.add_argument("--episodes", type=int, default=32, help="episodes of the winner's check (neatpar play)")
    args = parser.parse_args()
    print(f"ball build: population {args.pop}, {args.generations} generations, {args.episodes_per_genome} episodes "
          f"of at most {args.max_steps} steps per genome on {args.agents} agents; target {args.target}; winners "
          f"played on {args.episodes} fresh episodes", flush=True)
    results = {m: {} for m in METHODS}
    with tempfile.TemporaryDirectory() as folder:
        configs = {m: write_config(m, args, folder) for m in METHODS}
        for seed in args.seeds:
            for method in METHODS:
                r = results[method][seed] = one_run(method, configs[method], seed, args, folder)
                print(f"{method:30s} seed {seed}: best fitness {r['best']:.2f}, first generation >= {args.target}: "
                      f"{r['reached']}, winner's mean return {r['winner']:.2f}, run {r['seconds']:.0f} s", flush=True)
    names = list(METHODS)
    print("\n| seed | " + " | ".join(f"{m}: best fitness | generation >= {args.target} | winner" for m in names) + " |")
    print("|---|" + "---|---|---|" * len(names))
    for seed in args.seeds:
        cells = [f"{r['best']:.2f} | {'-' if r['reached'] is None else r['reached']} | {r['winner']:.2f}"
                 for r in (results[m][seed] for m in names)]
        print(f"| {seed} | " + " | ".join(cells) + " |")
    print("| median | " + " | ".join(
        f"{statistics.median(r['best'] for r in results[m].values()):.2f} | "
        f"{sum(r['reached'] is not None for r in results[m].values())}/{len(args.seeds)} reached | "
        f"{statistics.median(r['winner'] for r in results[m].values()):.2f}" for m in names) + " |")
    for m in names:
        print(f"{m}: run time median {statistics.median(r['seconds'] for r in results[m].values()):.0f} s")


if __name__ == "__main__":
    main()
