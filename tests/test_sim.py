"""The simulator builds as programs (neatpar/sim/player.py and the ball and teams tasks) driven by
the real, unmodified mlagents_envs UnityEnvironment, exactly as it drives a Unity player: the
handshake, specs, steps, side channels, arguments, the launcher and the process's lifetime."""
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

PROBE = "Probe?team=0"


def test_ball_handshake_specs_and_reset():
    with simulator("ball") as env:
        env.reset()
        assert list(env.behavior_specs) == ["Ball3D?team=0"]
        spec = env.behavior_specs["Ball3D?team=0"]
        assert [o.shape for o in spec.observation_specs] == [(8,)]
        assert spec.action_spec.continuous_size == 2 and spec.action_spec.discrete_branches == ()
        decision, terminal = env.get_steps("Ball3D?team=0")
        assert len(decision) == 12 and len(terminal) == 0
        assert decision.obs[0].dtype == np.float32 and np.isfinite(decision.obs[0]).all()
        assert list(decision.agent_id) == list(range(12))


def test_teams_specs_masks_and_groups():
    with simulator("teams", args=["--areas", "3"]) as env:
        env.reset()
        assert sorted(env.behavior_specs) == ["Blue?team=0", "Purple?team=1"]
        for name in env.behavior_specs:
            spec = env.behavior_specs[name]
            assert spec.action_spec.discrete_branches == (5, 2) and spec.action_spec.continuous_size == 0
            decision, _ = env.get_steps(name)
            assert len(decision) == 3
            move_mask, kick_mask = decision.action_mask
            assert move_mask.shape == (3, 5) and kick_mask.shape == (3, 2)
            assert not move_mask[:, 0].any()            # staying is always allowed
            assert kick_mask[:, 1].all()                 # nobody is in reach of the ball at kick-off
            assert len(set(decision.group_id)) == 3 and 0 not in decision.group_id


def test_many_steps_drops_and_same_step_terminal_and_decision():
    with simulator("ball", args=["--agents", "16"]) as env:
        env.reset()
        name = "Ball3D?team=0"
        seen_both = False
        drops = 0
        for _ in range(150):
            decision, terminal = step_with(env, name, lambda n: ActionTuple(continuous=np.ones((n, 2), np.float32)))
            assert len(decision) == 16
            drops += len(terminal)
            if len(terminal):
                assert set(terminal.agent_id) <= set(decision.agent_id)  # ended and asked again
                assert np.allclose(terminal.reward, -1.0) and not terminal.interrupted.any()
                seen_both = True
            assert np.isfinite(decision.obs[0]).all()
        assert seen_both and drops >= 16  # full tilt drops every ball, repeatedly


def test_interrupted_episodes_at_max_steps():
    with simulator("ball", args=["--agents", "4", "--max-steps", "5"]) as env:
        env.reset()
        for step in range(1, 6):
            # A gentle balancing action keeps the balls on for five steps.
            decision, terminal = step_with(env, "Ball3D?team=0", zeros_continuous)
        assert len(terminal) == 4 and terminal.interrupted.all()
        assert np.allclose(terminal.reward, 0.1)


def test_teams_win_gives_group_rewards():
    with simulator("teams", args=["--areas", "2", "--max-steps", "60"]) as env:
        env.reset()
        rewards = []
        for _ in range(60):
            for name, active in (("Blue?team=0", True), ("Purple?team=1", False)):
                decision, _ = env.get_steps(name)
                kick = ~decision.action_mask[1][:, 1] & active
                me_y, ball_y = decision.obs[0][:, 1], decision.obs[0][:, 3]
                moves = np.where(me_y < ball_y, 3, np.where(me_y > ball_y, 4, 1)) * active
                env.set_actions(name, ActionTuple(discrete=np.column_stack([moves, kick.astype(int)])))
            env.step()
            _, terminal = env.get_steps("Blue?team=0")
            rewards.extend(terminal.group_reward.tolist())
        assert 1.0 in rewards  # Blue chases and kicks; Purple stands still


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


def masked_probe(strict: bool, log_folder):
    """The probe with one branch of 3 actions, action 0 masked for every agent."""
    return simulator("probe", args=["--discrete", "3", "--mask-first", "1", "--strict-masks", str(int(strict))],
                     log_folder=str(log_folder), timeout_wait=10)


def test_a_masked_action_ends_a_strict_build_naming_it(tmp_path):
    with pytest.raises(UnityEnvironmentException, match="return code 3"):
        with masked_probe(True, tmp_path) as env:
            env.reset()
            for _ in range(3):
                env.set_actions(PROBE, ActionTuple(discrete=np.array([[1], [2], [0], [1]], np.int32)))
                env.step()
    log = open(next(tmp_path.glob("Player-*.log"))).read()
    assert "error: agent 2 of Probe?team=0 was sent action 0 on branch 0, which the mask sent with its decision " \
           "request forbids (1 masked actions in this exchange)" in log


def test_allowed_actions_pass_a_strict_build_and_a_lenient_one_logs_a_masked_action_once(tmp_path):
    with masked_probe(True, tmp_path / "strict") as env:
        env.reset()
        for _ in range(5):
            env.set_actions(PROBE, ActionTuple(discrete=np.array([[1], [2], [1], [2]], np.int32)))
            env.step()
    with masked_probe(False, tmp_path / "lenient") as env:
        env.reset()
        for _ in range(5):
            env.step()  # mlagents-envs' empty action: 0, masked
    log = open(next((tmp_path / "lenient").glob("Player-*.log"))).read()
    assert log.count("was sent action 0 on branch 0, which the mask sent with its decision request forbids") == 1
    assert "forbids" not in open(next((tmp_path / "strict").glob("Player-*.log"))).read()


def test_launcher_works_from_any_working_directory(tmp_path):
    script = ("import sys\nfrom mlagents_envs.environment import UnityEnvironment\n"
              f"env = UnityEnvironment('../{os.path.relpath(os.path.join(BUILDS, 'ball'), tmp_path.parent)}', "
              f"worker_id={free_worker_id()}, no_graphics=True)\nenv.reset()\nenv.close()\nprint('ok')\n")
    result = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert result.stdout.strip() == "ok", result.stderr

