"""`neatpar evolve` with league roles, as a user runs it (real processes, the duel build):
symmetric games (one behavior, two team ids, sides swapped) and asymmetric ones (two behaviors of
different sizes, a population each: their turns are tested in test_alternation.py), with envs =
1 and 2; resume continues a league exactly; the winner is the best-rated member; ELO in stats.csv
and TensorBoard."""
import json
import os

import neat
import numpy as np
import pytest

import neatpar
from neatpar.record.checkpoint import Checkpoint
from support.duels import asymmetric_cfg, duel_cfg
from support.evolution import genes_of
from support.runs import evolve_ok, neatpar_cli, stats_table, without_timing


def final_winner(side: dict) -> dict:
    """The member with the best final round-robin result (then rating, then the newest)."""
    return max(reversed(side["members"]), key=lambda m: (m["final"], m["rating"]))



@pytest.mark.slow
@pytest.mark.parametrize("envs", [1, 2])
def test_a_symmetric_league_run(tmp_path, envs):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    out = tmp_path / "run"
    result = evolve_ok(duel_cfg(tmp_path, league_final_games=10), out, "--envs", str(envs))
    assert "| ELO " in result.stdout and "final round-robin of the league's 3 members" in result.stdout
    rows = stats_table(out / "stats.csv")
    assert list(rows[0])[14:16] == ["elo", "league_size"]          # right after the standard columns
    assert [r["league_size"] for r in rows] == ["2", "3", "3"]     # the first genome, then a snapshot each (window 3)
    league = json.load(open(out / "league.json"))["Duel?team=0"]
    assert [m["number"] for m in league["members"]] == [1, 2, 3]
    assert float(rows[-1]["elo"]) == league["rating"] == league["members"][-1]["rating"]
    assert all(0.0 <= m["final"] <= 1.0 for m in league["members"])
    winner = final_winner(league)
    assert league["winner"] == winner["number"]
    assert json.load(open(out / "winner.json"))["key"] == winner["genome"]
    assert (out / "winner.onnx").is_file()
    events = EventAccumulator(str(out), size_guidance={"scalars": 0})
    events.Reload()
    assert [(e.step, e.value) for e in events.Scalars("Self-play/ELO")] == \
        [(int(r["generation"]), np.float32(float(r["elo"]))) for r in rows]
    assert [e.value for e in events.Scalars("Self-play/League Size")] == [2.0, 3.0, 3.0]


@pytest.mark.slow
@pytest.mark.parametrize("game, envs", [("symmetric", 2), ("asymmetric", 1)])
def test_resume_continues_the_league_exactly(tmp_path, game, envs):
    config = (duel_cfg if game == "symmetric" else asymmetric_cfg)(tmp_path, generations=4, checkpoint_interval=3,
                                                                   envs=envs)
    full, part = tmp_path / "full", tmp_path / "part"
    evolve_ok(config, full)
    evolve_ok(config, part, "--generations", "2")
    # Every third generation, and the run's last.
    assert sorted(os.listdir(full / "checkpoints")) == ["checkpoint-3.gz", "checkpoint-4.gz"]
    assert sorted(os.listdir(part / "checkpoints")) == ["checkpoint-2.gz"]
    for name in ("duel.cfg", "asymmetric.cfg", "keeper.cfg"):   # the checkpoint alone: the run's settings,
        if os.path.exists(tmp_path / name):                      # its populations' configs too, are stored
            os.remove(tmp_path / name)
    resumed = neatpar_cli("evolve", "--resume", str(part / "checkpoints" / "checkpoint-2.gz"), "--generations", "4")
    assert resumed.returncode == 0, resumed.stderr
    assert json.load(open(full / "league.json")) == json.load(open(part / "league.json"))
    folders = [""] if game == "symmetric" else ["behavior-Duel_team=0", "behavior-Keeper_team=1"]
    for folder in folders:
        rows = without_timing(stats_table(full / folder / "stats.csv"))
        assert rows == without_timing(stats_table(part / folder / "stats.csv"))
        assert json.load(open(full / folder / "winner.json")) == json.load(open(part / folder / "winner.json"))
    assert len({r["elo"] for r in rows}) > 1   # the ratings move


def league_genomes(checkpoint: str) -> list:
    """Every genome a self-play checkpoint holds: each population's and each league member's."""
    saved = Checkpoint.load(checkpoint)
    population = saved.population.population
    genomes = [population[k] for k in sorted(population)]
    for side in (saved.sides or {}).values():
        genomes += [side.population[k] for k in sorted(side.population)]
    leagues = saved.evaluator.selfplay["leagues"]
    for behavior in sorted(leagues):
        genomes += [m.genome for m in leagues[behavior].members]
    return genomes


@pytest.mark.slow
@pytest.mark.parametrize("game", ["symmetric", "asymmetric"])
def test_neatpar_s_neat_step_gives_a_league_run_neat_python_s_classes_give(tmp_path, game):
    """A seeded league run (an asymmetric one: both populations, of their own configs) is the same
    with neatpar's NEAT step classes as with neat-python's: stats, leagues, winners, genomes."""
    runs = {}
    for step in ("neatpar", "neat-python"):
        folder = tmp_path / step
        folder.mkdir()
        config = (duel_cfg if game == "symmetric" else asymmetric_cfg)(folder, generations=4, checkpoint_interval=4,
                                                                       neat_step=step)
        out = folder / "run"
        evolve_ok(config, out)
        outputs = [""] if game == "symmetric" else ["behavior-Duel_team=0", "behavior-Keeper_team=1"]
        runs[step] = ([without_timing(stats_table(out / f / "stats.csv")) for f in outputs],
                      [json.load(open(out / f / "winner.json")) for f in outputs],
                      json.load(open(out / "league.json")), league_genomes(str(out / "checkpoints" / "checkpoint-4.gz")))
    ours, theirs = runs["neatpar"], runs["neat-python"]
    assert {type(g) for g in ours[3]} == {neatpar.Genome} and {type(g) for g in theirs[3]} == {neat.DefaultGenome}
    assert ours[:3] == theirs[:3]
    assert [genes_of(g) for g in ours[3]] == [genes_of(g) for g in theirs[3]]
    assert len({r["mean_fitness"] for rows in ours[0] for r in rows}) > 1   # the runs evolve


def test_an_asymmetric_config_names_what_is_missing_and_leaves_no_folder(tmp_path):
    config = asymmetric_cfg(tmp_path)
    os.remove(tmp_path / "keeper.cfg")
    result = neatpar_cli("evolve", "--config", config, "--out", str(tmp_path / "run"))
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [f"neatpar: error: neat config {str(tmp_path / 'keeper.cfg')!r} "
                                                  f"not found: fix the path (relative to the config file)"]
    assert not (tmp_path / "run").exists()
    wrong = duel_cfg(tmp_path, "wrong.cfg", neat_configs="Duel?team=1: keeper.cfg")
    result = neatpar_cli("evolve", "--config", wrong, "--out", str(tmp_path / "run"))
    assert result.returncode == 2 and "only the two league behaviors of an asymmetric game" in result.stderr
