"""What runs inside a spawn worker before any task: globals clearing, unguarded scripts, start-up
failures, and Ctrl+C. Each scenario is a real script run in a real interpreter."""
import json
import os
import signal
import socket
import subprocess
import sys
import time

import pytest
from helpers import ROOT, wait_gone


SCRIPTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "scripts")


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
    assert "ClearedGlobalError: global 'LOG' (open file)" in out["touch_log"]
    assert "ClearedGlobalError: global 'TABLE' (cleared by request)" in out["touch_table"]
    assert out["touch_plain"] == 42.0
    assert out["parent_log_open"] is True


def test_ctrl_c_stops_workers_promptly_and_reraises(tmp_path):
    pid_file = tmp_path / "pids"
    proc = subprocess.Popen([sys.executable, os.path.join(SCRIPTS, "interrupt.py"), str(pid_file)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, cwd=ROOT)
    try:
        deadline = time.monotonic() + 30
        while not (pid_file.exists() and pid_file.read_text()) and time.monotonic() < deadline:
            time.sleep(0.05)
        workers = [int(p) for p in pid_file.read_text().split()]
        busy = tmp_path / "pids.busy"  # a worker is evaluating a genome: evaluate() is running
        while not busy.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
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
