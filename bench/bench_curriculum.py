"""Study: the deceptive maze (neatpar_sim/maze.py) solved with the curriculum of
configs/maze-curriculum.yaml (the goal moved along the way through the maze, lesson by lesson)
against the plain maze, selected on fitness alone, over the same seeds and budget of generations
(configs/maze-curriculum.cfg's NEAT settings, population 150, one episode per genome).

The maze task is driven in process (no Unity protocol, as in bench_maze.py): each generation's
genomes are compiled into one population kernel and every robot drives its own copy of the maze at
once. The curriculum is neatpar's own (episodes/curriculum.py, reading the YAML with
config/parameter_file.py): after each generation it checks the lesson's completion criteria on the
generation's champion's return, and the next generation's robots read the lesson's `goal` with
GetWithDefault from the messages the trainer sends (envs/unity/parameter_messages.py through
mlagents-envs' EnvironmentParametersChannel, received by the stand-in's GameParameters). A run is
solved when a robot reaches the real goal (goal = 1, the last lesson); it stops there.

Prints, per arm: runs solved, median generations to the solution, and per seed the generation of
the solution (and, for the curriculum, the generation each lesson began).
Usage: python bench/bench_curriculum.py [--seeds 5] [--generations 150] [--processes 2]
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
from mlagents_envs.side_channel.environment_parameters_channel import EnvironmentParametersChannel

import neatpar
from neatpar.config.parameter_file import read_parameter_file
from neatpar.envs.unity.parameter_messages import send_value
from neatpar.episodes.curriculum import Curriculum, LessonStatus
from neatpar.nn import FeedForwardPopulation

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.append(os.path.join(ROOT, "unity_builds"))   # the simulators' package, neatpar_sim
from neatpar_sim.game_parameters import GameParameters  # noqa: E402
from neatpar_sim.maze import Maze  # noqa: E402

CONFIG = os.path.join(ROOT, "configs", "maze-curriculum.cfg")
LESSONS = os.path.join(ROOT, "configs", "maze-curriculum.yaml")
NAME = "Maze?team=0"
STEPS = 400


def game_parameters(values: dict) -> GameParameters:
    """The game's EnvironmentParameters after the messages the trainer sends for `values`."""
    channel = EnvironmentParametersChannel()
    for key, value in values.items():
        send_value(channel, key, value)
    parameters = GameParameters()
    for message in channel.message_queue:
        parameters.receive(bytes(message))
    return parameters


def play(genomes, config, parameters: GameParameters) -> dict[int, float]:
    """One episode per genome, all at once; the returns by genome key."""
    keys = [key for key, _ in genomes]
    n = len(keys)
    task = Maze({"agents": n, "max_steps": STEPS}, np.random.default_rng(0), parameters=parameters)
    kernel = FeedForwardPopulation.create(genomes, config)
    playing = np.ones(n, bool)
    returns = np.zeros(n)
    observations = task.observe(NAME)
    while playing.any():
        actions = kernel.activate(observations).astype(np.float32)
        result = task.step({NAME: (actions, None)}, {NAME: playing.copy()}, {NAME: playing.copy()})[NAME]
        observations = task.observe(NAME)
        ended = playing & result.done
        returns[ended] = result.reward[ended]
        playing &= ~ended
    return dict(zip(keys, returns.tolist()))


@dataclasses.dataclass
class RunResult:
    arm: str
    seed: int
    solved_at: int | None      # the generation of the first robot at the real goal
    lesson_starts: list[int]   # the generation each lesson after the first began (curriculum)
    seconds: float


class Solved(Exception):
    """A robot reached the real goal: the run stops."""


def run(arm: str, seed: int, generations: int) -> RunResult:
    start = time.perf_counter()
    config = neat.Config(neatpar.Genome, neatpar.Reproduction, neatpar.SpeciesSet, neat.DefaultStagnation, CONFIG)
    config.no_fitness_termination = True
    population = neat.Population(config, seed=seed)
    curriculum = Curriculum(read_parameter_file(LESSONS) if arm == "curriculum" else None, seed, [NAME])
    made, starts = [0], []

    def evaluate(genomes, config):
        values = curriculum.values() or {}
        returns = play(genomes, config, game_parameters(values))
        for key, genome in genomes:
            genome.fitness = returns[key]
        final = all(curriculum.status(p) is LessonStatus.FINAL for p in curriculum.parameters)
        if final and max(returns.values()) >= 1.0:
            raise Solved
        champion = max(returns.values())
        if curriculum.end_generation(made[0], generations, champion):
            starts.append(made[0] + 1)
        made[0] += 1

    try:
        population.run(evaluate, generations)
        solved_at = None
    except Solved:
        solved_at = made[0]
    return RunResult(arm, seed, solved_at, starts, time.perf_counter() - start)


def _run(args) -> RunResult:
    return run(*args)


def report(results: list[RunResult], seeds: int, generations: int) -> None:
    print(f"\n{seeds} seeds, a budget of {generations} generations each; solved: a robot reached the real goal\n")
    print("| arm | solved | median generations to the solution | mean run time (s) |")
    print("|---|---|---|---|")
    arms: dict[str, list[RunResult]] = {}
    for r in results:
        arms.setdefault(r.arm, []).append(r)
    for arm, runs in arms.items():
        solved = [r.solved_at for r in runs if r.solved_at is not None]
        median = f"{statistics.median(solved):.0f}" if solved else "-"
        print(f"| {arm} | {len(solved)} of {len(runs)} | {median} | {statistics.mean(r.seconds for r in runs):.1f} |")
    print("\nGeneration of the solution per seed (- for none within the budget; the curriculum's lessons "
          "began at the generations in brackets):\n")
    print("| arm | " + " | ".join(str(r.seed) for r in next(iter(arms.values()))) + " |")
    print("|---|" + "---|" * len(next(iter(arms.values()))))
    for arm, runs in arms.items():
        cells = [("-" if r.solved_at is None else str(r.solved_at))
                 + (f" ({', '.join(map(str, r.lesson_starts))})" if r.lesson_starts else "") for r in runs]
        print(f"| {arm} | " + " | ".join(cells) + " |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--generations", type=int, default=150)
    parser.add_argument("--processes", type=int, default=2)
    args = parser.parse_args()
    tasks = [(arm, seed, args.generations) for arm in ("plain", "curriculum") for seed in range(1, args.seeds + 1)]
    started = time.perf_counter()
    with multiprocessing.get_context("spawn").Pool(args.processes) as pool:
        results = pool.map(_run, tasks, chunksize=1)
    report(results, args.seeds, args.generations)
    print(f"\nwhole study: {time.perf_counter() - started:.0f} s on {args.processes} processes")


if __name__ == "__main__":
    main()
