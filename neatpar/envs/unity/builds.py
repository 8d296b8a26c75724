"""Where a simulator build's program is, found as mlagents-envs finds it on each platform, so that
neatpar checks the file mlagents-envs will start (env_utils.validate_environment_path):

- Linux: the player `NAME.x86_64` or `NAME.x86`, or NAME itself;
- macOS: the app bundle `NAME.app`, its `Contents/MacOS/NAME` or else the program there;
- Windows: the player `NAME.exe`, or the `.exe` in a folder NAME (Unity's crash handler aside).

neatpar's stand-in builds (unity_builds/) ship a launcher for each platform: the shell script
`NAME.x86_64` on Linux and one inside `NAME.app` on macOS, which mlagents-envs starts as it starts a
player; on Windows, where mlagents-envs starts only `.exe` files (a batch file is none, and a script
cannot pass for one), the batch file `NAME.cmd` names the task, and mlagents-envs is given the
`neatpar-sim` program that pip installs with neatpar as an `.exe`, with that batch file as its
first argument after Unity's. The program (`stand_in_program`) runs the simulators' package beside
the batch file (unity_builds/neatpar_sim, which is no part of neatpar) for that task, as
`_launch.cmd` does. That `.exe` (pip's script launcher) runs Python in a job object that ends with
it and exits with Python's status, so killing it kills the game, as killing a player does.
"""
from __future__ import annotations

import glob
import os
import re
import runpy
import sys
import sysconfig
from typing import NamedTuple

from ...errors import ConfigError

SIM_PROGRAM = "neatpar-sim"
SUFFIXES = (".x86_64", ".x86", ".exe", ".app", ".cmd")
# The line of a stand-in build's NAME.cmd that names its task (unity_builds/_launch.cmd runs it).
_CMD_TASK = re.compile(r'^\s*@?call\s+"%~dp0_launch\.cmd"\s+(\S+)\s+%\*\s*$', re.IGNORECASE | re.MULTILINE)
_CRASH_HANDLER = "UnityCrashHandler"


class Build(NamedTuple):
    """A build as mlagents-envs starts it: `program`, the file that runs (checked, named in
    errors); `file_name`, what UnityEnvironment is given (it finds `program` from it); and the
    arguments that come before [neatpar] env_args (a stand-in's task on Windows)."""
    program: str
    file_name: str
    arguments: tuple[str, ...] = ()


def resolve_build(path: str) -> Build:
    """The build a path names on this platform, or a ConfigError naming what was looked for."""
    base = _without_suffix(path)
    if sys.platform == "darwin":
        return _macos(path, base)
    if sys.platform == "win32":
        return _windows(path, base)
    return _linux(path, base)


def _without_suffix(path: str) -> str:
    for suffix in SUFFIXES:
        if path.endswith(suffix):
            return path[: -len(suffix)]
    return path


def _linux(path: str, base: str) -> Build:
    for candidate in (base + ".x86_64", base + ".x86", path):
        if os.path.isfile(candidate):
            return Build(_executable(candidate), candidate)
    raise _not_found(path, f"{base}.x86_64, {base}.x86 and {path}")


def _macos(path: str, base: str) -> Build:
    bundle = base + ".app"
    inside = os.path.join(bundle, "Contents", "MacOS")
    named = os.path.join(inside, os.path.basename(os.path.normpath(base)))
    found = [named] if os.path.isfile(named) else [c for c in glob.glob(os.path.join(inside, "*")) if os.path.isfile(c)]
    if found:
        return Build(_executable(found[0]), bundle)
    raise _not_found(path, f"{named} and any program in {inside}")


def _windows(path: str, base: str) -> Build:
    if os.path.isfile(base + ".exe"):
        return Build(base + ".exe", base + ".exe")
    players = [c for c in glob.glob(os.path.join(base, "*.exe"))
               if not os.path.basename(c).startswith(_CRASH_HANDLER)]
    if players:
        return Build(players[0], players[0])
    if os.path.isfile(base + ".cmd"):
        program = sim_program()
        if program is None:
            raise ConfigError(f"simulator build {base}.cmd is a stand-in build, which runs as the {SIM_PROGRAM} "
                              f"program, and this Python has none: install neatpar in it (pip install -e .)")
        stand_in_task(base + ".cmd")   # refused here, with the fix, if it is no stand-in's launcher
        return Build(program, program, (os.path.abspath(base + ".cmd"),))
    raise _not_found(path, f"{base}.exe, a player in {base}{os.sep} and the stand-in {base}.cmd")


def stand_in_task(launcher: str) -> str:
    """The task a stand-in build's NAME.cmd runs (its `call "%~dp0_launch.cmd" TASK %*` line)."""
    with open(launcher, encoding="utf-8", errors="replace") as f:
        found = _CMD_TASK.search(f.read())
    if found is None:
        raise ConfigError(f"simulator build {launcher} is not one of neatpar's stand-in builds (it has no line "
                          f'call "%~dp0_launch.cmd" TASK %*): on Windows, point [neatpar] env at a player NAME.exe')
    return found.group(1)


def stand_in_arguments(argv: list[str]) -> tuple[str, list[str]]:
    """The folder of the stand-in launcher NAME.cmd among a neatpar-sim program's arguments, and the
    simulator's arguments: its task first, then the others (mlagents-envs passes Unity's arguments
    first and the build's own, the launcher among them, after them)."""
    for index, arg in enumerate(argv):
        if arg.lower().endswith(".cmd") and os.path.isfile(arg):
            return os.path.dirname(os.path.abspath(arg)), [stand_in_task(arg)] + argv[:index] + argv[index + 1:]
    raise ConfigError(f"{SIM_PROGRAM} runs a stand-in build and was given none (no NAME.cmd among {argv}): "
                      f"point [neatpar] env at unity_builds/NAME, or run unity_builds/NAME.cmd")


def stand_in_program() -> int:
    """The `neatpar-sim` program: runs the simulators' package beside the NAME.cmd it is given, for
    that launcher's task, as `python -m neatpar_sim TASK ARGS` does (unity_builds/_launch.cmd)."""
    try:
        folder, argv = stand_in_arguments(sys.argv[1:])
    except ConfigError as error:
        sys.stderr.write(f"{SIM_PROGRAM}: {error}\n")
        return 2
    sys.path.insert(0, folder)
    sys.argv[1:] = argv
    runpy.run_module("neatpar_sim", run_name="__main__", alter_sys=True)
    return 0


def sim_program() -> str | None:
    """The neatpar-sim program installed with neatpar beside this Python's scripts (or the user's
    scripts, after pip install --user): `neatpar-sim.exe` on Windows, `neatpar-sim` elsewhere."""
    folders = [sysconfig.get_path("scripts"), sysconfig.get_path("scripts", sysconfig.get_preferred_scheme("user"))]
    for folder in dict.fromkeys(f for f in folders if f):
        for name in (SIM_PROGRAM + ".exe", SIM_PROGRAM):
            if os.path.isfile(os.path.join(folder, name)):
                return os.path.join(folder, name)
    return None


def _executable(candidate: str) -> str:
    if not os.access(candidate, os.X_OK):
        raise ConfigError(f"simulator build {candidate} is not executable: chmod +x {candidate}")
    return candidate


def _not_found(path: str, looked_for: str) -> ConfigError:
    return ConfigError(f"simulator build {path} not found (looked for {looked_for}); fix [neatpar] env (relative to "
                       f"the config file) or use env = editor")
