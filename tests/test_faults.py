"""Faults a long `neatpar evolve` meets, injected into real runs: killed and hung pool workers, a
killed simulator, Ctrl+C and SIGTERM at random moments. After each: the run completes or stops
cleanly, no process or shared-memory segment is left, and the checkpoints load."""
import os
import random
import signal
import threading
import time

import pytest

from neatpar.record.checkpoint import Checkpoint
from support.configs import ball_cfg
from support.runs import NEATPAR_COMMAND, Run, neatpar_cli, stats_rows

pytestmark = pytest.mark.slow


def test_pool_workers_killed_and_hung_mid_run_change_nothing(tmp_path):
    config = ball_cfg(tmp_path, generations=4, interval=2, inference="pool", workers=2, timeout=3)
    reference = neatpar_cli("evolve", "--config", config, "--out", str(tmp_path / "reference"))
    assert reference.returncode == 0, reference.stderr
    run = Run(config, tmp_path / "faulty")
    run.wait_for("gen    0")
    first, second = run.workers()[:2]
    os.kill(first, signal.SIGKILL)
    run.wait_for("gen    1")
    os.kill(second, signal.SIGSTOP)  # a worker that hangs: killed after the timeout, step redone
    code, err = run.finish()
    assert code == 0, err
    assert "redoing it" in err
    assert stats_rows(tmp_path / "faulty") == stats_rows(tmp_path / "reference")  # the same run, exactly
    run.assert_clean(segments_expected=True)


def test_simulator_killed_mid_episode_is_relaunched_and_the_generation_completes(tmp_path):
    config = ball_cfg(tmp_path, generations=12, interval=2, env_args="--agents 4 --max-steps 200", max_steps=200,
                      inference="pool")  # the pool's segments live through the relaunch
    run = Run(config, tmp_path / "run")
    run.wait_for("gen    1")
    for pid in run.simulators():
        os.kill(pid, signal.SIGKILL)
    code, err = run.finish()
    assert code == 0, err
    assert "relaunching it" in err
    assert [int(row[0]) for row in stats_rows(tmp_path / "run")] == list(range(12))
    run.assert_clean(segments_expected=True)


def test_simulator_failing_three_times_is_a_clear_error_with_checkpoints_intact(tmp_path):
    config = ball_cfg(tmp_path, generations=50, interval=1, inference="pool")
    run = Run(config, tmp_path / "run")
    run.wait_for("gen    1")
    stop = threading.Event()

    def keep_killing():
        while not stop.is_set():
            for pid in run.simulators():
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.05)
    killer = threading.Thread(target=keep_killing, daemon=True)
    killer.start()
    try:
        code, err = run.finish()
    finally:
        stop.set()
        killer.join()
    assert code == 1
    assert err.strip().splitlines()[-1].startswith("neatpar: error: the simulator failed 3 times")
    for checkpoint in (tmp_path / "run" / "checkpoints").glob("checkpoint-*.gz"):
        Checkpoint.load(str(checkpoint))
    run.assert_clean(segments_expected=True)


def test_ctrl_c_and_sigterm_at_random_moments(tmp_path):
    rng = random.Random(7)
    config = ball_cfg(tmp_path, generations=200, interval=2, inference="auto")
    latest = None
    for trial in range(10):
        sig = (signal.SIGINT, signal.SIGTERM)[trial % 2]
        out = tmp_path / f"run{trial}"
        run = Run(config, out, command=[NEATPAR_COMMAND])  # what a user runs
        time.sleep(rng.uniform(1.0, 5.0))
        run.proc.send_signal(sig)
        code, err = run.finish(timeout=120)
        assert code == (130 if sig == signal.SIGINT else 143), err
        checkpoints = sorted((out / "checkpoints").glob("checkpoint-*.gz")) if out.exists() else []
        for checkpoint in checkpoints:
            Checkpoint.load(str(checkpoint))
        assert not list(out.glob("**/.*.tmp-*"))
        run.assert_clean()
        if checkpoints:
            latest = max(checkpoints, key=lambda p: int(p.name.split("-")[1].split(".")[0]))
    assert latest is not None
    generation = int(latest.name.split("-")[1].split(".")[0])
    resumed = neatpar_cli("evolve", "--resume", str(latest), "--generations", str(generation + 1))
    assert resumed.returncode == 0, resumed.stderr
