"""Benchmark: self-play with a league against the frozen champion, on the duel build.

For each seed, `neatpar evolve` runs configs/duel.cfg (the population plays the champion: the best
genome so far by raw fitness) and configs/duel-league.cfg (the population plays a league of its
past champions, rated with ELO) for the same generations, from the same initial population. Then
each run's winner (winner.json: the champion, or the league's best-rated member) plays
  - the other run's winner, head to head: GAMES games, half of them from each side;
  - the duel's hand-written opponents (the build's --heuristic levels: idle, lazy, follow, predict,
    aim, in order of skill), GAMES games each.
A game is a match of 4 points; its result is the sign of the final reward (1 win, 0.5 draw, 0
loss); a score is the mean result. Also shown: the generation in which the champion run's
champion was last replaced (the first generation of its best fitness record), the league's ELO
(the population's best) after the first and the last generation, and how well the league's ratings
tell its members apart: every member of the final league plays the champion run's winner, and the
table shows the spread of their ratings and scores, and the score of the best-rated member, of the
league run's winner (the best-rated member, unless the config asks for a final round-robin) and of
the best one.
Usage: python bench/bench_selfplay.py [--seeds 1,2,3] [--generations 60] [--games 200] [--out DIR]
The README's table: the defaults (seeds 1, 2, 3; 60 generations of 50 genomes per run, 4 episodes a
genome; 200 games a pairing), about 45 minutes on 2 shared cores (--out keeps the runs: a second
call with the same folder only plays the games).
"""
import argparse
import csv
import dataclasses
import json
import os
import statistics
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from stock_env import BUILDS, ROOT  # noqa: E402

sys.path.append(BUILDS)

from neatpar.genome_file import genome_from_dict  # noqa: E402
from neatpar.episodes.environments import open_environment  # noqa: E402
from neatpar.episodes.league import result_of  # noqa: E402
from neatpar.episodes.generation_plan import Match  # noqa: E402
from neatpar.episodes.runner import EpisodeRunner  # noqa: E402
from neatpar.record.checkpoint import Checkpoint  # noqa: E402
from neatpar.config.behaviors import BehaviorRole  # noqa: E402
from neatpar.config.files import load  # noqa: E402
from neatpar_sim.duel import HEURISTICS  # noqa: E402

NEATPAR = os.path.join(ROOT, ".venv", "bin", "neatpar")
MODES = {"champion": os.path.join(ROOT, "configs", "duel.cfg"), "league": os.path.join(ROOT, "configs", "duel-league.cfg")}
TEAM0, TEAM1 = "Duel?team=0", "Duel?team=1"
GAME_SEED = 7   # the simulator seed of the evaluation games


def evolve(mode: str, seed: int, generations: int, out: str) -> str:
    folder = os.path.join(out, f"{mode}-seed{seed}")
    if not os.path.isfile(os.path.join(folder, "winner.json")):
        subprocess.run([NEATPAR, "evolve", "--config", MODES[mode], "--out", folder, "--seed", str(seed),
                        "--generations", str(generations), "--quiet"], check=True)
    return folder


class Games:
    """Evaluation games on the duel build: one simulator for the given build arguments."""

    def __init__(self, heuristic: int = 0):
        config, settings = load(MODES["league"])
        behaviors = (BehaviorRole(TEAM0, "population"),) + (() if heuristic else (BehaviorRole(TEAM1, "league"),))
        self.settings = dataclasses.replace(settings, env_args=settings.env_args + ("--heuristic", str(heuristic)),
                                            behaviors=behaviors, league_swap_sides=False, seed=GAME_SEED)
        self.environment = open_environment(self.settings, None)
        self.runner = EpisodeRunner(self.environment, self.settings, config)

    def results(self, genome, opponent=None, count: int = 200) -> list[float]:
        """`genome`'s results: against `opponent` half from each side, else against the heuristic."""
        if opponent is None:
            return self._play(genome, {}, count, 0)
        return self._play(genome, {TEAM1: opponent}, count // 2, 0) + \
            self._play(genome, {TEAM0: opponent}, count - count // 2, 1)

    def _play(self, genome, opponents: dict, count: int, number: int) -> list[float]:
        _, stats = self.runner.evaluate([genome], match=Match(opponents, count, number))
        return [result_of(end) for end in stats.endings[0]]

    def close(self) -> None:
        self.environment.close()


def stats_rows(folder: str) -> list[dict]:
    with open(os.path.join(folder, "stats.csv")) as f:
        return list(csv.DictReader(f))


def last_replaced(folder: str) -> int:
    """The generation that set the champion run's best fitness record (its champion since)."""
    rows = stats_rows(folder)
    best = [float(r["best_fitness"]) for r in rows]
    return int(rows[best.index(max(best))]["generation"])


def final_league(folder: str, generations: int) -> list:
    """The members of a league run's league as the run ended (its last checkpoint)."""
    checkpoint = Checkpoint.load(os.path.join(folder, "checkpoints", f"checkpoint-{generations}.gz"))
    return checkpoint.evaluator.selfplay["leagues"][TEAM0].members


def score(results: list[float]) -> str:
    wins, draws = results.count(1.0), results.count(0.5)
    return f"{statistics.fmean(results):.3f} ({wins}-{draws}-{len(results) - wins - draws})"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="1,2,3")
    parser.add_argument("--generations", type=int, default=60)
    parser.add_argument("--games", type=int, default=200, help="games per pairing")
    parser.add_argument("--out", help="run folders (kept; existing runs are reused)")
    args = parser.parse_args()
    seeds = [int(s) for s in args.seeds.split(",")]
    out = args.out or tempfile.mkdtemp(prefix="bench-selfplay-")
    folders = {(mode, seed): evolve(mode, seed, args.generations, out) for seed in seeds for mode in MODES}
    winners = {key: genome_from_dict(json.load(open(os.path.join(folder, "winner.json"))))
               for key, folder in folders.items()}

    games = Games()
    try:
        head = {seed: games.results(winners[("league", seed)], winners[("champion", seed)], args.games)
                for seed in seeds}
        members = {}   # seed -> [(member, its score against the champion run's winner)]
        for seed in seeds:
            league = final_league(folders[("league", seed)], args.generations)
            members[seed] = [(m, statistics.fmean(games.results(m.genome, winners[("champion", seed)], args.games)))
                             for m in league]
    finally:
        games.close()
    against = {}
    for level, heuristic in enumerate(HEURISTICS, 1):
        games = Games(level)
        try:
            for key, genome in winners.items():
                against[key + (heuristic.__name__,)] = games.results(genome, None, args.games)
        finally:
            games.close()

    print(f"duel build, {args.generations} generations per run, {args.games} games per pairing (wins-draws-losses)")
    print("\n| seed | league winner vs champion winner | champion last replaced in generation | league ELO after "
          "generation 0 / last |")
    print("|---|---|---|---|")
    for seed in seeds:
        elo = [float(r["elo"]) for r in stats_rows(folders[("league", seed)])]
        print(f"| {seed} | {score(head[seed])} | {last_replaced(folders[('champion', seed)])} | "
              f"{elo[0]:.0f} / {elo[-1]:.0f} |")
    every = [r for s in seeds for r in head[s]]
    print(f"| all | {score(every)} | | |")
    print("\n| seed | final league: ratings | scores vs the champion run's winner | best-rated member | "
          "league run's winner | best member |")
    print("|---|---|---|---|---|---|")
    for seed in seeds:
        record = json.load(open(os.path.join(folders[("league", seed)], "league.json")))[TEAM0]
        ratings = [m.rating for m, _ in members[seed]]
        scores = [v for _, v in members[seed]]
        by_number = {m.number: v for m, v in members[seed]}
        rated = max(reversed(members[seed]), key=lambda pair: pair[0].rating)[1]
        print(f"| {seed} | {min(ratings):.0f} to {max(ratings):.0f} | {min(scores):.3f} to {max(scores):.3f} | "
              f"{rated:.3f} | {by_number[record['winner']]:.3f} | {max(scores):.3f} |")
    names = [h.__name__ for h in HEURISTICS]
    print("\n| winner of | " + " | ".join(f"vs {n}" for n in names) + " | mean |")
    print("|---|" + "---|" * (len(names) + 1))
    for mode in MODES:
        scores = [statistics.fmean(r for s in seeds for r in against[(mode, s, n)]) for n in names]
        print(f"| {mode} (seeds {args.seeds}) | " + " | ".join(f"{v:.3f}" for v in scores) +
              f" | {np.mean(scores):.3f} |")
    for seed in seeds:
        for mode in MODES:
            scores = [statistics.fmean(against[(mode, seed, n)]) for n in names]
            print(f"| {mode}, seed {seed} | " + " | ".join(f"{v:.3f}" for v in scores) + f" | {np.mean(scores):.3f} |")
    print(f"\nrun folders: {out}")


if __name__ == "__main__":
    main()
