"""A run started from Python: `neatpar.evolve(config)` and `neatpar.resume(checkpoint)` make the
same run folder, checkpoints, winner files and clips as `neatpar evolve`, which calls `run` here
too. Ctrl+C (a notebook's kernel interrupt) checkpoints the running generation and returns an
INTERRUPTED result; the next `resume` continues it exactly."""
from __future__ import annotations

import difflib
import os

from ..config.settings_model import flags
from ..errors import ConfigError, Terminated
from .interrupts import Interrupts
from .lifecycle import RunPhase, RunLifecycle, RunResult, signal_of
from .plan import RunRequest, make_plan


def evolve(config: str | os.PathLike, out: str | os.PathLike | None = None, *, quiet: bool = False,
           **overrides) -> RunResult:
    """Evolve a population on the environment of `config` (a neat-python config file with a
    [neatpar] section) into the run folder `out` (default: runs/CONFIG-TIMESTAMP). `overrides`
    are [neatpar] keys that `neatpar evolve` takes as flags (generations=, seed=, envs=, ...);
    `quiet`: no progress lines."""
    return _from_python(RunRequest(config=os.fspath(config), flags=_flags(overrides), out=_path(out), quiet=quiet))


def resume(checkpoint: str | os.PathLike, out: str | os.PathLike | None = None, *,
           config: str | os.PathLike | None = None, quiet: bool = False, **overrides) -> RunResult:
    """Continue a run from `checkpoint` (checkpoints/checkpoint-N.gz, or a run folder: its latest
    checkpoint) with its stored settings, in its own folder unless `out` says another;
    `overrides` may extend generations= or change where it runs (envs=, backend=, ...)."""
    return _from_python(RunRequest(config=_path(config), resume=os.fspath(checkpoint), flags=_flags(overrides),
                                   out=_path(out), quiet=quiet))


def run(request: RunRequest, exit_on_second_signal: bool = True, from_python: bool = False) -> RunResult:
    """The run a request asks for, from its plan to its end. A stop signal before the run folder
    exists is raised on; a second one after the checkpoint ends the process when
    `exit_on_second_signal` (the command), else it is raised."""
    with Interrupts(exit_on_second=exit_on_second_signal) as interrupts:
        return RunLifecycle(make_plan(request), interrupts, from_python).execute()


def _from_python(request: RunRequest) -> RunResult:
    try:
        return run(request, exit_on_second_signal=False, from_python=True)
    except (KeyboardInterrupt, Terminated) as stop:   # before the run had a folder: nothing to keep
        return RunResult(RunPhase.INTERRUPTED, None, stop_signal=signal_of(stop))


def _path(path: str | os.PathLike | None) -> str | None:
    return None if path is None else os.fspath(path)


def _flags(overrides: dict) -> tuple[tuple[str, str], ...]:
    """`overrides` as the command line's flags would give them (text); a key that is not a flag
    of `neatpar evolve` is refused, with the close one if any."""
    names = [f.name for f in flags()]
    given = []
    for name, value in overrides.items():
        if name not in names:
            close = difflib.get_close_matches(name, names, n=1)
            hint = f"did you mean {close[0]}? " if close else ""
            raise ConfigError(f"{name} is not a [neatpar] key that can be given here: {hint}give one of "
                              f"{', '.join(names)}, or set it in the config file")
        if isinstance(value, bool) or not isinstance(value, (int, str)):
            raise ConfigError(f"{name} = {value!r}: give a number or a text, as in the config file")
        given.append((name, str(value)))
    return tuple(given)
