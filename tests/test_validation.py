"""Tests of episodes/validation.py: a run's winner chosen on fresh episodes. The rule on given
episode returns (which genomes stay candidates, when a check is due, when a candidate takes the
winner's place, the winner's score over all its fresh episodes), and on the noisy camera build:
winner.json and stats.csv record the score, `neatpar play` reproduces it within its noise,
`population.run` returns the validated winner, and resume, seeded repeats and envs = 2 are exact."""
import json
import math
import statistics

import neat
import pytest

from neatpar import settings as run_config
from neatpar.episodes.env_evaluator import EnvEvaluator
from neatpar.episodes.validation import KEPT_RETURNS, FreshCheck, WinnerValidation
from support.configs import camera_cfg
from support.runs import neatpar_cli, stats_table, without_timing


def genome(key: int, fitness: float = 0.0):
    made = neat.DefaultGenome(key)
    made.fitness = fitness
    return made


def played(results: dict[int, list[float]], seed: int | None = 7):
    """Episodes as a check plays them: each genome's returns, by its key, and the first seed."""
    calls = []

    def play(genomes, episodes):
        calls.append([g.key for g in genomes])
        return [results[g.key][:episodes] for g in genomes], seed
    return play, calls


def test_the_best_candidates_since_the_last_check_stay_each_genome_once_and_frozen():
    validation = WinnerValidation(candidates=2, episodes=4, interval=3, fitness="mean")
    first, second, third = genome(1), genome(2), genome(3)
    validation.offer([(first, 0.5), (second, 0.9), (third, 0.1)])
    assert [(g.key, g.fitness) for g in validation.state.pending] == [(2, 0.9), (1, 0.5)]
    second.fitness = -5.0   # a later generation scores the living genome again: the copy kept is frozen
    assert validation.state.pending[0].fitness == 0.9
    validation.offer([(second, 0.95), (genome(4), 0.8), (genome(5), 0.9)])
    assert [(g.key, g.fitness) for g in validation.state.pending] == [(2, 0.95), (5, 0.9)]   # genome 2 once
    validation.offer([(genome(6), 0.9), (genome(7), 0.1)])
    assert [g.key for g in validation.state.pending] == [2, 5]   # the first of equals first
    assert [validation.due(g) for g in range(6)] == [False, False, True, False, False, True]
    assert not WinnerValidation(2, 0, 1, "mean").due(0)   # winner_episodes = 0: no checks


def test_a_candidate_takes_the_winners_place_only_by_scoring_more_on_the_same_episodes():
    validation = WinnerValidation(candidates=3, episodes=2, interval=1, fitness="mean")
    validation.offer([(genome(1), 2.0), (genome(2), 1.5), (genome(3), 1.0)])
    play, calls = played({1: [0.1, 0.3], 2: [0.5, 0.5], 3: [0.6, 0.2]})
    validation.check(play, generation=0)
    # the luckiest genome by training (1) plays worst on fresh episodes; the best of them wins
    assert calls == [[1, 2, 3]] and validation.winner.key == 2 and validation.winner.fitness == 1.5
    assert validation.score.fitness == 0.5 and validation.score.checks == (FreshCheck(0, 7),)
    assert validation.state.pending == []

    validation.offer([(genome(4), 3.0), (genome(2), 2.5)])
    play, calls = played({2: [0.2, 0.2], 4: [0.4, 0.4]}, seed=9)
    validation.check(play, generation=1)
    # the winner plays first, itself not again as a candidate; its score is over its 4 fresh
    # episodes (0.35), which candidate 4 beats on this check's (0.4)
    assert calls == [[2, 4]] and validation.winner.key == 4 and validation.score.episodes == 2
    assert validation.score.checks == (FreshCheck(1, 9),)

    validation.offer([(genome(5), 9.0)])
    play, _ = played({4: [0.0, 0.0], 5: [0.2, 0.2]})
    validation.check(play, generation=2)
    assert validation.winner.key == 4 and validation.score.episodes == 4   # 0.2 each: equal is not more
    validation.offer([(genome(6), 9.0)])
    play, _ = played({4: [0.4, 0.4], 6: [0.3, 0.31]})
    validation.check(play, generation=3)
    assert validation.winner.key == 6 and validation.score.fitness == pytest.approx(0.305)


def test_the_run_aggregate_compares_winners_and_the_winners_score_covers_every_fresh_episode():
    validation = WinnerValidation(candidates=1, episodes=3, interval=1, fitness="min")
    validation.offer([(genome(1), 1.0)])
    validation.check(played({1: [1.0, 0.0, 1.0]})[0], generation=0)
    validation.offer([(genome(2), 1.0)])
    validation.check(played({1: [1.0, 1.0, 1.0], 2: [0.5, 0.5, 0.5]})[0], generation=1)
    # by the mean 2 would lose (0.5 against 0.83); by the run's aggregate, the minimum, it wins
    assert validation.winner.key == 2 and validation.score.fitness == 0.5 and validation.score.mean_return == 0.5
    assert validation.values().winner_fresh == 0.5 and validation.values().winner_fitness == 1.0


def fresh_run(tmp_path, name: str, *extra, **over) -> dict:
    """A camera run (noisy: random starts) whose winner is checked on fresh episodes."""
    config = camera_cfg(tmp_path, name=f"{name}.cfg", **{"generations": 4, "pop_size": 12, "winner_candidates": 3,
                                                          "winner_episodes": 16, "winner_interval": 2, **over})
    out = tmp_path / name
    result = neatpar_cli("evolve", "--config", config, "--out", str(out), "--quiet", *extra)
    assert result.returncode == 0, result.stderr
    return {"config": config, "out": out, "winner": json.load(open(out / "winner.json")),
            "stats": stats_table(out / "stats.csv")}


def test_winner_json_and_stats_csv_record_the_fresh_score_and_play_reproduces_it(tmp_path):
    run = fresh_run(tmp_path, "run")
    winner, stats = run["winner"], run["stats"]
    fresh = winner["fresh"]
    assert fresh["episodes"] % 16 == 0 and fresh["episodes"] >= 16
    assert {c["generation"] for c in fresh["checks"]} <= {1, 3} and all(c["seed"] is not None for c in fresh["checks"])
    # checks after generations 1 and 3: the columns begin there and show the winner as it stood
    assert [row["winner_fresh"] == "" for row in stats] == [True, False, False, False]
    assert float(stats[-1]["winner_fresh"]) == fresh["fitness"] and float(stats[-1]["winner_fitness"]) == \
        winner["fitness"]
    assert float(stats[1]["fresh_seconds"]) > 0 and float(stats[2]["fresh_seconds"]) == 0
    played = neatpar_cli("play", "--config", run["config"], "--genome", str(run["out"] / "winner.json"),
                         "--episodes", "32")
    assert played.returncode == 0, played.stderr
    returns = [float(r) for r in next(line for line in played.stdout.splitlines()
                                      if line.startswith("returns: ")).split()[1:]]
    assert f"its run recorded a mean return of {fresh['mean_return']:.3f} on {fresh['episodes']} fresh episodes" \
        in played.stdout
    spread = statistics.stdev(returns)
    noise = spread * math.sqrt(1 / len(returns) + 1 / fresh["episodes"])
    assert abs(statistics.fmean(returns) - fresh["mean_return"]) <= 4 * noise + 1e-9, (returns, fresh)


def test_population_run_returns_the_validated_winner_and_episodes_0_keeps_the_best_training_fitness(tmp_path):
    for episodes in (8, 0):
        config, settings = run_config.load(camera_cfg(tmp_path, name=f"camera-{episodes}.cfg", pop_size=10,
                                                      winner_episodes=episodes, winner_interval=1))
        population = neat.Population(config, seed=2)
        with EnvEvaluator.from_settings(settings) as evaluator:
            evaluator.attach(population)
            returned = population.run(evaluator.evaluate, 3)
            if episodes:
                assert returned is evaluator.winner is evaluator.validation.winner
                assert evaluator.validation.score.episodes >= 8
            else:   # neat-python's own best, and the champion (the same genome, its fitness as it scored best)
                assert evaluator.validation.winner is None and evaluator.winner is evaluator.champion
                assert returned is population.best_genome


@pytest.mark.slow
def test_resume_seeded_repeats_and_two_envs_are_exact_with_candidates_pending(tmp_path):
    # winner_interval 3 with checkpoints every 2: the checkpoint of generation 2 holds the
    # candidates of generations 0 and 1, not yet checked
    over = {"generations": 5, "winner_interval": 3, "checkpoint_interval": 2, "envs": 2}
    straight = fresh_run(tmp_path, "straight", **over)
    again = fresh_run(tmp_path, "again", **over)
    part = fresh_run(tmp_path, "part", "--generations", "2", **over)
    resumed = neatpar_cli("evolve", "--config", part["config"], "--resume",
                          str(part["out"] / "checkpoints" / "checkpoint-2.gz"), "--generations", "5", "--quiet")
    assert resumed.returncode == 0, resumed.stderr
    assert json.load(open(part["out"] / "winner.json")) == straight["winner"] == again["winner"]
    assert without_timing(stats_table(part["out"] / "stats.csv")) == without_timing(straight["stats"]) == \
        without_timing(again["stats"])
    assert [c["generation"] for c in straight["winner"]["fresh"]["checks"]][-1] == 4   # the run's end checked


def test_a_winner_that_stays_is_scored_on_its_latest_fresh_episodes_and_its_record_stops_growing():
    validation = WinnerValidation(candidates=1, episodes=600, interval=1, fitness="mean")
    validation.offer([(genome(1), 1.0)])
    validation.check(played({1: [0.0] * 600})[0], generation=0)
    validation.offer([(genome(2), 0.5)])
    validation.check(played({1: [1.0] * 600, 2: [0.1] * 600})[0], generation=1)
    score = validation.score
    assert validation.winner.key == 1 and score.episodes == len(validation.state.returns) == KEPT_RETURNS
    assert score.fitness == 600 / KEPT_RETURNS   # 424 of the first check's zeros, then 600 ones: 176 dropped
    assert [c.generation for c in score.checks] == [0, 1]
