"""Tests of run/lifecycle.py: a run from its plan to its end, through `neatpar evolve` as a user
runs it (real processes, the real simulator builds): the run folder it leaves, resume from a
checkpoint alone, the one-line errors of a bad start, Ctrl+C and SIGTERM in each phase, what it
prints for its watchers; and the phase table itself."""
import gzip
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time

import neat
import numpy as np
import pytest

import neatpar

from neatpar.envs.unity.bridge import EDITOR_PORT
from neatpar.envs.unity.communicator import port_free
from neatpar.genome_file import genome_from_dict
from support.configs import ball_cfg, hover_cfg, write_config
from support.evolution import genes_of
from support.marks import ON_THE_EDITOR_PORT
from support.paths import ROOT
from support.runs import (PROGRESS_BAR, Run, evolve_ok, exports_plays_and_repeats_on_two_hosts, fresh_note, neatpar_cli,
                          one_line_error, stats_rows)


@pytest.fixture(scope="module")
def one_generation(tmp_path_factory):
    """A finished one-generation ball run: (its config, its run folder). Shared by the tests that only
    read the folder or are refused by it, which leave it as it is (each of them ran the same run
    of its own before)."""
    folder = tmp_path_factory.mktemp("one-generation")
    config = ball_cfg(folder, generations=1)
    evolve_ok(config, folder / "run")
    return config, folder / "run"


def test_evolve_writes_a_complete_run_folder(tmp_path):
    out = tmp_path / "run"
    result = neatpar_cli("evolve", "--config", ball_cfg(tmp_path), "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert "gen    2" in result.stdout and "agent-steps/s" in result.stdout
    assert sorted(os.listdir(out / "checkpoints")) == ["checkpoint-1.gz", "checkpoint-2.gz", "checkpoint-3.gz"]
    assert len(stats_rows(out)) == 3
    record = json.load(open(out / "run.json"))  # the run's settings: its config's text and the flags
    assert record["config_text"] == open(tmp_path / "ball.cfg").read() and record["flags"] == {}
    winner = genome_from_dict(json.load(open(out / "winner.json")))   # loads without pickle
    assert winner.nodes and (out / "winner.pickle").exists()
    assert (out / "winner.dot").read_text().startswith("digraph winner")
    assert (out / "fitness.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert list((out / "sim-logs").glob("Player-*.log"))
    # neat-python's own Checkpointer reads neatpar's checkpoints.
    restored = neat.Checkpointer.restore_checkpoint(str(out / "checkpoints" / "checkpoint-2.gz"))
    assert restored.generation == 2 and len(restored.population) == 8


@pytest.mark.slow
def test_neatpar_s_neat_step_gives_the_run_neat_python_s_classes_give(tmp_path):
    """neatpar evolve runs the NEAT step with neatpar's classes unless neat_step = neat-python; a
    seeded run is the same either way: stats, winner, and the last checkpoint's population."""
    runs = {}
    for step in ("neatpar", "neat-python"):
        out = tmp_path / step
        config = ball_cfg(tmp_path, f"{step}.cfg", generations=5, interval=5, neat_step=step, pop_size=24,
                          env_args="--agents 8 --max-steps 80", max_steps=80)
        result = neatpar_cli("evolve", "--config", config, "--out", str(out))
        assert result.returncode == 0, result.stderr
        restored = neat.Checkpointer.restore_checkpoint(str(out / "checkpoints" / "checkpoint-5.gz"))
        runs[step] = (stats_rows(out), json.load(open(out / "winner.json")), restored)
    ours, theirs = runs["neatpar"], runs["neat-python"]
    assert type(ours[2].population[next(iter(ours[2].population))]) is neatpar.Genome
    assert type(theirs[2].population[next(iter(theirs[2].population))]) is neat.DefaultGenome
    assert ours[0] == theirs[0] and ours[1] == theirs[1]
    assert [genes_of(g) for g in ours[2].population.values()] == [genes_of(g) for g in theirs[2].population.values()]
    assert len({row[2] for row in ours[0]}) > 1  # the runs evolve (the mean fitness moves)


@pytest.mark.slow
def test_resume_continues_exactly_and_a_fixed_seed_repeats(tmp_path):
    config = ball_cfg(tmp_path, generations=4, interval=2)
    full, part, again = tmp_path / "full", tmp_path / "part", tmp_path / "again"
    assert neatpar_cli("evolve", "--config", config, "--out", str(full)).returncode == 0
    assert neatpar_cli("evolve", "--config", config, "--out", str(part), "--generations", "2").returncode == 0
    resumed = neatpar_cli("evolve", "--config", config, "--resume", str(part / "checkpoints" / "checkpoint-2.gz"),
                          "--generations", "4")  # the same config given again changes nothing
    assert resumed.returncode == 0 and resumed.stderr == "", resumed.stderr
    assert stats_rows(full) == stats_rows(part)
    assert json.load(open(full / "winner.json")) == json.load(open(part / "winner.json"))
    assert neatpar_cli("evolve", "--config", config, "--out", str(again)).returncode == 0
    assert stats_rows(again) == stats_rows(full)


@pytest.mark.slow
@pytest.mark.parametrize("envs", [1, 2])
def test_a_ctrnn_run_on_the_hover_build_evolves_and_resumes_exactly(tmp_path, envs):
    """network = ctrnn through neatpar evolve, on one simulator and on two env hosts: the run
    stopped after 2 generations and resumed is the run that went through in one go."""
    config = hover_cfg(tmp_path, generations=4, interval=2, envs=envs)
    full, part = tmp_path / "full", tmp_path / "part"
    assert neatpar_cli("evolve", "--config", config, "--out", str(full)).returncode == 0
    assert neatpar_cli("evolve", "--config", config, "--out", str(part), "--generations", "2").returncode == 0
    resumed = neatpar_cli("evolve", "--config", config, "--resume", str(part / "checkpoints" / "checkpoint-2.gz"),
                          "--generations", "4")
    assert resumed.returncode == 0, resumed.stderr
    rows = stats_rows(full)
    assert rows == stats_rows(part) and len(rows) == 4
    assert json.load(open(full / "winner.json")) == json.load(open(part / "winner.json"))
    assert len({row[2] for row in rows}) > 1  # the mean fitness moves
    winner = json.load(open(full / "winner.json"))
    assert len({node["time_constant"] for node in winner["nodes"]}) > 1  # time constants evolve


@pytest.mark.parametrize("over, message", [
    ({"network": "ctrnm"}, "[neatpar] network = ctrnm is not one of feedforward, recurrent, ctrnn"),
    ({"ctrnn_time_step": 0}, "[neatpar] ctrnn_time_step = 0 must be greater than 0"),
    ({"ctrnn_decision_time": "soon"}, "[neatpar] ctrnn_decision_time = soon is not a number"),
    ({"ctrnn_time_step": 0.00005}, "ctrnn_decision_time = 0.1 in steps of ctrnn_time_step = 5e-05 is 2000 Euler"),
    ({"time_constant_min_value": 0.0}, "time_constant_min_value = 0.0 lets a node's time constant reach 0.0"),
])
def test_bad_ctrnn_settings_are_one_line_errors(tmp_path, over, message):
    one_line_error(tmp_path, ["evolve", "--config", hover_cfg(tmp_path, **over)], message)


def test_missing_config_file(tmp_path):
    one_line_error(tmp_path, ["evolve", "--config", str(tmp_path / "nope.cfg")], "not found")


def test_missing_neatpar_section(tmp_path):
    one_line_error(tmp_path, ["evolve", "--config", write_config(tmp_path, "plain.cfg")], "no [neatpar] section")


def test_unknown_key_suggests_the_close_one(tmp_path):
    one_line_error(tmp_path, ["evolve", "--config", ball_cfg(tmp_path, max_step=3)],
        "[neatpar] max_step is not a setting (did you mean max_steps?)")


def test_a_misspelt_role_suggests_the_close_one(tmp_path):
    one_line_error(tmp_path, ["evolve", "--config", ball_cfg(tmp_path, behaviors="Ball3D?team=0: populaton")],
        "[neatpar] behaviors = Ball3D?team=0: populaton has 'populaton', which is not a role (did you mean "
        "population?) nor a genome file")


def test_bad_value(tmp_path):
    one_line_error(tmp_path, ["evolve", "--config", ball_cfg(tmp_path, max_steps=-1)], "max_steps = -1 is out of range")


def test_build_missing(tmp_path):
    one_line_error(tmp_path, ["evolve", "--config", ball_cfg(tmp_path, env=str(tmp_path / "nothing"))], "not found")


def test_build_not_executable(tmp_path):
    (tmp_path / "game.x86_64").write_text("#!/bin/sh\n")
    one_line_error(tmp_path, ["evolve", "--config", ball_cfg(tmp_path, env=str(tmp_path / "game"))], "not executable")


def test_behavior_absent_lists_the_present_ones(tmp_path):
    line = one_line_error(tmp_path, ["evolve", "--config", ball_cfg(tmp_path, behaviors="Nope?team=0: population")],
               "behavior 'Nope?team=0' is not in the environment")
    assert "'Ball3D?team=0'" in line


def test_observation_width_mismatch_names_both(tmp_path):
    one_line_error(tmp_path, ["evolve", "--config", ball_cfg(tmp_path, num_inputs=5)], "observes 8 values but the genomes have num_inputs = 5")


def test_action_width_mismatch_names_both(tmp_path):
    one_line_error(tmp_path, ["evolve", "--config", ball_cfg(tmp_path, num_outputs=3)], "takes 2 action values")


def test_visual_observations_count_as_inputs(tmp_path):
    one_line_error(tmp_path, ["evolve", "--config", ball_cfg(tmp_path, env_args="--agents 2 --visual 1")],
                   "observes 24 values but the genomes have num_inputs = 8: set num_inputs = 24 (sensor sizes [8, 16])")


def test_simulator_dying_at_start_shows_its_log(tmp_path):
    one_line_error(tmp_path, ["evolve", "--config", ball_cfg(tmp_path, env_args="--agents -3", timeout=10)],
        "agents must be an integer from 1 to 4096", code=1)


def test_simulator_timeout(tmp_path):
    silent = tmp_path / "silent.x86_64"
    silent.write_text("#!/bin/sh\nexec sleep 60\n")
    silent.chmod(0o755)
    one_line_error(tmp_path, ["evolve", "--config", ball_cfg(tmp_path, env=str(tmp_path / "silent"), timeout=2)],
        "did not connect within 2 s", code=1)


@ON_THE_EDITOR_PORT
def test_a_run_on_the_editor_asks_for_play_then_says_what_to_do_in_the_editor(tmp_path):
    assert port_free(EDITOR_PORT), f"port {EDITOR_PORT} is taken: the Editor's path is tested on it, free"
    out = tmp_path / "run"
    result = neatpar_cli("evolve", "--config", ball_cfg(tmp_path, env="editor", worker_id=0, timeout=1),
                         "--out", str(out))
    assert result.returncode == 1, result.stderr
    assert result.stderr.strip().splitlines() == [
        "neatpar: warning: waiting for the Unity Editor on port 5004: press Play in the Editor now (within 1 s)",
        "neatpar: error: the Unity Editor did not connect on port 5004 within 1 s: press Play in the Editor after "
        "neatpar says it is waiting for it, and within the 1 s ([neatpar] timeout); if it was already playing, stop "
        "Play and press it again; check that the agents' Behavior Type is Default and that the project uses ML-Agents "
        "communication API 1.x"]


def test_corrupt_or_truncated_checkpoint(tmp_path, one_generation):
    config, run = one_generation
    good = (run / "checkpoints" / "checkpoint-1.gz").read_bytes()
    cut = tmp_path / "cut.gz"
    cut.write_bytes(good[: len(good) // 2])
    one_line_error(tmp_path, ["evolve", "--config", config, "--resume", str(cut)], "corrupt or truncated")
    garbage = tmp_path / "garbage.gz"
    garbage.write_bytes(gzip.compress(b"not a pickle"))
    one_line_error(tmp_path, ["evolve", "--config", config, "--resume", str(garbage)], "corrupt or truncated")


def test_resume_with_other_input_output_counts(tmp_path, one_generation):
    _, run = one_generation
    other = ball_cfg(tmp_path, name="other.cfg", num_inputs=6)
    one_line_error(tmp_path, ["evolve", "--config", other, "--resume", str(run / "checkpoints" / "checkpoint-1.gz")],
        "changes [DefaultGenome] num_inputs (8 -> 6) of the config the run started with")


def test_unwritable_run_folder_is_refused_before_the_simulator_starts(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    result = neatpar_cli("evolve", "--config", ball_cfg(tmp_path), "--out", str(blocker / "run"))
    assert result.returncode == 2 and "is not writable" in result.stderr
    assert not list(tmp_path.glob("**/Player-*.log"))


@pytest.mark.parametrize("sig, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_interrupt_checkpoints_and_resume_alone_continues(tmp_path, sig, code):
    config = ball_cfg(tmp_path, generations=200, interval=50)
    out = tmp_path / "run"
    run = Run(config, out)
    run.wait_for("gen    1")
    run.proc.send_signal(sig)
    returncode, err = run.finish(timeout=60)
    assert returncode == code, err
    checkpoints = sorted((out / "checkpoints").glob("checkpoint-*.gz"))
    assert checkpoints and not list((out / "checkpoints").glob(".*tmp*"))
    latest = max(checkpoints, key=lambda p: int(p.name.split("-")[1].split(".")[0]))
    generation = int(latest.name.split("-")[1].split(".")[0])
    assert err.strip().endswith(f"resume with --resume {latest}"), err
    # The best genome so far is left where a finished run leaves its winner, for play and export.
    assert run.lines[-1] == f"best genome so far: {out / 'winner.json'}\n", run.lines
    winner = genome_from_dict(json.load(open(out / "winner.json")))
    assert winner.fitness == max(float(row[1]) for row in stats_rows(out))
    assert (out / "winner.onnx").exists()
    # What the message suggests, as it says: the checkpoint alone (the run's settings are in it).
    resumed = neatpar_cli("evolve", "--resume", str(latest), "--generations", str(generation + 1))
    assert resumed.returncode == 0, resumed.stderr
    assert stats_rows(out)[-1][0] == str(generation)


def test_complete_extinction_is_one_line_with_the_run_folder_complete(tmp_path):
    """Every species removed by stagnation (max_stagnation = 0, no species elitism) with
    reset_on_extinction = false: neat-python raises CompleteExtinctionException after the first
    generation's reproduction."""
    config = ball_cfg(tmp_path, generations=5, max_stagnation=0, species_elitism=0)
    out = tmp_path / "run"
    result = neatpar_cli("evolve", "--config", config, "--out", str(out))
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 1 and len(lines) == 1, result.stderr
    assert lines[0].startswith("neatpar: error: every species went extinct in generation 0")
    assert "reset_on_extinction = True" in lines[0] and "species_elitism" in lines[0]
    assert {"winner.json", "winner.pickle", "winner.dot", "stats.csv"} <= set(os.listdir(out))
    assert len(stats_rows(out)) == 1
    winner = genome_from_dict(json.load(open(out / "winner.json")))
    assert winner.fitness == max(float(r[1]) for r in stats_rows(out))
    restored = neat.Checkpointer.restore_checkpoint(str(out / "checkpoints" / "checkpoint-0.gz"))
    assert restored.generation == 0 and len(restored.population) == 8


# ---------------------------------------------------------------- a newcomer's path


def test_a_failed_start_leaves_no_runs_folder(tmp_path):
    config = ball_cfg(tmp_path, num_inputs=5)  # the build observes 8 values
    result = subprocess.run([sys.executable, "-m", "neatpar", "evolve", "--config", config],
                            capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert result.returncode == 2 and "set num_inputs = 8" in result.stderr
    assert not (tmp_path / "runs").exists()
    # The simulator had started and written its log; the error names none, so none is kept.
    assert not [name for name in os.listdir(os.environ["TMPDIR"]) if name.startswith("neatpar-sim-logs-")]


def test_a_run_whose_default_folder_another_run_has_takes_the_next_number(tmp_path):
    """Runs started in the same second get the same default name: every name the run could get in
    the next minute holds a run already, so it must take the next one (`-2`)."""
    now = time.time()
    for second in range(-1, 61):
        taken = tmp_path / "runs" / f"ball-{time.strftime('%Y%m%d-%H%M%S', time.localtime(now + second))}"
        taken.mkdir(parents=True, exist_ok=True)
        (taken / "run.json").write_text("{}")
    result = subprocess.run([sys.executable, "-m", "neatpar", "evolve", "--config", ball_cfg(tmp_path, generations=1)],
                            capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert result.returncode == 0, result.stderr
    folder = result.stdout.splitlines()[0].split(" -> ")[1].split(" (generations")[0]
    assert re.fullmatch(r".*/runs/ball-\d{8}-\d{6}-2", folder) and os.path.exists(os.path.join(folder, "winner.json"))


def test_out_naming_an_existing_run_is_refused_unless_resuming(one_generation):
    config, run = one_generation
    before = sorted(os.listdir(run))
    again = neatpar_cli("evolve", "--config", config, "--out", str(run))
    assert again.returncode == 2
    assert again.stderr.strip() == (f"neatpar: error: run folder {run} already holds a run: choose a new "
                                    f"--out, or continue that run with --resume "
                                    f"{run / 'checkpoints' / 'checkpoint-N.gz'}")
    assert sorted(os.listdir(run)) == before


def test_resuming_past_the_generation_count_is_a_one_line_error(tmp_path):
    config = ball_cfg(tmp_path, generations=2)
    assert neatpar_cli("evolve", "--config", config, "--out", str(tmp_path / "run")).returncode == 0
    winner = (tmp_path / "run" / "winner.json").read_bytes()
    checkpoint = tmp_path / "run" / "checkpoints" / "checkpoint-2.gz"
    result = neatpar_cli("evolve", "--config", config, "--resume", str(checkpoint))
    assert result.returncode == 2
    assert result.stderr.strip() == (f"neatpar: error: checkpoint {checkpoint} is at generation 2, and the run has 2 "
                                     f"generations: nothing to do; resume with --generations greater than 2")
    assert (tmp_path / "run" / "winner.json").read_bytes() == winner


@pytest.mark.parametrize("sig, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_second_interrupt_ends_at_once_quietly_with_the_first_checkpoint_intact(tmp_path, sig, code):
    config = ball_cfg(tmp_path, generations=500, env_args="--agents 8 --max-steps 100", max_steps=100,
                      inference="pool")  # pool workers and shared-memory segments to clean up too
    run = Run(config, tmp_path / "run")
    run.wait_for("gen    1")
    os.kill(run.proc.pid, sig)
    os.kill(run.proc.pid, sig)
    started = time.monotonic()
    returncode, err = run.finish(timeout=60)
    assert returncode == code and time.monotonic() - started < 10
    assert "Traceback" not in err and err.strip().startswith("interrupted: checkpoint"), err
    checkpoint = err.split("--resume ")[-1].strip()
    assert neat.Checkpointer.restore_checkpoint(checkpoint).generation >= 1
    run.assert_clean(segments_expected=True)


# ---------------------------------------------------------------- watching a run (TensorBoard, progress)


def test_the_first_line_names_the_run_folder_and_the_tensorboard_command_and_a_pipe_gets_no_bar(tmp_path):
    import re
    out = tmp_path / "runs" / "ball-1"
    result = neatpar_cli("evolve", "--config", ball_cfg(tmp_path, generations=2), "--out", str(out))
    assert result.returncode == 0, result.stderr
    first = result.stdout.splitlines()[0]
    assert first.startswith(f"neatpar evolve: {tmp_path / 'ball.cfg'} -> {out} ")
    assert first.endswith(f" --logdir {tmp_path / 'runs'}") and result.stdout.splitlines()[-1] == first[first.index(
        "watch it: "):]
    # The command runs as printed, from where neatpar was run (after make demo, .venv/bin is not on PATH).
    command = first.split("watch it: ")[1].split(" --logdir ")[0]
    assert subprocess.run(shlex.split(command) + ["--version_tb"], cwd=ROOT, capture_output=True,
                          timeout=120).returncode == 0, command
    assert "\r" not in result.stdout + result.stderr and not re.search(PROGRESS_BAR, result.stdout + result.stderr)
    assert sorted(f for f in os.listdir(out) if f.startswith("events.out.tfevents.")) != []


def test_tensorboard_shows_each_generation_of_a_resumed_run_once_with_its_stats_csv_values(tmp_path):
    """Generation 2 runs twice (the first run goes on past checkpoint-2, the resume starts there):
    TensorBoard keeps the resumed run's points, which stats.csv has too."""
    import csv

    import numpy as np
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    config = ball_cfg(tmp_path, generations=4, interval=2, env_args="--agents 4 --max-steps 15 --stats 1")
    run = tmp_path / "run"
    assert neatpar_cli("evolve", "--config", config, "--out", str(run), "--generations", "3").returncode == 0
    resumed = neatpar_cli("evolve", "--resume", str(run / "checkpoints" / "checkpoint-2.gz"), "--generations", "4")
    assert resumed.returncode == 0, resumed.stderr
    with open(run / "stats.csv") as f:
        table = list(csv.DictReader(f))
    assert [r["generation"] for r in table] == ["0", "1", "2", "3"]
    for folder, tag, column in (("", "Throughput/Generation Seconds", "seconds"),
                                ("", "NEAT/Best Fitness", "best_fitness"),
                                ("game", "Game/Episodes", "game:Game/Episodes")):
        events = EventAccumulator(str(run / folder), size_guidance={"scalars": 0})
        events.Reload()
        points = [(e.step, e.value) for e in events.Scalars(tag)]
        assert points == [(int(r["generation"]), np.float32(float(r[column]))) for r in table], tag


# ---------------------------------------------------------------- resume with the run's own settings

def checkpoint_generations(out) -> list[int]:
    return sorted(int(p.name.split("-")[1].split(".")[0]) for p in (out / "checkpoints").glob("checkpoint-*.gz"))


@pytest.mark.slow
@pytest.mark.parametrize("flags", [("--seed", "5", "--generations", "6"), ("--envs", "2", "--generations", "6")])
def test_resume_from_the_checkpoint_alone_repeats_the_uninterrupted_run(tmp_path, flags):
    """The flags of the original run are not typed again: the checkpoint holds them."""
    config = ball_cfg(tmp_path, generations=3, interval=2)
    full, fork = tmp_path / "full", tmp_path / "fork"
    assert neatpar_cli("evolve", "--config", config, "--out", str(full), *flags).returncode == 0
    resumed = neatpar_cli("evolve", "--resume", str(full / "checkpoints" / "checkpoint-2.gz"), "--out", str(fork))
    assert resumed.returncode == 0 and resumed.stderr == "", resumed.stderr
    assert resumed.stdout.splitlines()[0].startswith(
        f"neatpar evolve: {tmp_path / 'ball.cfg'} -> {fork} (generations 2..5, resumed from checkpoint-2.gz)")
    assert len(stats_rows(full)) == 6 and stats_rows(fork) == stats_rows(full)
    assert json.load(open(fork / "winner.json")) == json.load(open(full / "winner.json"))
    assert checkpoint_generations(fork) == [4, 6]


@pytest.mark.slow
def test_every_run_ends_on_a_checkpoint_of_its_last_generation_and_can_be_extended(tmp_path):
    config = ball_cfg(tmp_path, generations=3, interval=5)
    short, whole, fork = tmp_path / "short", tmp_path / "whole", tmp_path / "fork"
    assert neatpar_cli("evolve", "--config", config, "--out", str(short)).returncode == 0
    assert checkpoint_generations(short) == [3]  # 3 is no multiple of checkpoint_interval = 5
    extended = neatpar_cli("evolve", "--resume", str(short / "checkpoints" / "checkpoint-3.gz"), "--generations", "7")
    assert extended.returncode == 0, extended.stderr
    assert checkpoint_generations(short) == [3, 5, 7]
    assert neatpar_cli("evolve", "--config", config, "--out", str(whole), "--generations", "7").returncode == 0
    assert stats_rows(short) == stats_rows(whole)  # extending a finished run is exact
    forked = neatpar_cli("evolve", "--resume", str(short / "checkpoints" / "checkpoint-5.gz"), "--out", str(fork),
                         "--generations", "6")
    assert forked.returncode == 0, forked.stderr
    assert checkpoint_generations(fork) == [6] and stats_rows(fork) == stats_rows(whole)[:6]


def test_a_resume_refuses_what_would_change_its_results_and_notes_what_does_not(tmp_path):
    config = ball_cfg(tmp_path, generations=1)
    out = tmp_path / "run"
    assert neatpar_cli("evolve", "--config", config, "--out", str(out), "--seed", "5").returncode == 0
    checkpoint = str(out / "checkpoints" / "checkpoint-1.gz")
    seed = one_line_error(tmp_path, ["evolve", "--resume", checkpoint, "--seed", "6", "--generations", "2"],
               "--seed 6 differs from the run's seed = 5")
    assert seed.endswith("leave out --seed to continue the run, or start a new run with --seed 6")
    one_line_error(tmp_path, ["evolve", "--resume", checkpoint, "--envs", "2", "--generations", "2"],
        "--envs 2 differs from the run's envs = 1")
    noted = neatpar_cli("evolve", "--resume", checkpoint, "--inference", "pool", "--generations", "2")
    assert noted.returncode == 0, noted.stderr
    assert noted.stderr.splitlines() == ["neatpar: note: --inference pool replaces the run's inference = inprocess; "
                                         "the generations' results stay as they would have been"]
    assert json.load(open(out / "run.json"))["flags"] == {"seed": "5", "inference": "pool", "generations": "2"}


def test_a_fitness_threshold_that_stops_the_run_is_said_with_its_checkpoint(tmp_path):
    config = ball_cfg(tmp_path, generations=5)
    text = open(config).read().replace("fitness_threshold = 1e9", "fitness_threshold = -10")
    open(config, "w").write(text.replace("no_fitness_termination = true", "no_fitness_termination = false"))
    out = tmp_path / "run"
    result = neatpar_cli("evolve", "--config", config, "--out", str(out), "--quiet")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[1] == (f"fitness_threshold reached: generation 0's max fitness is at least -10 ([NEAT] "
                        f"fitness_threshold), so the run stops here (set no_fitness_termination = True to run every "
                        f"generation); checkpoint {out / 'checkpoints' / 'checkpoint-0.gz'}")
    assert len(stats_rows(out)) == 1 and checkpoint_generations(out) == [0] and lines[2].startswith("winner: ")


def test_a_checkpoint_of_an_earlier_neatpar_without_settings_asks_for_the_config(tmp_path, one_generation):
    from neatpar.record.checkpoint import Checkpoint
    config, run = one_generation
    checkpoint = Checkpoint.load(str(run / "checkpoints" / "checkpoint-1.gz"))
    old = tmp_path / "old.gz"
    old.write_bytes(gzip.compress(checkpoint.without_run_settings().to_bytes()))
    one_line_error(tmp_path, ["evolve", "--resume", str(old), "--generations", "2"],
        f"checkpoint {old} holds no settings (an earlier neatpar wrote it): give the run's config with --config")
    resumed = neatpar_cli("evolve", "--config", config, "--resume", str(old), "--generations", "2", "--out",
                          str(tmp_path / "again"))
    assert resumed.returncode == 0, resumed.stderr


def test_evolve_without_config_or_checkpoint_is_one_line(tmp_path):
    one_line_error(tmp_path, ["evolve"], "--config is missing: give a neat-python config file with a [neatpar] section")


def test_resume_from_a_file_that_is_not_a_checkpoint_says_so(tmp_path, one_generation):
    _, run = one_generation
    winner = run / "winner.json"
    one_line_error(tmp_path, ["evolve", "--resume", str(winner)],
        f"{winner} is not a checkpoint: resume from a run folder's checkpoints/checkpoint-N.gz")


@pytest.mark.slow
def test_two_runs_started_at_the_same_moment_on_one_folder_leave_one_run_and_one_error(tmp_path):
    config = ball_cfg(tmp_path, generations=2)
    out = tmp_path / "runs" / "shared"
    runs = [Run(config, out), Run(config, out)]  # started back to back: both meet in the claim
    results = [run.finish(timeout=300) for run in runs]
    codes = sorted(code for code, _ in results)
    assert codes == [0, 2], results
    winner_run, refused = (runs[0], runs[1]) if results[0][0] == 0 else (runs[1], runs[0])
    error = [r for r in results if r[0] == 2][0][1].strip().splitlines()
    assert len(error) == 1 and error[0] in (
        f"neatpar: error: run folder {out} is in use by another neatpar run: choose another --out, or wait for that "
        f"run to end",
        f"neatpar: error: run folder {out} already holds a run: choose a new --out, or continue that run with "
        f"--resume {out / 'checkpoints' / 'checkpoint-N.gz'}"), error
    assert refused.lines == [] and len(stats_rows(out)) == 2
    assert len(list(out.glob("events.out.tfevents.*"))) == 1
    winner = json.load(open(out / "winner.json"))
    assert f"winner: genome {winner['key']}, fitness {winner['fitness']:.3f}{fresh_note(winner)}\n" in winner_run.lines


# ---------------------------------------------------------------- messages a newcomer meets


def kept_log(line: str) -> str:
    """The simulator log an error line names; its folder is removed when the test ends."""
    return line.split("its log ")[1].split(" ends: ")[0]


def test_a_typo_in_env_args_stops_the_run_naming_it(tmp_path):
    line = one_line_error(tmp_path, ["evolve", "--config", ball_cfg(tmp_path, env_args="--agnts 32")],
               "--agnts is not an option of the ball build (did you mean --agents?)", code=1)
    shutil.rmtree(os.path.dirname(kept_log(line)))
    assert "died at start" in line


def test_a_simulator_that_dies_at_start_names_its_log_where_it_is_kept(tmp_path):
    line = one_line_error(tmp_path, ["evolve", "--config", ball_cfg(tmp_path, env_args="--agents -3", timeout=10)],
               "agents must be an integer from 1 to 4096", code=1)
    log = kept_log(line)
    try:
        assert "agents must be an integer from 1 to 4096" in open(log).read()  # the run folder is gone, the log not
    finally:
        shutil.rmtree(os.path.dirname(log))


def test_missing_neatpar_section_names_both_kinds_of_environment(tmp_path):
    line = one_line_error(tmp_path, ["evolve", "--config", write_config(tmp_path, "plain.cfg")], "no [neatpar] section")
    assert "env (a build path, with behaviors; or gymnasium:ID" in line




def test_a_novelty_run_resumed_from_a_checkpoint_equals_a_straight_run(tmp_path):
    """configs/maze-novelty-fitness.cfg, small: the novelty archive, its threshold and its random
    stream are in the checkpoint, so a run resumed from its generation-2 checkpoint leaves the
    stats (novelty columns included) and winner of a straight run of 4 generations."""
    from support.runs import stats_table
    from support.searches import maze_cfg
    config = maze_cfg(tmp_path, "maze-novelty-fitness.cfg", pop=10, steps=15, generations=4)
    straight, part = tmp_path / "straight", tmp_path / "part"
    assert neatpar_cli("evolve", "--config", config, "--out", str(straight), "--quiet").returncode == 0
    first = neatpar_cli("evolve", "--config", config, "--out", str(part), "--quiet", "--generations", "2")
    assert first.returncode == 0, first.stderr
    resumed = neatpar_cli("evolve", "--resume", str(part / "checkpoints" / "checkpoint-2.gz"), "--generations", "4",
                          "--quiet")
    assert resumed.returncode == 0, resumed.stderr
    timing = ("seconds", "scored_steps_per_s")
    rows = [{k: v for k, v in row.items() if k not in timing} for row in stats_table(straight / "stats.csv")]
    assert rows == [{k: v for k, v in row.items() if k not in timing} for row in stats_table(part / "stats.csv")]
    assert len(rows) == 4 and rows[-1]["mean_novelty"] != "" and int(rows[-1]["archive_size"]) > 0
    assert json.load(open(part / "winner.json")) == json.load(open(straight / "winner.json"))


@pytest.mark.slow
def test_a_map_elites_run_resumes_exactly_and_exports_and_plays_any_elite(tmp_path):
    """configs/maze-map-elites.cfg, small: the archive is in the checkpoint, so a run interrupted by
    Ctrl+C and resumed from its checkpoint leaves the archive, stats and winner of a straight run of
    as many generations; archive.json and its heat map are in the run folder, and `export --cell`
    writes an elite's brain, which onnxruntime runs to the outputs of the elite's own network;
    `play --cell` plays it."""
    from support.onnx_models import checked_session
    from support.runs import stats_table
    from support.searches import maze_cfg
    import onnx
    config = maze_cfg(tmp_path, "maze-map-elites.cfg", pop=12, steps=20, generations=100)
    straight, part = tmp_path / "straight", tmp_path / "part"
    run = Run(config, part)
    run.wait_for("gen    1")
    run.proc.send_signal(signal.SIGINT)
    returncode, err = run.finish(timeout=60)
    assert returncode == 130, err
    latest = int(err.strip().rsplit("checkpoint-", 1)[1].split(".")[0])   # the generation that was running
    generations = str(latest + 1)
    resumed = neatpar_cli("evolve", "--resume", str(part / "checkpoints" / f"checkpoint-{latest}.gz"),
                          "--generations", generations, "--quiet")
    assert resumed.returncode == 0, resumed.stderr
    assert neatpar_cli("evolve", "--config", config, "--out", str(straight), "--quiet",
                       "--generations", generations).returncode == 0
    archive = json.load(open(straight / "archive.json"))
    assert json.load(open(part / "archive.json")) == archive and archive["filled"] > 1
    timing = ("seconds", "scored_steps_per_s")
    rows = [{k: v for k, v in row.items() if k not in timing} for row in stats_table(straight / "stats.csv")]
    assert rows == [{k: v for k, v in row.items() if k not in timing} for row in stats_table(part / "stats.csv")]
    assert rows[-1]["archive_size"] == str(archive["filled"]) and float(rows[-1]["coverage"]) == archive["coverage"]
    assert float(rows[-1]["qd_score"]) == archive["qd_score"] and rows[-1]["mean_novelty"] == ""
    assert json.load(open(part / "winner.json")) == json.load(open(straight / "winner.json"))
    assert (straight / "archive.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    elite = archive["cells"][-1]
    cell = ",".join(map(str, elite["index"]))
    out = tmp_path / "elite.onnx"
    exported = neatpar_cli("export", "--config", config, "--genome", str(straight / "archive.json"), "--cell", cell,
                           "--out", str(out))
    assert exported.returncode == 0 and f"genome {elite['genome_key']} " in exported.stdout, exported.stderr
    genome = genome_from_dict(elite["genome"])
    neat_config = neat.Config(neat.DefaultGenome, neat.DefaultReproduction, neat.DefaultSpeciesSet,
                              neat.DefaultStagnation, config)
    observation = np.linspace(-1, 1, 12, dtype=np.float32)[None]
    session = checked_session(onnx.load(str(out)))
    actions = session.run(["continuous_actions"], {"obs_0": observation})[0]
    expected = np.clip(neat.nn.FeedForwardNetwork.create(genome, neat_config).activate(observation[0].tolist()), -1, 1)
    assert np.allclose(actions[0], expected, atol=1e-5)
    played = neatpar_cli("play", "--config", config, "--genome", str(straight / "archive.json"), "--cell", cell,
                         "--episodes", "1")
    assert played.returncode == 0, played.stderr
    assert played.stdout.startswith(f"genome {elite['genome_key']}: 1 episode, return ")
    assert f"{elite['fitness']:.3f}" in played.stdout


def test_a_hyperneat_run_on_the_camera_build_leaves_its_substrate_and_repeats_on_env_hosts(tmp_path):
    """network = hyperneat through neatpar evolve on the camera build: substrate.json and the
    sensors' shapes in the run folder; the winner's network rebuilt from winner.json and
    substrate.json alone acts as the run's kernel, and winner.onnx in onnxruntime plays the
    kernel's returns; the seeded run repeats on two env hosts; a resume with another substrate
    (a key, or the coordinates file's contents) is refused in one line."""
    import numpy as np
    import onnx
    from neatpar.nn.hyperneat import phenotype
    from neatpar.nn.substrate_file import read_substrate
    from neatpar.nn.substrate_population import SubstratePopulation
    from neatpar.genome_file import load_genome
    from support.configs import camera_cfg
    from support.onnx_models import checked_session, play_returns

    coordinates = tmp_path / "outputs.json"
    coordinates.write_text('{"outputs": [[-0.5, 1.0], [0.5, 1.0]]}')
    config = camera_cfg(tmp_path, substrate_coordinates="outputs.json")
    full, hosted = tmp_path / "full", tmp_path / "hosted"
    evolved = neatpar_cli("evolve", "--config", config, "--out", str(full))
    assert evolved.returncode == 0 and f"  {full / 'substrate.json'}\n" in evolved.stdout, evolved.stderr
    substrate = read_substrate(str(full / "substrate.json"))
    assert substrate.sizes == (192, 2) and substrate.dimensions == 3 and substrate.io.sensors == ((8, 8, 3),)
    assert json.load(open(full / "behaviors.json"))["Camera?team=0"]["sensors"] == [
        {"shape": [8, 8, 3], "visual": True, "channels_first": False}]

    winner = load_genome(str(full / "winner.json"))   # neat-python's defaults: no config needed
    kernel = SubstratePopulation.create([winner], neat.Config(neat.DefaultGenome, neat.DefaultReproduction,
                                        neat.DefaultSpeciesSet, neat.DefaultStagnation, config), substrate)
    rebuilt = phenotype(winner, None, substrate)
    images = np.random.default_rng(0).uniform(size=(5, 192))
    by_hand = images
    for w, b in zip(rebuilt.weights, rebuilt.biases):
        by_hand = np.tanh(2.5 * (by_hand @ w + b))   # neat-python's tanh, the substrate's activation
    assert np.allclose(by_hand, kernel.activate(images, np.zeros(5, np.int64)), atol=1e-12)

    session = checked_session(onnx.load(str(full / "winner.onnx")))
    args = ["--agents", "4", "--max-steps", "12", "--size", "8"]
    through_kernel = play_returns(
        lambda obs: np.clip(kernel.activate(obs[0].reshape(len(obs[0]), -1), np.zeros(len(obs[0]), np.int64)), -1, 1),
        "camera", args, 4)
    through_onnx = play_returns(
        lambda obs: session.run(["continuous_actions"], {"obs_0": obs[0].transpose(0, 3, 1, 2)})[0], "camera", args, 4)
    assert np.allclose(through_onnx, through_kernel, atol=1e-4) and len(set(through_kernel)) > 1

    exports_plays_and_repeats_on_two_hosts(config, full, hosted, tmp_path / "brain.onnx")

    checkpoint = str(full / "checkpoints" / "checkpoint-1.gz")
    one_line_error(tmp_path, ["evolve", "--config", camera_cfg(tmp_path, "changed.cfg", substrate_hidden="4",
                                                               substrate_coordinates="outputs.json"),
                              "--resume", checkpoint, "--generations", "3"], "substrate_hidden")
    coordinates.write_text('{"outputs": [[-0.5, 0.9], [0.5, 0.9]]}')
    one_line_error(tmp_path, ["evolve", "--resume", checkpoint, "--generations", "3"],
                   "the run folder's substrate.json is not the substrate the settings and the game make now (its node "
                   "coordinates differ)")


# ---------------------------------------------------------------- the phase table


def test_the_phase_table_leads_from_planned_to_an_end_and_refuses_any_other_step():
    from neatpar.run.lifecycle import TRANSITIONS, RunPhase, RunLifecycle
    ends = {phase for phase, following in TRANSITIONS.items() if not following}
    assert ends == {RunPhase.FINISHED, RunPhase.EXTINCT, RunPhase.INTERRUPTED, RunPhase.FAILED}
    reached, frontier = set(), [RunPhase.PLANNED]
    while frontier:
        phase = frontier.pop()
        reached.add(phase)
        frontier += [p for p in TRANSITIONS[phase] if p not in reached]
    assert reached == set(RunPhase)
    for phase, following in TRANSITIONS.items():   # an interrupt or a failure can end every phase that is not an end
        assert phase in ends or {RunPhase.INTERRUPTED, RunPhase.FAILED} <= set(following)
    lifecycle = RunLifecycle.__new__(RunLifecycle)
    lifecycle.phase, lifecycle.reached = RunPhase.PLANNED, [RunPhase.PLANNED]
    with pytest.raises(RuntimeError, match="a run cannot go from planned to running"):
        lifecycle._to(RunPhase.RUNNING)
    lifecycle._to(RunPhase.FOLDER_CLAIMED)
    lifecycle._to(RunPhase.FAILED)
    assert lifecycle.reached == [RunPhase.PLANNED, RunPhase.FOLDER_CLAIMED]   # what is left to release
