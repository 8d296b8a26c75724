"""`neatpar evolve` with league roles, as a user runs it (real processes, the duel build):
symmetric games (one behavior, two team ids, sides swapped) and asymmetric ones (two behaviors of
different sizes, a population each, taking turns), with envs = 1 and 2; resume continues a league
exactly; the winner is the best-rated member; ELO in stats.csv and TensorBoard."""
import csv
import json
import os
import signal

import neat
import numpy as np
import onnx
import pytest

import neatpar
from neatpar.record.checkpoint import Checkpoint
from support.configs import write_config
from support.duels import DUEL_SHORT, duel_cfg
from support.evolution import genes_of
from support.processes import shm_segments
from support.runs import Run, neatpar_cli

TIMING = ("seconds", "scored_steps_per_s")


def asymmetric_cfg(folder, generations=3, **neatpar):
    """Duel?team=0 (6 observations, 1 continuous action) against Keeper?team=1 (5, a branch of 3),
    each with its own population, a generation each in turn."""
    write_config(folder, "keeper.cfg", pop_size=6, num_inputs=5, num_outputs=3, activation_options="tanh",
                 activation_default="tanh")
    return duel_cfg(folder, "asymmetric.cfg", generations, env_args=DUEL_SHORT + " --asymmetric 1",
                    behaviors="Duel?team=0: league, Keeper?team=1: league", league_swap_sides="false",
                    neat_configs="Keeper?team=1: keeper.cfg", team_change=1, **neatpar)


def table(path) -> list[dict]:
    with open(path) as f:
        return list(csv.DictReader(f))


def without_timing(rows: list[dict]) -> list[dict]:
    return [{k: v for k, v in row.items() if k not in TIMING} for row in rows]


def final_winner(side: dict) -> dict:
    """The member with the best final round-robin result (then rating, then the newest)."""
    return max(reversed(side["members"]), key=lambda m: (m["final"], m["rating"]))


def best_rated(side: dict) -> dict:
    """The best-rated member, of equals the newest (the winner without a final round-robin)."""
    return max(reversed(side["members"]), key=lambda m: m["rating"])


def evolve(config, out, *extra):
    result = neatpar_cli("evolve", "--config", config, "--out", str(out), *extra)
    assert result.returncode == 0, result.stderr
    return result


@pytest.mark.slow
@pytest.mark.parametrize("envs", [1, 2])
def test_a_symmetric_league_run(tmp_path, envs):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    out = tmp_path / "run"
    result = evolve(duel_cfg(tmp_path, league_final_games=10), out, "--envs", str(envs))
    assert "| ELO " in result.stdout and "final round-robin of the league's 3 members" in result.stdout
    rows = table(out / "stats.csv")
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
@pytest.mark.parametrize("envs", [1, 2])
def test_an_asymmetric_league_run_evolves_a_population_per_behavior_in_turns(tmp_path, envs):
    out = tmp_path / "run"
    result = evolve(asymmetric_cfg(tmp_path), out, "--envs", str(envs))
    assert "final round-robin" not in result.stdout   # by default the best-rated member wins
    striker, keeper = out / "behavior-Duel_team=0", out / "behavior-Keeper_team=1"
    # team_change = 1: Duel?team=0 evolves in the run's generations 0 and 2, the keeper in 1.
    assert [r["generation"] for r in table(striker / "stats.csv")] == ["0", "1"]
    assert [r["generation"] for r in table(keeper / "stats.csv")] == ["0"]
    assert [r["episodes"] for r in table(keeper / "stats.csv")] == ["12"]   # its own population of 6
    leagues = json.load(open(out / "league.json"))
    for folder, behavior, inputs in ((striker, "Duel?team=0", 6), (keeper, "Keeper?team=1", 5)):
        genome = json.load(open(folder / "winner.json"))
        assert (genome["key"], genome["num_inputs"]) == (best_rated(leagues[behavior])["genome"], inputs)
        model = onnx.load(str(folder / "winner.onnx"))
        assert [i.name for i in model.graph.input][:1] == ["obs_0"]
        assert model.graph.input[0].type.tensor_type.shape.dim[1].dim_value == inputs
    assert [len(leagues[b]["members"]) for b in ("Duel?team=0", "Keeper?team=1")] == [3, 2]
    assert sorted(os.listdir(out / "checkpoints")) == ["checkpoint-1.gz", "checkpoint-2.gz", "checkpoint-3.gz"]
    assert not (striker / "checkpoints").exists()
    restored = neat.Checkpointer.restore_checkpoint(str(out / "checkpoints" / "checkpoint-3.gz"))
    assert restored.generation == 2 and len(restored.population) == 8   # the first behavior's population
    # Each checkpoint's generations of the two populations: the striker's, the keeper's, in turns.
    turns = [Checkpoint.load(str(out / "checkpoints" / f"checkpoint-{n}.gz")) for n in (1, 2, 3)]
    assert [(c.population.generation, c.sides["Keeper?team=1"].generation) for c in turns] == [(1, 0), (1, 1), (2, 1)]
    # A population's winner plays against the other's.
    played = neatpar_cli("play", "--config", str(tmp_path / "asymmetric.cfg"), "--genome",
                         str(keeper / "winner.json"), "--episodes", "2")
    assert played.returncode == 0 and "2 episodes" in played.stdout, played.stderr


@pytest.mark.slow
@pytest.mark.parametrize("game, envs", [("symmetric", 2), ("asymmetric", 1)])
def test_resume_continues_the_league_exactly(tmp_path, game, envs):
    config = (duel_cfg if game == "symmetric" else asymmetric_cfg)(tmp_path, generations=4, checkpoint_interval=3,
                                                                   envs=envs)
    full, part = tmp_path / "full", tmp_path / "part"
    evolve(config, full)
    evolve(config, part, "--generations", "2")
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
        rows = without_timing(table(full / folder / "stats.csv"))
        assert rows == without_timing(table(part / folder / "stats.csv"))
        assert json.load(open(full / folder / "winner.json")) == json.load(open(part / folder / "winner.json"))
    assert len({r["elo"] for r in rows}) > 1   # the ratings move


@pytest.mark.slow
def test_an_interrupted_asymmetric_run_resumes_exactly(tmp_path):
    config = asymmetric_cfg(tmp_path, generations=4, checkpoint_interval=4)
    full, cut = tmp_path / "full", tmp_path / "cut"
    evolve(config, full)
    segments = shm_segments()
    run = Run(config, cut)
    run.wait_for("  Keeper gen    0")       # the keeper's first turn is over: SIGTERM in the next one
    run.proc.send_signal(signal.SIGTERM)
    code, err = run.finish()
    assert code == 143 and "resume with --resume" in err, err
    run.assert_clean(segments)
    resumed = neatpar_cli("evolve", "--resume", err.split("--resume ")[-1].strip())
    assert resumed.returncode == 0, resumed.stderr
    assert json.load(open(full / "league.json")) == json.load(open(cut / "league.json"))
    for folder in ("behavior-Duel_team=0", "behavior-Keeper_team=1"):
        assert without_timing(table(full / folder / "stats.csv")) == without_timing(table(cut / folder / "stats.csv"))


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
        evolve(config, out)
        outputs = [""] if game == "symmetric" else ["behavior-Duel_team=0", "behavior-Keeper_team=1"]
        runs[step] = ([without_timing(table(out / f / "stats.csv")) for f in outputs],
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
