"""Processes and shared memory as /proc shows them: children, marked process families, mapped
segments, and waits that fail naming what they waited for; Python modules started as programs."""
import os
import subprocess
import sys
import time
from multiprocessing import resource_tracker

from .paths import ROOT, TESTS


# `python -m MODULE` and `python -c CODE` without the working folder first on sys.path (Python 3.10
# has no -P): the tests start Python from the repository's folder, whose neatpar/ is not the
# installed one where neatpar comes from a wheel (make test-matrix).
INSTALLED_FIRST = "import sys; getattr(sys.flags, 'safe_path', False) or sys.path.pop(0)"
RUN_MODULE = INSTALLED_FIRST + "; import runpy; runpy.run_module(sys.argv.pop(1), run_name='__main__', alter_sys=True)"


def python_module(module: str) -> list[str]:
    """The command that runs a module of the installed neatpar as `python -m MODULE` would."""
    return [sys.executable, "-c", RUN_MODULE, module]


def python_code(code: str) -> list[str]:
    """The command that runs `code` as `python -c CODE` would, importing the installed neatpar."""
    return [sys.executable, "-c", INSTALLED_FIRST + "\n" + code]


def child_pids() -> set[int]:
    """PIDs of this process's live children, less multiprocessing's resource tracker."""
    me, found = os.getpid(), set()
    tracker = getattr(resource_tracker._resource_tracker, "_pid", None)
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == me and fields[0] != "Z" and int(entry) != tracker:
            found.add(int(entry))
    return found


def pid_alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def wait_gone(pids, timeout: float = 5.0) -> set[int]:
    """Wait until none of `pids` is alive; return those still alive after `timeout`."""
    deadline = time.monotonic() + timeout
    alive = {p for p in pids if pid_alive(p)}
    while alive and time.monotonic() < deadline:
        time.sleep(0.05)
        alive = {p for p in alive if pid_alive(p)}
    return alive


def cmdline(pid):
    try:
        return open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def processes_marked(mark):
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if mark.encode() in open(f"/proc/{pid}/environ", "rb").read():
                found.append(int(pid))
        except OSError:
            pass
    return found


def run_marked(args, env=None, timeout=180):
    """Run python with `args` (the tests' folder on its path); assert that none of its processes
    outlives it (they carry a marker in their environment). Returns the result and its seconds."""
    mark = f"{os.getpid()}-{time.monotonic_ns()}"
    started = time.monotonic()
    result = subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=timeout, cwd=ROOT,
                            env={**os.environ, "PYTHONPATH": TESTS, "NEATPAR_TEST_MARK": mark, **(env or {})})
    elapsed = time.monotonic() - started
    deadline = time.monotonic() + 5
    while processes_marked(f"NEATPAR_TEST_MARK={mark}") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert processes_marked(f"NEATPAR_TEST_MARK={mark}") == [], "processes outlived the script"
    return result, elapsed


def sims_on(port_marker: str) -> list[int]:
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmd = open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if "neatpar_sim" in cmd and port_marker in cmd:
            found.append(int(pid))
    return found


def parent_of(pid):
    with open(f"/proc/{pid}/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[1])


def shm_segments():
    return {name for name in os.listdir("/dev/shm") if name.startswith("neatpar-")}


def wait_until(condition, timeout: float, what: str, interval: float = 0.05):
    """Poll `condition` until it returns something true and return that; fail naming `what` when
    `timeout` seconds pass first."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {timeout} s for {what}")
        time.sleep(interval)


def process_maps(pid: int) -> str:
    """What process `pid` has mapped (/proc/PID/maps); empty when it is gone."""
    try:
        with open(f"/proc/{pid}/maps") as f:
            return f.read()
    except OSError:
        return ""


def segments_mapped(pids) -> set[str]:
    """neatpar's shared-memory segments that the processes `pids` have mapped now."""
    found = set()
    for pid in pids:
        for line in process_maps(pid).splitlines():
            fields = line.split(maxsplit=5)  # address, perms, offset, device, inode, path
            if len(fields) == 6 and fields[5].startswith("/dev/shm/neatpar-"):
                found.add(fields[5].split()[0][len("/dev/shm/"):])
    return found
