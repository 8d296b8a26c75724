"""Tests of parallel/workers.py, what runs inside a spawn worker before any task: globals
clearing, unguarded scripts, start-up failures, values drawn at import, and Ctrl+C. Each scenario
is a real script run in a real interpreter."""
import fnmatch
import json
import os
import signal
import socket
import subprocess
import sys
import time

import pytest
from support.paths import ROOT
from support.processes import run_marked, wait_gone, wait_until

TESTS = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.join(TESTS, "scripts")


def run_script(name, *args, env=None, timeout=60):
    return subprocess.run([sys.executable, os.path.join(SCRIPTS, name), *args], capture_output=True,
                          text=True, timeout=timeout, env={**os.environ, **(env or {})}, cwd=ROOT)


def last_line(text):
    return [line for line in text.strip().splitlines() if line.strip()][-1]


def test_unguarded_script_ends_in_clear_error_not_respawn_loop():
    started = time.monotonic()
    result = run_script("unguarded_pool.py")
    assert time.monotonic() - started < 30
    assert result.returncode != 0
    assert "unreachable" not in result.stdout
    message = last_line(result.stderr)
    assert message.startswith("neatpar.errors.UnguardedScriptError")
    assert 'if __name__ == "__main__":' in message


def test_module_level_socket_ends_in_clear_error():
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    result = run_script("module_socket.py", env={"NEATPAR_TEST_PORT": str(port)})
    assert result.returncode != 0
    message = last_line(result.stderr)
    assert "UnguardedScriptError" in message and "Address already in use" in message
    assert "__main__" in message


def test_module_level_grpc_server_is_named_in_the_error():
    result = run_script("module_grpc_server.py")
    assert result.returncode != 0
    message = last_line(result.stderr)
    assert "UnguardedScriptError" in message and "'server' (gRPC server)" in message
    assert 'if __name__ == "__main__":' in message


def test_live_and_named_globals_are_placeholders_in_workers():
    result = run_script("cleared_globals.py")
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    for failure_fitness in ("None", "0.0"):  # the program's fault: never a genome's failure fitness
        log, table = out[f"touch_log failure_fitness={failure_fitness}"], out[f"touch_table failure_fitness={failure_fitness}"]
        assert log.startswith("ClearedGlobalError: global 'LOG' (open file) of your main module was cleared")
        assert table.startswith("ClearedGlobalError: global 'TABLE' (cleared by request)")
        for message in (log, table):
            assert "\n" not in message and "failure_fitness" not in message
            assert message.endswith("create it inside the function that runs in the worker.")
        assert out[f"touch_plain failure_fitness={failure_fitness}"] == 42.0
    assert out["parent_log_open"] is True


def test_ctrl_c_stops_workers_promptly_and_reraises(tmp_path):
    pid_file = tmp_path / "pids"
    proc = subprocess.Popen([sys.executable, os.path.join(SCRIPTS, "interrupt.py"), str(pid_file)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, cwd=ROOT)
    try:
        wait_until(lambda: pid_file.exists() and pid_file.read_text(), 30, "the script to write its workers' PIDs")
        workers = [int(p) for p in pid_file.read_text().split()]
        busy = tmp_path / "pids.busy"  # a worker is evaluating a genome: evaluate() is running
        wait_until(busy.exists, 30, "a worker to start evaluating a genome")
        os.killpg(proc.pid, signal.SIGINT)  # what a terminal's Ctrl+C does: the whole group
        started = time.monotonic()
        out, err = proc.communicate(timeout=15)
        assert time.monotonic() - started < 5
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert "KeyboardInterrupt re-raised" in out
    assert proc.returncode in (-signal.SIGINT, 130, 1)
    assert "KeyboardInterrupt" in err
    assert not wait_gone(workers, 2.0)


# ---------------------------------------------------------------- start failures: one error, at once

START_FAILURES = {
    "import": "neatpar.errors.UnguardedScriptError: pool worker ? (pid *) exited with exit code 3 while "
              "re-importing your main script */start_failures.py; spawn re-runs its top level in every worker: "
              "keep what must run only in the main process under `if __name__ == \"__main__\":`",
    "replacement": "neatpar.errors.UnguardedScriptError: pool worker * (pid *) exited with exit code 3 while "
                   "re-importing your main script */start_failures.py; *",
    "unpickle-exit": "neatpar.errors.WorkerStartError: pool worker * (pid *) exited with exit code 3 while loading "
                     "eval_function (unpickling it)",
    "unpickle-name": "neatpar.errors.TransferError: pool workers cannot load eval_function: AttributeError: Can't "
                     "get attribute 'guarded' on <module '__mp_main__' from '*/start_failures.py'>; define it at the "
                     "top level of a module the workers can import (not under `if __name__ == \"__main__\":`)",
    "initializer": "neatpar.errors.WorkerStartError: pool worker * (pid *) exited with exit code 3 in its "
                   "initializer exit_in_initializer",
}


@pytest.mark.parametrize("failure_fitness", ["None", "0.0"])
@pytest.mark.parametrize("mode", sorted(START_FAILURES))
def test_a_worker_that_fails_to_start_is_one_error_at_once_never_a_respawn_loop(tmp_path, mode, failure_fitness):
    result, elapsed = run_marked([os.path.join(SCRIPTS, "start_failures.py"), mode, failure_fitness],
                                 env={"NEATPAR_TEST_MODE": mode, "NEATPAR_TEST_DIR": str(tmp_path)})
    assert elapsed < 15
    assert result.returncode == 1 and "evaluated" not in result.stdout
    last = last_line(result.stderr)
    assert fnmatch.fnmatchcase(last, START_FAILURES[mode]), last
    assert "genome" not in last  # never charged to a genome
    starts = (tmp_path / "starts").read_text().split()
    if mode == "replacement":  # the first two ran genomes; the one started to replace the killed one failed
        assert len(starts) == 3
    else:  # the first failure stops the pool: nothing was started again
        assert 1 <= len(starts) <= 2


@pytest.mark.parametrize("failure_fitness", [None, 0.0])
def test_a_function_that_raises_when_unpickled_in_the_worker_is_one_error_at_once(tmp_path, failure_fitness):
    """It pickles here (`python -c`: by value) but cannot be loaded in a worker: a start failure."""
    script = (
        "import neatpar\n"
        "from support.fitness_fns import Unloadable\n"
        "ARGUMENT = Unloadable()\n"
        "def fitness(genome, config):\n"
        "    return float(ARGUMENT is not None)\n"
        f"with neatpar.ParallelEvaluator(2, fitness, failure_fitness={failure_fitness}) as evaluator:\n"
        "    print('started')\n"
    )
    result, elapsed = run_marked(["-c", script], env={"NEATPAR_TEST_DIR": str(tmp_path)})
    assert elapsed < 15
    assert result.returncode == 1 and "started" not in result.stdout
    assert last_line(result.stderr) == (
        "neatpar.errors.TransferError: pool workers cannot load eval_function: RuntimeError: this object refuses "
        "to be unpickled")
    assert len((tmp_path / "loads").read_text().split()) <= 2  # each worker tried once


def test_stdin_script_runs_without_re_importing_a_file_that_is_not_there(tmp_path):
    """`python - < script.py`: multiprocessing would re-run "<stdin>" in every worker and fail."""
    script = (
        "import neatpar\n"
        "def fitness(genome, config):\n"
        "    return float(genome.key) / 2\n"
        "class Genome:\n"
        "    def __init__(self, key):\n"
        "        self.key, self.fitness = key, None\n"
        "if __name__ == '__main__':\n"
        "    genomes = [(k, Genome(k)) for k in range(6)]\n"
        "    with neatpar.ParallelEvaluator(2, fitness) as evaluator:\n"
        "        evaluator.evaluate(genomes, None)\n"
        "    print([g.fitness for _, g in genomes])\n"
    )
    mark = f"{os.getpid()}-{time.monotonic_ns()}"
    result = subprocess.run([sys.executable, "-"], input=script, capture_output=True, text=True, timeout=60,
                            cwd=tmp_path, env={**os.environ, "NEATPAR_TEST_MARK": mark})
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[0.0, 0.5, 1.0, 1.5, 2.0, 2.5]"
    assert result.stderr == ""


# ---------------------------------------------------------------- module-level state

@pytest.mark.parametrize("mode, generator", [("unseeded-numpy", "numpy.random"), ("unseeded-random", "random"),
                                             ("seeded", None), ("initializer", None)])
def test_values_drawn_unseeded_at_import_differ_in_workers_and_are_warned_about(mode, generator):
    result = run_script("module_state.py", mode)
    assert result.returncode == 0, result.stderr
    differ = json.loads(result.stdout)["differ"]
    if generator is None:  # the fixes the warning names: no difference, and no warning
        assert differ == 0 and result.stderr == ""
    else:
        assert differ > 0  # spawn makes it so: each worker drew its own values
        warnings = [line for line in result.stderr.splitlines() if "RuntimeWarning" in line]
        assert len(warnings) == 1, result.stderr  # once per pool, not once per worker
        assert warnings[0].startswith(os.path.join(SCRIPTS, "module_state.py") + ":")  # the user's line
        assert (f"RuntimeWarning: a spawn worker drew from {generator}'s global generator without seeding it while "
                f"it re-imported your main script") in warnings[0]
        assert "initializer/initargs" in warnings[0]
