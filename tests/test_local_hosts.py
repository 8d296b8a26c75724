"""Env hosts as local processes (neatpar/episodes/local_hosts.py): each simulator created and owned by
one spawned host, a lost host replaced and its simulator killed by PID (only while it is still the
process the host started), hosts' reports through shared memory, and nothing left running after
Ctrl+C or SIGTERM."""
import multiprocessing
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from neatpar import settings as run_config
from neatpar.processes import START_TOLERANCE, start_stamp
from neatpar.episodes.hosts import HostProgress, HostSetup
from neatpar.episodes.local_hosts import HostCells, LocalHosts
from support.configs import ball_cfg
from support.paths import ROOT
from support.processes import cmdline, parent_of, pid_alive, wait_gone, wait_until
from support.runs import Run, evaluator_and_population, fitnesses, neatpar_cli, undisturbed


def idle_hosts(tmp_path, count):
    """LocalHosts for the ball build that have run no part yet."""
    _, settings = run_config.load(ball_cfg(tmp_path, envs=count))
    return LocalHosts(HostSetup(settings, str(tmp_path / "logs")), count)


def test_hosts_start_idle_and_launch_no_simulator_before_a_part_needs_one(tmp_path):
    hosts = idle_hosts(tmp_path, 2)
    try:
        assert len(hosts.pids) == 2 and all(parent_of(pid) == os.getpid() for pid in hosts.pids)
        assert hosts.free() == 2 and hosts.progress() == {}
        assert hosts.simulator_pids == [0, 0]
        pids = hosts.pids
    finally:
        hosts.close()
    assert not wait_gone(pids)


def test_a_lost_host_s_simulator_is_killed_only_while_it_is_the_process_that_host_started(tmp_path):
    """The main process kills a lost host's simulator by the PID the host published, and only if
    that PID still has the start time published with it (a later process that got the PID lives)."""
    hosts = idle_hosts(tmp_path, 1)
    later, game = subprocess.Popen(["sleep", "60"]), subprocess.Popen(["sleep", "60"])
    try:
        cells = hosts._cells
        cells.set(0, HostCells.PID, later.pid)
        # the PID now names a process that started later than the one published with it
        cells.set(0, HostCells.START, start_stamp(later.pid) - round((START_TOLERANCE + 1) * 1e6))
        cells.set(0, HostCells.PART, 3)
        hosts._kill_simulator(0)
        assert hosts.simulator_pids == [0] and cells.get(0, HostCells.PART) == -1  # forgotten all the same
        later.terminate()
        assert later.wait(timeout=10) == -signal.SIGTERM  # it was still alive: no SIGKILL came first
        cells.set(0, HostCells.PID, game.pid)
        cells.set(0, HostCells.START, start_stamp(game.pid))
        hosts._kill_simulator(0)
        assert game.wait(timeout=10) == -signal.SIGKILL
    finally:
        for process in (later, game):
            if process.poll() is None:
                process.kill()
                process.wait()
        hosts.close()


def report_from_a_host(cells, index, reports):
    """A spawned process writing a host's reports into the shared cells."""
    for report in reports:
        cells.report(index, report)


def test_host_cells_carry_a_spawned_host_s_reports_to_the_main_process():
    cells = HostCells(3)
    assert [cells.get(i, HostCells.PART) for i in range(3)] == [-1, -1, -1]  # no part named yet
    reports = [HostProgress(1, generation=0, part=2, episodes=1, scored_steps=5),
               HostProgress(2, generation=1, part=0, episodes=4, scored_steps=70)]
    host = multiprocessing.get_context("spawn").Process(target=report_from_a_host, args=(cells, 1, reports))
    host.start()
    host.join(timeout=60)
    assert host.exitcode == 0
    named = [cells.get(1, cell) for cell in (HostCells.GENERATION, HostCells.PART, HostCells.EPISODES,
                                             HostCells.SCORED)]
    assert named == [1, 0, 4, 70]  # the latest report, its new part's own counts
    assert [cells.get(i, HostCells.PART) for i in (0, 2)] == [-1, -1]  # the other hosts' cells untouched


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
              "import neatpar.episodes.local_hosts as hosts\n"
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
