"""The system's processes as neatpar uses them (neatpar/processes.py), on real processes and
signals: the CPUs this process may use, start times that tell a process from a later one with its
PID, kills that spare such a later process, a process's own children killed, the stop signals, a
signal sent again to the main thread, and a program started apart from the terminal's Ctrl+C.
Where a call exists on one platform only (os.sched_getaffinity, signal.pthread_kill, os.setsid,
Windows' SIGBREAK), the fallback is tested here with the call removed or added."""
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from neatpar import processes
from support.processes import wait_gone

SLEEPER = [sys.executable, "-c", "import time; time.sleep(60)"]
KILLED = -signal.SIGKILL if hasattr(signal, "SIGKILL") else signal.SIGTERM  # TerminateProcess's code on Windows


@pytest.fixture
def sleeper():
    child = subprocess.Popen(SLEEPER)
    yield child
    if child.poll() is None:
        child.kill()
    child.wait()


def run_python(code: str) -> str:
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_the_cpu_count_is_the_affinity_mask_where_there_is_one():
    # a real mask of one CPU, set in a process of its own
    assert run_python("import os; from neatpar import processes\n"
                      "os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})\n"
                      "print(processes.cpu_count())").split() == ["1"]
    assert processes.cpu_count() == len(os.sched_getaffinity(0))


def test_without_an_affinity_mask_the_cpu_count_is_the_machine_s(monkeypatch):
    monkeypatch.delattr(os, "process_cpu_count", raising=False)   # Python 3.13's reads the affinity mask too
    monkeypatch.delattr(os, "sched_getaffinity")
    assert processes.cpu_count() == os.cpu_count()
    monkeypatch.setattr(os, "cpu_count", lambda: None)
    assert processes.cpu_count() == 1


def test_python_s_own_process_cpu_count_comes_first(monkeypatch):
    monkeypatch.setattr(os, "process_cpu_count", lambda: 3, raising=False)   # Python 3.13's
    assert processes.cpu_count() == 3


def test_a_start_stamp_is_when_the_process_started():
    started = time.time()
    child = subprocess.Popen(SLEEPER)
    try:
        stamp = processes.start_stamp(child.pid)
        # psutil's Linux start times count from the boot time in whole seconds
        assert started - 1.5 <= stamp / 1e6 <= time.time() + 1.5
        assert processes.start_stamp(child.pid) == stamp   # the same on every reading
    finally:
        child.kill()
        child.wait()
    assert processes.start_stamp(child.pid) == 0          # gone (and reaped)
    assert processes.start_stamp(0) == processes.start_stamp(-5) == 0


def test_a_pid_is_the_process_that_started_at_its_stamp_only(sleeper):
    stamp = processes.start_stamp(sleeper.pid)
    assert processes.is_running(sleeper.pid, stamp)
    later = stamp + round((processes.START_TOLERANCE + 1) * 1e6)   # as if the PID named a later process
    assert not processes.is_running(sleeper.pid, later)
    assert not processes.is_running(sleeper.pid, 0)                 # nothing was published


def test_a_kill_spares_a_later_process_that_got_the_pid(sleeper):
    stamp = processes.start_stamp(sleeper.pid)
    assert not processes.kill(sleeper.pid, stamp + round((processes.START_TOLERANCE + 1) * 1e6))
    time.sleep(0.2)
    assert sleeper.poll() is None
    assert processes.kill(sleeper.pid, stamp)
    assert sleeper.wait(timeout=10) == KILLED
    assert not processes.kill(sleeper.pid, stamp)   # gone: nothing to kill


def test_a_process_kills_its_own_children_and_lives_on():
    script = ("import subprocess, sys, time\n"
              "from neatpar import processes\n"
              f"children = [subprocess.Popen({SLEEPER!r}) for _ in range(2)]\n"
              "time.sleep(0.2)\n"
              "processes.kill_children()\n"
              "print(*[c.wait(timeout=10) for c in children], *[c.pid for c in children], flush=True)\n")
    codes_and_pids = run_python(script).split()
    assert codes_and_pids[:2] == [str(KILLED)] * 2
    assert not wait_gone([int(pid) for pid in codes_and_pids[2:]])


def test_the_stop_signals_are_ctrl_c_sigterm_sighup_and_windows_sigbreak_where_there_is_one(monkeypatch):
    assert processes.stop_signals() == (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
    assert processes.console_signals() == (signal.SIGINT, signal.SIGHUP)
    assert [processes.exit_status(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)] == [130, 143, 129]
    monkeypatch.delattr(signal, "SIGHUP")   # as on Windows,
    monkeypatch.setattr(signal, "SIGBREAK", 21, raising=False)   # whose signal module has SIGBREAK
    assert processes.stop_signals() == (signal.SIGINT, signal.SIGTERM, 21)
    assert processes.console_signals() == (signal.SIGINT, 21)
    assert [processes.exit_status(s) for s in (signal.SIGINT, signal.SIGTERM, 21)] == [130, 143, 143]


def test_after_a_hang_up_output_to_a_terminal_goes_nowhere_and_output_to_a_file_stays(tmp_path):
    """A pseudo-terminal on stdout, a file on stderr: after quiet_hung_up_terminal the terminal
    receives nothing more, the file all that is written."""
    import pty
    master, slave = pty.openpty()
    log = tmp_path / "stderr.txt"
    script = ("import os, sys\nfrom neatpar import processes\n"
              "print('before', flush=True)\nprocesses.quiet_hung_up_terminal()\n"
              "print('after', flush=True)\nprint('to the file', file=sys.stderr, flush=True)\n")
    with open(log, "w") as stderr:
        done = subprocess.run([sys.executable, "-c", script], stdout=slave, stderr=stderr, timeout=60)
    os.close(slave)
    received = os.read(master, 65536).decode()
    os.close(master)
    assert done.returncode == 0
    assert "before" in received and "after" not in received
    assert log.read_text() == "to the file\n"


@pytest.mark.parametrize("pthread_kill", [True, False], ids=["pthread_kill", "raise_signal"])
def test_a_signal_sent_again_from_a_thread_runs_its_handler_in_the_main_thread(monkeypatch, pthread_kill):
    if not pthread_kill:
        monkeypatch.delattr(signal, "pthread_kill")   # as on Windows
    seen = []
    previous = signal.signal(signal.SIGTERM, lambda signum, frame: seen.append(threading.current_thread()))
    try:
        sender = threading.Thread(target=processes.signal_thread, args=(threading.main_thread().ident, signal.SIGTERM))
        sender.start()
        sender.join()
        deadline = time.monotonic() + 5
        while not seen and time.monotonic() < deadline:
            time.sleep(0.01)
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert seen == [threading.main_thread()]


def test_a_program_started_apart_from_the_terminal_has_a_session_of_its_own():
    child = subprocess.Popen(SLEEPER, **processes.apart_from_terminal())
    try:
        assert os.getsid(child.pid) == child.pid != os.getsid(0)
    finally:
        child.kill()
        child.wait()


def test_where_there_are_no_sessions_it_gets_a_process_group_of_its_own(monkeypatch):
    monkeypatch.delattr(os, "setsid")
    monkeypatch.setattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0x200, raising=False)   # Windows' value
    assert processes.apart_from_terminal() == {"creationflags": 0x200}
