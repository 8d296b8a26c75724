"""Study: the deceptive maze (neatpar_sim/maze.py) solved by NEAT selected on fitness, novelty,
novelty+fitness and MAP-Elites, over several seeds at the same budget of evaluations.

The maze task object is driven in process (no Unity protocol): each generation's genomes are
compiled into one population kernel (neatpar.nn.FeedForwardPopulation) and every robot of the
generation drives its own copy of the maze at once, one kernel call per step. A genome's outcome is
its episode's reward (closeness to the goal at the end, 1 for reaching it) and, as descriptor, its
final observation's last two values, the robot's position (`final_observation[10:12]`, read through
the search package's DescriptorAccumulator). neat-python's Population runs each search with
neatpar's NEAT-step classes (configs/maze.cfg's sections), MAP-Elites with its own reproduction.
A run stops at its first solution (a genome reaching the goal) or at the budget.

Prints, per search: runs solved of the seeds, median evaluations to the first solution (over the
solved runs), the mean best fitness; for MAP-Elites, coverage and QD-score per generation (mean
over seeds). Seeds run in `--processes` worker processes.
Usage: python bench/bench_maze.py [--seeds 10] [--generations 100] [--processes 2] [--searches a,b]
                                  [--heat-map archive.png]
"""
from __future__ import annotations

import argparse
import dataclasses
import multiprocessing
import os
import statistics
import sys
import time

import neat
import numpy as np

import neatpar
from neatpar.nn import FeedForwardPopulation
from neatpar.search import DescriptorAccumulator, Outcome, make_search, parse_descriptor, reproduction_type
from neatpar.search.archive_files import archive_png

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.append(os.path.join(ROOT, "unity_builds"))   # the simulators' package, neatpar_sim
from neatpar_sim.maze import Maze  # noqa: E402
CONFIG = os.path.join(ROOT, "configs", "maze.cfg")
NAME = "Maze?team=0"
STEPS = 400
DESCRIPTOR = "final_observation[10:12]"
SEARCH_SETTINGS = dict(novelty_k=15, novelty_threshold=0.1, novelty_weight=0.5,
                       descriptor_bounds="-1 1, -1 1", descriptor_bins="10 10", map_elites_crossover=0.5,
                       qd_offset=0.0)


def play(genomes, config) -> dict[int, Outcome]:
    """One episode per genome, all at once; the outcomes by genome key."""
    keys = [key for key, _ in genomes]
    n = len(keys)
    task = Maze({"agents": n, "max_steps": STEPS}, np.random.default_rng(0))
    kernel = FeedForwardPopulation.create(genomes, config)
    spec = parse_descriptor(DESCRIPTOR).bind(task.behaviors[0].observations)
    descriptors = DescriptorAccumulator(spec, n)
    playing = np.ones(n, bool)
    fitness = np.zeros(n)
    final = np.zeros((n, spec.width))
    rows = np.arange(n)
    observations = task.observe(NAME)
    while playing.any():
        descriptors.decide(rows[playing], observations[playing])
        actions = kernel.activate(observations).astype(np.float32)
        result = task.step({NAME: (actions, None)}, {NAME: playing.copy()}, {NAME: playing.copy()})[NAME]
        observations = task.observe(NAME)
        ended = playing & result.done
        fitness[ended] = result.reward[ended]
        final[ended] = descriptors.end(rows[ended], observations[ended])
        playing &= ~ended
    return {key: Outcome(float(f), d) for key, f, d in zip(keys, fitness, final)}


@dataclasses.dataclass
class RunResult:
    search: str
    seed: int
    solved_at: int | None          # evaluations up to and including the first solution's generation
    best_fitness: float
    coverage: list[float]
    qd_score: list[float]
    seconds: float
    heat_map: bytes | None = None  # MAP-Elites: archive.png of the run's final archive


class Solved(Exception):
    """The first solution: the run stops."""


def run(search_name: str, seed: int, generations: int) -> RunResult:
    """One evolution of `generations` at most; stops at the first genome that reaches the goal."""
    start = time.perf_counter()
    config = neat.Config(neatpar.Genome, reproduction_type(search_name, neatpar.Reproduction), neatpar.SpeciesSet,
                         neat.DefaultStagnation, CONFIG)
    config.no_fitness_termination = True
    population = neat.Population(config, seed=seed)
    search = make_search(search_name, seed=seed, **SEARCH_SETTINGS)
    if search_name == "map-elites":
        search.attach(population)
    history, evaluations = [], [0]

    def evaluate(genomes, config):
        outcomes = play(genomes, config)
        history.append(search.score(genomes, outcomes, len(history)))
        evaluations[0] += len(genomes)
        if history[-1].best_fitness >= 1.0:
            raise Solved

    try:
        population.run(evaluate, generations)
        solved_at = None
    except Solved:
        solved_at = evaluations[0]
    heat_map = archive_png(search.archive) if search_name == "map-elites" else None
    return RunResult(search_name, seed, solved_at, search.best.fitness, [s.coverage for s in history],
                     [s.qd_score for s in history], time.perf_counter() - start, heat_map)


def _run(args) -> RunResult:
    return run(*args)


def report(results: list[RunResult], seeds: int, budget: int) -> None:
    print(f"\n{seeds} seeds, a budget of {budget:,} evaluations each; solved: a robot reached the goal\n")
    print("| search | solved | median evaluations to the first solution | mean best fitness | mean run time (s) |")
    print("|---|---|---|---|---|")
    by_search: dict[str, list[RunResult]] = {}
    for r in results:
        by_search.setdefault(r.search, []).append(r)
    for name, runs in by_search.items():
        solved = [r.solved_at for r in runs if r.solved_at is not None]
        median = f"{statistics.median(solved):,.0f}" if solved else "-"
        print(f"| {name} | {len(solved)} of {len(runs)} | {median} | "
              f"{statistics.mean(r.best_fitness for r in runs):.3f} | {statistics.mean(r.seconds for r in runs):.1f} |")
    print("\nEvaluations to the first solution per seed (- for none within the budget):\n")
    print("| search | " + " | ".join(str(r.seed) for r in next(iter(by_search.values()))) + " |")
    print("|---|" + "---|" * len(next(iter(by_search.values()))))
    for name, runs in by_search.items():
        print(f"| {name} | " + " | ".join("-" if r.solved_at is None else f"{r.solved_at:,}" for r in runs) + " |")
    elites = by_search.get("map-elites")
    if elites:
        print("\nMAP-Elites per generation (mean over the runs still going; 100 cells):\n")
        print("| generation | runs | coverage | QD-score |")
        print("|---|---|---|---|")
        longest = max(len(r.coverage) for r in elites)
        for g in sorted(set(list(range(0, longest, 10)) + [longest - 1])):
            going = [r for r in elites if len(r.coverage) > g]
            print(f"| {g} | {len(going)} | {statistics.mean(r.coverage[g] for r in going):.3f} | "
                  f"{statistics.mean(r.qd_score[g] for r in going):.2f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--generations", type=int, default=100)
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--searches", default="fitness,novelty,novelty+fitness,map-elites")
    parser.add_argument("--heat-map", metavar="PATH", help="write the first MAP-Elites run's archive.png there")
    args = parser.parse_args()
    tasks = [(name, seed, args.generations) for name in args.searches.split(",") for seed in range(1, args.seeds + 1)]
    started = time.perf_counter()
    with multiprocessing.get_context("spawn").Pool(args.processes) as pool:
        results = pool.map(_run, tasks, chunksize=1)
    pop_size = neat.Config(neatpar.Genome, neatpar.Reproduction, neatpar.SpeciesSet, neat.DefaultStagnation,
                           CONFIG).pop_size
    report(results, args.seeds, pop_size * args.generations)
    maps = [r.heat_map for r in results if r.heat_map]
    if args.heat_map and maps:
        with open(args.heat_map, "wb") as f:
            f.write(maps[0])
    print(f"\nwhole study: {time.perf_counter() - started:.0f} s on {args.processes} processes")


if __name__ == "__main__":
    main()
