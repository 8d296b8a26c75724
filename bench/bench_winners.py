"""Benchmark: how a run's winner holds up on fresh episodes, chosen by the best training fitness
seen (the rule with `winner_episodes = 0`) against the default check on fresh episodes
(winner_candidates, winner_episodes, winner_interval; episodes/validation.py), on the noisy camera
build (random starts) and the maze, several seeds each.

The check plays no training episode and draws nothing from the run's random state, so one run
gives both winners: the evaluator's `champion` (the best training fitness seen) and its `winner`
(checked on fresh episodes). Each run is configs/TASK.cfg evolved in this process through
EnvEvaluator and neat.Population (the checks timed as they happen, the one at the end included);
then both winners play --episodes episodes on a simulator seed no training or check episode used
(a second evaluator, its seed moved by 10,000), and the table shows, per run, each winner's
recorded score (training fitness; for the checked winner its fresh score), what it plays, and the
checks' share of the run's time.

Usage: nice -n 19 python bench/bench_winners.py [--seeds 1 2 3 4 5] [--tasks camera maze]
       [--generations camera=30 maze=15] [--episodes 64]
"""
import argparse
import math
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)

import neat  # noqa: E402

from neatpar import settings as run_config  # noqa: E402
from neatpar.episodes.env_evaluator import EnvEvaluator  # noqa: E402

CONFIGS = {"camera": "camera.cfg", "maze": "maze.cfg"}
RULES = ("best training fitness", "checked on fresh episodes")
PLAY_SEED_OFFSET = 10_000


def one_run(task: str, seed: int, generations: int, episodes: int, checked: int) -> dict:
    config, settings = run_config.load(os.path.join(ROOT, "configs", CONFIGS[task]))
    # the check as a run has it by default (a config of a game whose episodes are all the same,
    # as the maze's, turns it off: here it is on, to show what it costs there)
    settings = settings.with_changes(seed=seed, generations=generations, winner_episodes=checked)
    config.no_fitness_termination = True   # every run the same length: the budget is the generations
    population = neat.Population(config, seed=seed)
    checks = []
    with EnvEvaluator.from_settings(settings) as evaluator:
        check = evaluator.check_winner

        def timed_check() -> None:
            started = time.perf_counter()
            check()
            checks.append(time.perf_counter() - started)
        evaluator.check_winner = timed_check   # before attach: the population's pin calls it too
        evaluator.attach(population)
        started = time.perf_counter()
        population.run(evaluator.evaluate, generations)
        evaluator.check_winner()   # the candidates since the last check
        seconds = time.perf_counter() - started
        winners = {RULES[0]: evaluator.champion, RULES[1]: evaluator.winner}
        fresh = evaluator.validation.score
    with EnvEvaluator.from_settings(settings.with_changes(seed=seed + PLAY_SEED_OFFSET)) as player:
        played = {rule: player.play(genome, config, episodes) for rule, genome in winners.items()}
    return {"winners": winners, "fresh": fresh, "played": played, "share": math.fsum(checks) / seconds,
            "seconds": seconds}


def mean_and_noise(returns: list[float]) -> tuple[float, float]:
    return statistics.fmean(returns), statistics.stdev(returns) / math.sqrt(len(returns))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3, 4, 5])
    parser.add_argument("--tasks", nargs="+", default=list(CONFIGS), choices=list(CONFIGS))
    parser.add_argument("--generations", nargs="+", default=["camera=30", "maze=15"], help="TASK=N")
    parser.add_argument("--episodes", type=int, default=64, help="fresh episodes each winner plays")
    parser.add_argument("--winner-episodes", type=int, default=32, help="the check's fresh episodes (the default)")
    args = parser.parse_args()
    generations = {k: int(v) for k, v in (g.split("=") for g in args.generations)}
    rows = []
    for task in args.tasks:
        for seed in args.seeds:
            run = one_run(task, seed, generations[task], args.episodes, args.winner_episodes)
            for rule in RULES:
                genome = run["winners"][rule]
                recorded = genome.fitness if rule == RULES[0] else run["fresh"].fitness
                mean, noise = mean_and_noise(run["played"][rule])
                rows.append({"task": task, "seed": seed, "rule": rule, "key": genome.key, "training": genome.fitness,
                             "recorded": recorded, "played": mean, "noise": noise,
                             "fresh_episodes": run["fresh"].episodes if rule == RULES[1] else None,
                             "share": run["share"] if rule == RULES[1] else 0.0})
                print(f"{task} seed {seed}, {rule}: genome {genome.key}, training fitness {genome.fitness:.3f}, "
                      f"recorded {recorded:.3f}, plays {mean:.3f} +- {noise:.3f} on {args.episodes} fresh episodes"
                      + (f"; checks {run['share']:.1%} of {run['seconds']:.0f} s" if rule == RULES[1] else ""),
                      flush=True)
    print(f"\n| task | seed | winner by | genome | its training fitness | its fresh score (episodes) | plays on "
          f"{args.episodes} new episodes | recorded minus played | checks' share of the run's time |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        fresh = "-" if r["fresh_episodes"] is None else f"{r['recorded']:.3f} ({r['fresh_episodes']})"
        print(f"| {r['task']} | {r['seed']} | {r['rule']} | {r['key']} | {r['training']:.3f} | {fresh} | "
              f"{r['played']:.3f} +- {r['noise']:.3f} | {r['recorded'] - r['played']:+.3f} | "
              f"{'-' if r['rule'] == RULES[0] else format(r['share'], '.1%')} |")
    print(f"\n| task | winner by | mean of the winners' returns on {args.episodes} new episodes | "
          f"largest recorded minus played (in its noise) | checks' share of the run's time (mean) |")
    print("|---|---|---|---|---|")
    for task in args.tasks:
        for rule in RULES:
            rs = [r for r in rows if r["task"] == task and r["rule"] == rule]
            worst = max(rs, key=lambda r: r["recorded"] - r["played"])
            gap = worst["recorded"] - worst["played"]
            print(f"| {task} | {rule} | {statistics.fmean(r['played'] for r in rs):.3f} | {gap:+.3f} "
                  f"({gap / worst['noise'] if worst['noise'] else 0:.1f} x its noise) | "
                  f"{'-' if rule == RULES[0] else format(statistics.fmean(r['share'] for r in rs), '.1%')} |")


if __name__ == "__main__":
    main()
