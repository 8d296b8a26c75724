"""Tests of run/hints.py: paths shown relative to the current folder when below it, and commands
as they can be typed here (neatpar as the user ran it, tensorboard from PATH, beside this Python,
or what installs it)."""
import os
import sys

from neatpar.run import hints


def test_a_path_below_the_current_folder_is_shown_relative_and_one_elsewhere_as_given(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert hints.shown_path(str(tmp_path / "runs" / "a")) == os.path.join("runs", "a")
    assert hints.shown_path("/elsewhere/b") == "/elsewhere/b"


def test_neatpar_is_repeated_as_it_was_run(monkeypatch):
    monkeypatch.setattr(sys, "argv", ["/opt/tools/neatpar"])
    monkeypatch.setenv("PATH", "")
    assert hints.program() == "/opt/tools/neatpar"   # not on PATH: as typed
    monkeypatch.setattr(sys, "argv", ["neatpar"])
    assert hints.program() == "neatpar"
    monkeypatch.setattr(sys, "argv", ["script.py"])   # neatpar.evolve() in a script or a notebook
    assert hints.program() == f"{hints.shown_path(sys.executable)} -m neatpar"   # its Python not on PATH
    monkeypatch.setenv("PATH", os.path.dirname(sys.executable))   # an activated environment
    assert hints.program() == f"{os.path.basename(sys.executable)} -m neatpar"


def test_a_program_is_named_from_path_else_beside_this_python_else_what_installs_it(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    tool = tmp_path / "sometool"
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o755)
    assert hints.command("sometool") == "sometool"
    assert hints.command("no-such-tool-here") == "pip install no-such-tool-here && no-such-tool-here"
    beside = os.path.join(os.path.dirname(sys.executable), "python")
    monkeypatch.setenv("PATH", "")
    assert hints.command("python") == hints.shown_path(beside)


def test_tensorboard_watches_the_folder_that_holds_the_run_beside_the_others(tmp_path, monkeypatch):
    """From above runs/ it watches runs/; from runs/ itself, the run folder."""
    run = tmp_path / "runs" / "ball-1"
    run.mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    assert hints.watch_command(str(run)).endswith(" --logdir runs")
    monkeypatch.chdir(tmp_path / "runs")
    assert hints.watch_command(str(run)).endswith(" --logdir ball-1")
