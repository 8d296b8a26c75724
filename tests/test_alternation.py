"""Tests of run/alternation.py: an asymmetric self-play run, two populations (of two behaviors of
different sizes, each with its own neat config) taking turns, as a user runs it on the duel build:
each population's generations, stats and winner in its own folder, the run's checkpoints holding
both, an interrupted run that resumes exactly, and a population that could stop the run alone
refused."""
import json
import os
import signal

import neat
import onnx
import pytest

from neatpar.record.checkpoint import Checkpoint
from support.duels import asymmetric_cfg, best_rated
from support.runs import Run, evolve_ok, neatpar_cli, stats_table, without_timing


@pytest.mark.slow
@pytest.mark.parametrize("envs", [1, 2])
def test_an_asymmetric_league_run_evolves_a_population_per_behavior_in_turns(tmp_path, envs):
    out = tmp_path / "run"
    result = evolve_ok(asymmetric_cfg(tmp_path), out, "--envs", str(envs))
    assert "final round-robin" not in result.stdout   # by default the best-rated member wins
    striker, keeper = out / "behavior-Duel_team=0", out / "behavior-Keeper_team=1"
    # team_change = 1: Duel?team=0 evolves in the run's generations 0 and 2, the keeper in 1.
    assert [r["generation"] for r in stats_table(striker / "stats.csv")] == ["0", "1"]
    assert [r["generation"] for r in stats_table(keeper / "stats.csv")] == ["0"]
    assert [r["episodes"] for r in stats_table(keeper / "stats.csv")] == ["12"]   # its own population of 6
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
def test_an_interrupted_asymmetric_run_resumes_exactly(tmp_path):
    config = asymmetric_cfg(tmp_path, generations=4, checkpoint_interval=4)
    full, cut = tmp_path / "full", tmp_path / "cut"
    evolve_ok(config, full)
    run = Run(config, cut)
    run.wait_for("  Keeper gen    0")       # the keeper's first turn is over: SIGTERM in the next one
    run.proc.send_signal(signal.SIGTERM)
    code, err = run.finish()
    assert code == 143 and "resume with --resume" in err, err
    run.assert_clean()   # its networks run in process: no segment is made, none may be left
    # Each population's best-rated member so far is left as its winner, for play and export.
    leagues = json.load(open(cut / "league.json"))
    winners = [cut / "behavior-Duel_team=0" / "winner.json", cut / "behavior-Keeper_team=1" / "winner.json"]
    assert run.lines[-1] == f"best genome so far: {', '.join(str(w) for w in winners)}\n", run.lines
    for winner, behavior in zip(winners, ("Duel?team=0", "Keeper?team=1")):
        assert json.load(open(winner))["key"] == best_rated(leagues[behavior])["genome"]
    resumed = neatpar_cli("evolve", "--resume", err.split("--resume ")[-1].strip())
    assert resumed.returncode == 0, resumed.stderr
    assert json.load(open(full / "league.json")) == json.load(open(cut / "league.json"))
    for folder in ("behavior-Duel_team=0", "behavior-Keeper_team=1"):
        assert without_timing(stats_table(full / folder / "stats.csv")) == without_timing(stats_table(cut / folder / "stats.csv"))


def test_a_population_that_could_stop_the_run_alone_is_refused_in_one_line(tmp_path):
    """A population reaching its fitness_threshold would end its turns while the other goes on:
    both must run with no_fitness_termination = true."""
    config = asymmetric_cfg(tmp_path)
    keeper = tmp_path / "keeper.cfg"
    keeper.write_text(keeper.read_text().replace("no_fitness_termination = true", "no_fitness_termination = false"))
    result = neatpar_cli("evolve", "--config", config, "--out", str(tmp_path / "run"))
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip().splitlines() == [
        "neatpar: error: the neat config of 'Keeper?team=1' has no_fitness_termination = false: in asymmetric "
        "self-play a population stops only when the run does; set no_fitness_termination = true in its [NEAT] "
        "section"]
    assert not (tmp_path / "run").exists()
