"""Ctrl+C, SIGTERM and a closed terminal in a run (neatpar/run/interrupts.py), with real signals:
raised as exceptions, raised again when C code swallows one, held back for a block, a second one
that waits for the checkpoint and then ends the process, and a run whose terminal closes."""
import os
import signal
import subprocess
import sys
import time

import neat
import numpy as np
import pytest

from neatpar.run.interrupts import Interrupts
from neatpar.errors import Terminated
from support.configs import ball_cfg
from support.paths import ROOT
from support.processes import wait_gone
from support.runs import hang_up

EXCEPTIONS = [(signal.SIGINT, KeyboardInterrupt), (signal.SIGTERM, Terminated)]


class _SignalOnLookup(type):
    """A class whose type's missing attributes are looked up in Python, sending `signum` while numpy
    looks for __array_ufunc__ on it: numpy clears whatever error that look-up raises."""
    signum = signal.SIGTERM
    lookups = 0

    def __getattr__(cls, name):
        if name == "__array_ufunc__":
            type(cls).lookups += 1
            signal.raise_signal(cls.signum)
        raise AttributeError(name)


class Operand(metaclass=_SignalOnLookup):
    pass


def _python_work(seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        time.sleep(0.001)


@pytest.mark.parametrize("signum, exception", EXCEPTIONS)
def test_a_signal_whose_exception_c_code_swallowed_is_raised_again(signum, exception):
    _SignalOnLookup.signum, _SignalOnLookup.lookups = signum, 0
    with Interrupts():
        with pytest.raises(exception):
            compared = np.arange(3) == Operand()
            assert _SignalOnLookup.lookups and not compared.any()  # the signal went off inside numpy, unseen
            _python_work(5)
            pytest.fail("the signal numpy swallowed was not raised again")


def test_the_exception_the_run_has_seen_is_not_sent_again():
    with Interrupts() as interrupts:
        try:
            signal.raise_signal(signal.SIGTERM)
            pytest.fail("SIGTERM raised nothing")
        except Terminated:
            interrupts.seen(kill=lambda: None)
        _python_work(0.5)   # the exception is freed now; nothing is raised again
        interrupts.release()
        _python_work(0.2)


def test_signals_held_for_a_block_are_raised_after_it_first_one_first():
    with Interrupts() as interrupts:
        with pytest.raises(KeyboardInterrupt):
            with interrupts.held():
                signal.raise_signal(signal.SIGINT)
                signal.raise_signal(signal.SIGTERM)
                reached = True
        assert reached


def test_the_handlers_found_are_put_back():
    """Whatever they were (a shell that starts a job in the background leaves SIGINT ignored)."""
    def mine(signum, frame):
        pass

    def also_mine(signum, frame):
        pass
    previous = signal.signal(signal.SIGTERM, mine), signal.signal(signal.SIGINT, also_mine)
    try:
        with Interrupts():
            assert signal.getsignal(signal.SIGTERM) is not mine
            assert signal.getsignal(signal.SIGINT) is not also_mine
        assert signal.getsignal(signal.SIGTERM) is mine
        assert signal.getsignal(signal.SIGINT) is also_mine
    finally:
        signal.signal(signal.SIGTERM, previous[0])
        signal.signal(signal.SIGINT, previous[1])


SECOND_SIGNAL = """
import signal
from neatpar.run.interrupts import Interrupts
from neatpar.errors import Terminated
with Interrupts() as interrupts:
    try:
        signal.raise_signal(signal.SIGTERM)
    except Terminated:
        interrupts.seen(kill=lambda: print("killed", flush=True))
        signal.raise_signal(signal.SIGINT)
        print("the checkpoint is written", flush=True)
        interrupts.release()
        print("not reached", flush=True)
"""


def test_a_second_signal_waits_for_the_checkpoint_then_kills_and_exits_with_its_status():
    result = subprocess.run([sys.executable, "-c", SECOND_SIGNAL], capture_output=True, text=True, cwd=ROOT,
                            timeout=60)
    assert result.stdout.splitlines() == ["the checkpoint is written", "killed"], result.stderr
    assert result.returncode == 130 and not result.stderr


@pytest.mark.slow
def test_a_run_whose_terminal_closes_saves_its_checkpoint_and_leaves_nothing(tmp_path):
    """The terminal a run started in closes (SIGHUP, then every write to it fails), with pool
    workers and a clip recorded every generation: the interrupted generation's checkpoint is saved
    and loads, the exit status is 129, and no process or temporary file is left."""
    config = ball_cfg(tmp_path, generations=200, interval=50, inference="pool", video_interval=1)
    out = tmp_path / "run"
    ended = hang_up("evolve", "--config", config, "--out", str(out), after="gen    2")
    assert ended.status == 129, ended.received
    assert ended.family, "the run had started no process"
    assert not wait_gone(ended.family)
    checkpoints = list((out / "checkpoints").glob("checkpoint-*.gz"))
    assert checkpoints and not list((out / "checkpoints").glob(".*tmp*"))
    assert neat.Checkpointer.restore_checkpoint(str(checkpoints[0])).generation >= 2
    assert not [name for name in os.listdir(os.environ["TMPDIR"]) if name.startswith("neatpar-")]
