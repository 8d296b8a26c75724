"""Env hosts (`envs = N`): each simulator created and owned by one spawned host, work shared
dynamically, lost hosts replaced and their parts run again with identical results, and nothing
left running after Ctrl+C or SIGTERM."""
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from neatpar import ConfigError
from neatpar.run.hosts import split
from neatpar.run.evaluator import UnityEvaluator
from support.configs import ball_cfg
from support.paths import ROOT
from support.processes import cmdline, parent_of, pid_alive, wait_gone, wait_until
from support.runs import Run, evaluator_and_population, fitnesses, neatpar_cli, probe_hosts, stats_rows, undisturbed


def test_split_gives_one_part_per_host_or_fewer_when_one_host_s_agents_suffice():
    assert [list(r) for r in split(10, 2, None)] == [[0, 1, 2, 3, 4], [5, 6, 7, 8, 9]]
    assert [len(r) for r in split(256, 2, 64)] == [128, 128]    # each host's agents play in turns
    assert [len(r) for r in split(256, 2, 128)] == [128, 128]
    assert [len(r) for r in split(256, 2, 256)] == [256]        # one simulator's agents take them all
    assert [len(r) for r in split(7, 3, None)] == [2, 3, 2]     # sizes differ by at most one
    assert [list(r) for r in split(3, 4, None)] == [[0], [1], [2]]


def test_no_agent_sits_idle_while_genomes_wait(tmp_path):
    """8 genomes, two hosts of 4 agents each, episodes of exactly 5 decisions: one part of 4 genomes
    per host fills its agents for the whole generation, so every decision any network made was a
    scored genome's (cut into 2 parts per host, half of each simulator's agents would idle)."""
    evaluator, config, pairs = probe_hosts(tmp_path, agents=4, pop=8)
    try:
        evaluator.evaluate(pairs, config)
        assert evaluator._hosts.agents() == 4
        assert [len(p) for p in evaluator._runner.parts] == [4, 4]
        stats = evaluator.last_stats
        assert stats.episodes == 8 and all(len(r) == 1 for r in evaluator.episode_returns.values())
        assert stats.agent_steps == stats.scored_steps == 8 * 5
    finally:
        evaluator.close()


def test_a_generation_one_simulator_can_hold_runs_as_one_part(tmp_path):
    evaluator, config, pairs = probe_hosts(tmp_path, agents=8, pop=6)
    try:
        evaluator.evaluate(pairs, config)
        assert [len(p) for p in evaluator._runner.parts] == [6]
        assert evaluator.last_stats.episodes == 6
    finally:
        evaluator.close()


def test_each_simulator_belongs_to_one_host_and_results_repeat_run_to_run(tmp_path):
    runs = []
    for attempt in range(2):
        evaluator, config, pairs = evaluator_and_population(tmp_path, name=f"ball{attempt}.cfg")
        try:
            evaluator.evaluate(pairs, config)
            evaluator.evaluate(pairs, config)
            hosts = evaluator._hosts
            simulators = [p for p in hosts.simulator_pids if p]
            assert len(simulators) == 2
            assert sorted(parent_of(p) for p in simulators) == sorted(hosts.pids)  # created by the hosts
            assert evaluator._environment is None  # the main process never made an environment
            assert sorted(set(evaluator._runner.ran_on.values())) == [0, 1]
            runs.append(fitnesses(pairs))
        finally:
            evaluator.close()
        assert not wait_gone(simulators + hosts.pids)
    assert runs[0] == runs[1]
    assert evaluator.last_stats.episodes == len(pairs) and evaluator.last_stats.agent_steps > 0


def test_a_killed_host_is_replaced_and_its_part_runs_again_with_the_same_results(tmp_path):
    expected = undisturbed(tmp_path)
    evaluator, config, pairs = evaluator_and_population(tmp_path, name="faulty.cfg")
    try:
        evaluator.evaluate(pairs, config)
        hosts = evaluator._hosts
        victim, simulator = hosts.pids[1], hosts.simulator_pids[1]
        os.kill(victim, signal.SIGSTOP)  # its next part cannot finish; the other host takes the rest
        killer = threading.Timer(1.0, os.kill, (victim, signal.SIGKILL))
        killer.start()
        evaluator.evaluate(pairs, config)
        killer.join()
        assert fitnesses(pairs) == expected
        assert evaluator._runner.lost == 1
        assert set(evaluator._runner.ran_on.values()) == {0}  # the live host ran the lost part too
        assert not wait_gone([simulator])  # the lost host's simulator was killed by PID
        assert victim not in hosts.pids and len(hosts.pids) == 2  # replaced
    finally:
        evaluator.close()


@pytest.mark.slow
def test_a_hung_host_is_killed_after_the_timeout_and_replaced(tmp_path):
    evaluator, config, pairs = evaluator_and_population(tmp_path)
    try:
        evaluator.evaluate(pairs, config)
        hosts = evaluator._hosts
        victim = hosts.pids[0]
        os.kill(victim, signal.SIGSTOP)
        for _, genome in pairs:
            genome.fitness = None  # so that the second generation must give every genome its own
        started = time.monotonic()
        evaluator.evaluate(pairs, config)
        assert time.monotonic() - started >= hosts.timeout
        assert evaluator._runner.lost == 1 and not pid_alive(victim)
        assert all(g.fitness is not None for _, g in pairs)
    finally:
        evaluator.close()


@pytest.mark.parametrize("sig, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_ctrl_c_and_sigterm_stop_every_host_and_simulator(tmp_path, sig, code):
    config = ball_cfg(tmp_path, generations=500, envs=2, env_args="--agents 4 --max-steps 200", max_steps=200)
    run = Run(config, tmp_path / "run")
    run.wait_for("gen    1")
    assert len(run.simulators()) == 2 and len(run.workers()) == 2
    run.proc.send_signal(sig)
    returncode, err = run.finish(timeout=60)
    assert returncode == code, err
    assert "resume with --resume" in err
    run.assert_clean()  # env hosts run their networks in process: no shared memory to leave


@pytest.mark.slow
def test_envs_from_the_command_line_match_the_config_key(tmp_path):
    plain = ball_cfg(tmp_path, name="plain.cfg", generations=2)
    keyed = ball_cfg(tmp_path, name="keyed.cfg", generations=2, envs=2)
    flag = neatpar_cli("evolve", "--config", plain, "--envs", "2", "--out", str(tmp_path / "flag"))
    key = neatpar_cli("evolve", "--config", keyed, "--out", str(tmp_path / "key"))
    assert flag.returncode == 0 and key.returncode == 0, flag.stderr + key.stderr
    assert "simulators: 2, each in its own env host (local processes)" in flag.stdout
    assert stats_rows(tmp_path / "flag") == stats_rows(tmp_path / "key")


@pytest.mark.parametrize("over, args, message", [
    ({}, ["--envs", "0"], "--envs 0 is out of range: use an integer from 1 to 1024"),
    ({"envs": "0"}, [], "[neatpar] envs = 0 is out of range"),
    ({"envs": 2, "inference": "pool"}, [], "inference = pool with env hosts"),
    ({"envs": 2, "env": "editor"}, [], "env = editor connects to the one Unity Editor"),
    ({"backend": "cloud"}, [], "[neatpar] backend = cloud is not one of local, ray"),
    ({}, ["--backend", "cloud"], "--backend cloud is not one of local, ray"),
])
def test_bad_scale_out_settings_are_one_line_errors(tmp_path, over, args, message):
    out = tmp_path / "run"
    result = neatpar_cli("evolve", "--config", ball_cfg(tmp_path, **over), "--out", str(out), *args)
    assert result.returncode == 2
    assert result.stderr.strip().count("\n") == 0 and message in result.stderr, result.stderr
    assert not out.exists()


def test_an_error_raised_in_a_host_reaches_the_user_as_its_one_line_message(tmp_path):
    out = tmp_path / "run"
    config = ball_cfg(tmp_path, envs=2, num_inputs=5)  # the ball observes 8 values
    result = neatpar_cli("evolve", "--config", config, "--out", str(out))
    assert result.returncode == 2, result.stderr
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("neatpar: error: behavior 'Ball3D?team=0' observes 8 values") and "num_inputs = 8" in last
    assert not out.exists()


@pytest.mark.parametrize("envs", [1, 2])
def test_sigterm_while_simulators_have_not_connected_yet_leaves_nothing(tmp_path, envs):
    silent = tmp_path / "silent.x86_64"  # a build that starts but never connects
    silent.write_text("#!/bin/sh\nexec sleep 60\n")
    silent.chmod(0o755)
    run = Run(ball_cfg(tmp_path, env=str(silent), envs=envs, timeout=30), tmp_path / "run")
    # With env hosts, one host launches its game first (it counts the game's agents).
    wait_until(lambda: run.proc.poll() is not None or [p for p in run.family() if "sleep" in cmdline(p)], 60,
               "a host to launch the game")
    assert run.proc.poll() is None
    run.proc.send_signal(signal.SIGTERM)
    code, err = run.finish(timeout=30)
    assert code == 143, err
    run.assert_clean()


def test_from_config_takes_envs_and_refuses_unknown_settings(tmp_path):
    path = ball_cfg(tmp_path)
    with UnityEvaluator.from_config(path, envs=3) as evaluator:
        assert evaluator.hosted and evaluator.settings.envs == 3
    with pytest.raises(ConfigError, match="simulators is not a setting"):
        UnityEvaluator.from_config(path, simulators=3)
    with pytest.raises(ConfigError, match=r"envs=0 is out of range: use an integer from 1 to 1024"):
        UnityEvaluator.from_config(path, envs=0)


@pytest.mark.slow
def test_the_ball_example_with_two_env_hosts():
    result = subprocess.run([sys.executable, os.path.join("examples", "evolve_ball.py"), "--envs", "2"],
                            capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert result.returncode == 0, result.stderr
    assert "best genome" in result.stdout and "its returns on 3 fresh episodes" in result.stdout


def test_a_host_stopped_while_its_game_is_launching_leaves_no_game():
    """SIGTERM reaches a local env host between forking its game and the bridge learning the
    game's PID: the host's handler kills its own children, so the game does not live on."""
    script = ("import os, signal, subprocess, sys, time\n"
              "import neatpar.run.local_hosts as hosts\n"
              "signal.signal(signal.SIGTERM, hosts._on_sigterm)\n"  # as _host_init installs it; no bridge yet
              "game = subprocess.Popen(['sleep', '60'], start_new_session=True)\n"
              "print(game.pid, flush=True)\n"
              "time.sleep(60)\n")
    host = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, cwd=ROOT)
    game = int(host.stdout.readline())
    assert pid_alive(game)
    host.send_signal(signal.SIGTERM)
    assert host.wait(timeout=30) == 128 + signal.SIGTERM
    assert not wait_gone([game], timeout=10), "the game outlived its host"
