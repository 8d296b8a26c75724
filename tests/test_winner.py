"""Tests of run/winner.py: what a run leaves when it ends, and the lines that say so: the winner
as winner.json has it, the files it lists (each one there), and the command that plays it, which
runs as printed; when quiet, one line."""
import json
import os
import shlex
import subprocess

from support.configs import ball_cfg
from support.paths import ROOT
from support.runs import NEATPAR_COMMAND, fresh_note


def evolve(*args) -> str:
    result = subprocess.run([NEATPAR_COMMAND, "evolve", *args], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_the_closing_lines_name_the_winner_its_files_and_a_play_command_that_runs_as_printed(tmp_path):
    out = tmp_path / "run"
    lines = evolve("--config", ball_cfg(tmp_path, generations=2), "--out", str(out)).splitlines()
    winner = json.load(open(out / "winner.json"))
    start = lines.index(f"winner: genome {winner['key']}, fitness {winner['fitness']:.3f}{fresh_note(winner)}")
    listed = [line.strip() for line in lines[start + 1:] if line.startswith("  ")]
    assert {os.path.basename(p) for p in listed} >= {"winner.json", "winner.pickle", "winner.dot", "winner.onnx",
                                                     "fitness.png", "species.png"}
    assert all(os.path.isfile(os.path.join(ROOT, p)) for p in listed), listed
    play = next(line for line in lines if line.startswith("play it: "))[len("play it: "):]
    played = subprocess.run(shlex.split(play) + ["--episodes", "1"], capture_output=True, text=True, cwd=ROOT,
                            timeout=300)
    assert played.returncode == 0, played.stderr
    assert lines[-1].startswith("watch it: ")


def test_a_quiet_run_ends_on_one_line_naming_the_winner_and_its_file(tmp_path):
    out = tmp_path / "run"
    lines = evolve("--config", ball_cfg(tmp_path, generations=1), "--out", str(out), "--quiet").splitlines()
    winner = json.load(open(out / "winner.json"))
    assert len(lines) == 2 and lines[0].startswith("neatpar evolve: ")
    assert lines[1] == (f"winner: genome {winner['key']}, fitness {winner['fitness']:.3f}{fresh_note(winner)}: "
                        f"{out / 'winner.json'}")
