"""Where a build's program is (neatpar/envs/unity/builds.py), on each platform the file that
mlagents-envs' own validate_environment_path finds, with both told the same platform (path logic
only: the files are made here); and the shipped stand-in builds started through their launchers by
the real UnityEnvironment: the Linux script, the macOS app bundle (mlagents-envs' macOS look-up,
the bundle's script run here), and on Windows the neatpar-sim program given the .cmd, whose task it
runs with the simulators' package beside it (run here in its Linux form, the script pip makes where
it makes an .exe on Windows)."""
import os
import stat
import sys
import sysconfig

import pytest
from mlagents_envs import env_utils

from neatpar.envs.unity.bridge import SimulatorBridge
from neatpar.envs.unity.builds import Build, resolve_build, sim_program, stand_in_arguments, stand_in_task
from neatpar.errors import ConfigError
from support.paths import BUILDS
from support.processes import wait_gone
from support.simulators import free_worker_id

TASKS = ("ball", "camera", "duel", "hover", "probe", "teams")


def program(path: str) -> str:
    """An executable file at `path` (its folders made)."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write("#!/bin/sh\n")
    os.chmod(path, 0o755)
    return path


def on(monkeypatch, platform: str) -> None:
    """neatpar and mlagents-envs both told they run on `platform` (mlagents-envs reads its own
    copy of sys.platform, taken when it was imported); sysconfig's variables, which it reads once,
    read on the real one first."""
    sysconfig.get_config_vars()
    monkeypatch.setattr(sys, "platform", platform)
    monkeypatch.setattr(env_utils, "platform", platform)


LAYOUTS = {   # platform: (files made, the path env names, the program that runs)
    "linux player": ("linux", ["game.x86_64", "game.x86"], "game", "game.x86_64"),
    "linux x86 player": ("linux", ["game.x86"], "game.x86", "game.x86"),
    "linux file": ("linux", ["game"], "game", "game"),
    "macos bundle": ("darwin", ["game.app/Contents/MacOS/game"], "game", "game.app/Contents/MacOS/game"),
    "macos bundle named": ("darwin", ["game.app/Contents/MacOS/game"], "game.app", "game.app/Contents/MacOS/game"),
    "macos other program": ("darwin", ["game.app/Contents/MacOS/Game Player"], "game", "game.app/Contents/MacOS/Game Player"),
    "windows player": ("win32", ["game.exe", "game.x86_64"], "game", "game.exe"),
    "windows player named": ("win32", ["game.exe"], "game.exe", "game.exe"),
    "windows folder": ("win32", ["game/UnityCrashHandler64.exe", "game/Game.exe"], "game", "game/Game.exe"),
}


@pytest.mark.parametrize("layout", LAYOUTS)
def test_the_program_is_the_one_mlagents_envs_starts_on_that_platform(tmp_path, monkeypatch, layout):
    platform, files, named, runs = LAYOUTS[layout]
    for name in files:
        program(str(tmp_path / name))
    on(monkeypatch, platform)
    build = resolve_build(str(tmp_path / named))
    assert build.program == str(tmp_path / runs) and build.arguments == ()
    assert env_utils.validate_environment_path(build.file_name) == build.program


@pytest.mark.parametrize("platform, looked_for", [
    ("linux", "game.x86_64, {base}.x86 and {base}"),
    ("darwin", "game.app/Contents/MacOS/game and any program in {base}.app/Contents/MacOS"),
    ("win32", "game.exe, a player in {base}/ and the stand-in {base}.cmd")])
def test_a_missing_build_names_what_was_looked_for_on_that_platform(tmp_path, monkeypatch, platform, looked_for):
    program(str(tmp_path / "other.x86_64"))
    on(monkeypatch, platform)
    base = str(tmp_path / "game")
    with pytest.raises(ConfigError) as error:
        resolve_build(base)
    assert str(error.value) == (f"simulator build {base} not found (looked for {tmp_path}/{looked_for.format(base=base)}); "
                                f"fix [neatpar] env (relative to the config file) or use env = editor")


def test_a_program_without_the_right_to_run_is_refused_with_the_fix(tmp_path, monkeypatch):
    bundled = program(str(tmp_path / "game.app/Contents/MacOS/game"))
    os.chmod(bundled, stat.S_IRUSR | stat.S_IWUSR)
    on(monkeypatch, "darwin")
    with pytest.raises(ConfigError, match=rf"simulator build {bundled} is not executable: chmod \+x {bundled}$"):
        resolve_build(str(tmp_path / "game"))


@pytest.mark.parametrize("task", TASKS)
def test_every_shipped_build_has_a_launcher_for_each_platform(monkeypatch, task):
    found = {}
    for platform in ("linux", "darwin", "win32"):
        with monkeypatch.context() as m:
            on(m, platform)
            found[platform] = resolve_build(os.path.join(BUILDS, task))
    assert found["linux"] == Build(os.path.join(BUILDS, f"{task}.x86_64"), os.path.join(BUILDS, f"{task}.x86_64"))
    assert found["darwin"] == Build(os.path.join(BUILDS, f"{task}.app", "Contents", "MacOS", task),
                                    os.path.join(BUILDS, f"{task}.app"))
    assert found["win32"] == Build(sim_program(), sim_program(), (os.path.join(BUILDS, f"{task}.cmd"),))
    assert stand_in_task(os.path.join(BUILDS, f"{task}.cmd")) == task
    bundle_script = open(found["darwin"].program).read()
    assert f'"$(dirname "$0")/../../../_launch" {task} "$@"' in bundle_script


def test_the_stand_in_program_is_the_one_installed_beside_this_python():
    assert sim_program() == os.path.join(os.path.dirname(sys.executable), "neatpar-sim")


def test_windows_starts_the_stand_in_program_by_its_exe(tmp_path, monkeypatch):
    """mlagents-envs, told it runs on Windows, starts the program by the name pip gives it there."""
    exe = program(str(tmp_path / "Scripts" / "neatpar-sim.exe"))
    on(monkeypatch, "win32")
    assert env_utils.validate_environment_path(exe) == exe


def test_the_stand_in_program_finds_the_launcher_among_unity_s_arguments_and_runs_its_task_first():
    launcher = os.path.join(BUILDS, "duel.cmd")
    argv = ["-nographics", "-batchmode", "--mlagents-port", "5005", launcher, "--agents", "3"]   # as mlagents-envs passes them
    assert stand_in_arguments(argv) == (BUILDS, ["duel", "-nographics", "-batchmode", "--mlagents-port", "5005",
                                                 "--agents", "3"])


def test_the_stand_in_program_without_a_launcher_is_refused_with_the_fix():
    with pytest.raises(ConfigError, match=r"neatpar-sim runs a stand-in build and was given none \(no NAME.cmd among "
                                          r"\['ball', '--agents', '3'\]\): point \[neatpar\] env at unity_builds/NAME, "
                                          r"or run unity_builds/NAME.cmd$"):
        stand_in_arguments(["ball", "--agents", "3"])


def test_a_cmd_that_is_no_stand_in_launcher_is_refused_with_the_fix(tmp_path, monkeypatch):
    (tmp_path / "game.cmd").write_text("@echo off\r\nstart game.exe %*\r\n")
    on(monkeypatch, "win32")
    with pytest.raises(ConfigError, match=r"game.cmd is not one of neatpar's stand-in builds .*: on Windows, point "
                                          r"\[neatpar\] env at a player NAME.exe$"):
        resolve_build(str(tmp_path / "game"))


def started(monkeypatch, platform: str, args=("--agents", "3")):
    """A bridge to the ball build resolved as on `platform` (mlagents-envs told so too when
    `platform` is macOS: its look-up into the bundle is what runs), its game launched and reset."""
    sysconfig.get_config_vars()
    with monkeypatch.context() as m:
        m.setattr(sys, "platform", platform)
        bridge = SimulatorBridge(os.path.join(BUILDS, "ball"), args=list(args), worker_id=free_worker_id())
    if platform == "darwin":
        monkeypatch.setattr(env_utils, "platform", "darwin")
    bridge.env.reset()
    return bridge


@pytest.mark.parametrize("platform", ["linux", "darwin", "win32"])
def test_the_shipped_ball_build_starts_through_its_launcher(monkeypatch, platform):
    bridge = started(monkeypatch, platform)
    pid = bridge.process_pid
    try:
        decisions, _ = bridge.env.get_steps("Ball3D?team=0")
        assert len(decisions) == 3   # the build's own option, after the task
        launched = bridge.env._process.args   # what mlagents-envs started
        runs = {"linux": os.path.join(BUILDS, "ball.x86_64"),
                "darwin": os.path.join(BUILDS, "ball.app", "Contents", "MacOS", "ball"), "win32": sim_program()}
        assert launched[0] == runs[platform]
        tail = ([os.path.join(BUILDS, "ball.cmd")] if platform == "win32" else []) + ["--agents", "3"]   # after Unity's
        assert launched[-len(tail):] == tail
    finally:
        bridge.close()
    assert not wait_gone([pid])
