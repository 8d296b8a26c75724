"""Tests of sim/player.py, the game side of the ML-Agents protocol that the simulator builds run
(started by their launcher, unity_builds/_launch): its handshake and exchanges, side channels,
seed, arguments and usage errors, exit statuses and the process's lifetime, driven by the real,
unmodified mlagents_envs UnityEnvironment exactly as it drives a Unity player, and its parts
called directly."""
import os
import signal
import subprocess
import sys
import time
import uuid

import numpy as np
import pytest
from mlagents_envs.base_env import ActionTuple
from mlagents_envs.exception import UnityEnvironmentException
from mlagents_envs.side_channel.engine_configuration_channel import EngineConfigurationChannel
from mlagents_envs.side_channel.environment_parameters_channel import EnvironmentParametersChannel
from mlagents_envs.side_channel.raw_bytes_channel import RawBytesChannel
from mlagents_envs.side_channel.stats_side_channel import StatsSideChannel
from support.paths import BUILDS, ROOT
from support.processes import pid_alive, wait_gone, wait_until
from support.simulators import free_worker_id, simulator, step_with, zeros_continuous


def test_side_channels_engine_parameters_stats_and_unknown(tmp_path):
    engine, params, stats = EngineConfigurationChannel(), EnvironmentParametersChannel(), StatsSideChannel()
    custom = RawBytesChannel(uuid.uuid4())
    with simulator("ball", args=["--max-steps", "3", "--stats", "1"], log_folder=str(tmp_path),
                   side_channels=[engine, params, stats, custom]) as env:
        engine.set_configuration_parameters(time_scale=20.0)
        params.set_float_parameter("agents", 5)
        custom.send_raw_data(bytearray(b"hello"))
        env.reset()
        decision, _ = env.get_steps("Ball3D?team=0")
        assert len(decision) == 5
        for _ in range(3):
            step_with(env, "Ball3D?team=0", zeros_continuous)
        received = stats.get_and_reset_stats()
        assert len(received["Environment/Episode Length"]) == 5
        assert all(value == 3.0 for value, _ in received["Environment/Episode Length"])
        params.set_float_parameter("no_such_option", 1)
        env.reset()
        assert len(env.get_steps("Ball3D?team=0")[0]) == 5
    log = open(next(tmp_path.glob("Player-*.log"))).read()
    assert "time_scale" in log and "20.0" in log
    assert "is not handled here" in log
    assert "has no option no_such_option" in log


def test_close_ends_the_process():
    with simulator("ball") as env:
        env.reset()
        process = env._process
    assert process.poll() is not None


def test_simulator_exits_by_itself_when_python_is_killed(tmp_path):
    pid_file = tmp_path / "sim.pid"
    script = (
        "import os, sys, time\n"
        "from mlagents_envs.environment import UnityEnvironment\n"
        f"env = UnityEnvironment({os.path.join(BUILDS, 'ball')!r}, worker_id={free_worker_id()}, no_graphics=True)\n"
        "env.reset()\n"
        f"open({str(pid_file)!r}, 'w').write(str(env._process.pid))\n"
        "time.sleep(600)\n"
    )
    python = subprocess.Popen([sys.executable, "-c", script], cwd=ROOT)
    try:
        wait_until(lambda: pid_file.exists() and pid_file.read_text(), 60, "the script to write the simulator's PID")
        sim_pid = int(pid_file.read_text())
        assert pid_alive(sim_pid)
        python.send_signal(signal.SIGKILL)
        python.wait()
        left = wait_gone([sim_pid], 10.0)
    finally:
        if python.poll() is None:
            python.kill()
            python.wait()
    if left:
        os.kill(sim_pid, signal.SIGKILL)
    assert not left, "the simulator outlived the Python process that drove it"


def trajectory(seed, steps=40):
    with simulator("ball", args=["--agents", "6"], seed=seed) as env:
        env.reset()
        rng = np.random.default_rng(123)
        observed = [env.get_steps("Ball3D?team=0")[0].obs[0].copy()]
        for _ in range(steps):
            decision, _ = step_with(env, "Ball3D?team=0",
                                    lambda n: ActionTuple(continuous=rng.uniform(-1, 1, (n, 2)).astype(np.float32)))
            observed.append(decision.obs[0].copy())
        return np.concatenate(observed)


def test_same_seed_same_trajectory_bit_for_bit():
    first, second, other = trajectory(7), trajectory(7), trajectory(8)
    assert np.array_equal(first, second)
    assert not np.array_equal(first, other)


def test_two_simulators_at_once_on_different_worker_ids():
    with simulator("ball", args=["--agents", "3"]) as a, simulator("teams", args=["--areas", "2"]) as b:
        a.reset()
        b.reset()
        for _ in range(5):
            step_with(a, "Ball3D?team=0", zeros_continuous)
            b.step()
        assert len(a.get_steps("Ball3D?team=0")[0]) == 3 and len(b.get_steps("Blue?team=0")[0]) == 2


def test_bad_argument_is_a_clear_log_line_and_nonzero_exit(tmp_path):
    started = time.monotonic()
    with pytest.raises(UnityEnvironmentException, match="return code 2"):
        with simulator("ball", args=["--agents", "-3"], log_folder=str(tmp_path), timeout_wait=10):
            pass
    assert time.monotonic() - started < 20
    log = open(next(tmp_path.glob("Player-*.log"))).read()
    assert "error: agents must be an integer from 1 to 4096, got -3" in log


def test_unknown_unity_flags_are_ignored(tmp_path):
    with simulator("ball", args=["-screen-width", "80", "-force-vulkan"], log_folder=str(tmp_path)) as env:
        env.reset()
    assert "ignored arguments: -screen-width 80 -force-vulkan" in open(next(tmp_path.glob("Player-*.log"))).read()


@pytest.mark.parametrize("args, message", [
    (["--agnts", "32"], "--agnts is not an option of the ball build (did you mean --agents?); its options are "
                        "--agents, --max-steps, --visual, --decision-period"),
    (["--agents", "4", "32"], "'32' is a stray argument: no option of the ball build takes it; its options are "
                              "--agents"),
    (["--areas", "2"], "task 'ball' has no option areas")])
def test_an_argument_the_build_does_not_take_ends_it_with_a_usage_error(tmp_path, args, message):
    with pytest.raises(UnityEnvironmentException, match="return code 2"):
        with simulator("ball", args=args, log_folder=str(tmp_path), timeout_wait=10):
            pass
    assert f"error: {message}" in open(next(tmp_path.glob("Player-*.log"))).read()


def test_launcher_works_from_any_working_directory(tmp_path):
    script = ("import sys\nfrom mlagents_envs.environment import UnityEnvironment\n"
              f"env = UnityEnvironment('../{os.path.relpath(os.path.join(BUILDS, 'ball'), tmp_path.parent)}', "
              f"worker_id={free_worker_id()}, no_graphics=True)\nenv.reset()\nenv.close()\nprint('ok')\n")
    result = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert result.stdout.strip() == "ok", result.stderr
