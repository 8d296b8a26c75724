"""The operating system's processes as neatpar uses them, the same on Linux, macOS and Windows: the
CPUs this process may use, when a process started (to tell a simulator from a later process that
got its PID), killing a process or this process's children, the signals that stop a run, and
starting a program apart from the terminal's Ctrl+C.

Each is chosen by what the running Python offers, not by the platform's name. psutil gives what the
standard library has no portable call for: a process's start time and its children (it reads /proc
on Linux, the kernel's process table on macOS, the process's times and snapshots on Windows).
"""
from __future__ import annotations

import os
import signal
import stat
import subprocess

# Start times as psutil gives them are seconds since the epoch, computed from the system clock: a
# step of the clock (a time service correcting it) moves them by up to its size. Two readings of
# one process's start agree within this much; a PID taken again by a process that started within
# it of the first is taken for the first (only a process that lived less than this can be mistaken).
START_TOLERANCE = 2.0
_MICROSECONDS = 1_000_000


def cpu_count() -> int:
    """The CPUs this process may run on: os.process_cpu_count where Python has it (3.13), else the
    affinity mask (os.sched_getaffinity, which Linux has), else the machine's (os.cpu_count); at
    least 1."""
    counted = getattr(os, "process_cpu_count", None)
    if counted is not None:
        return counted() or 1
    affinity = getattr(os, "sched_getaffinity", None)
    if affinity is not None:
        return len(affinity(0)) or 1
    return os.cpu_count() or 1


def start_stamp(pid: int) -> int:
    """When process `pid` started, in microseconds since the epoch (an int that fits a shared
    64-bit cell); 0 when it is gone, cannot be seen, or `pid` names no process."""
    import psutil
    try:
        return round(psutil.Process(pid).create_time() * _MICROSECONDS) if pid > 0 else 0
    except psutil.Error:   # NoSuchProcess, ZombieProcess (gone), AccessDenied (another user's)
        return 0


def is_running(pid: int, stamp: int) -> bool:
    """Whether `pid` still names the process that started at `stamp` (start_stamp), rather than a
    later one that got its PID."""
    now = start_stamp(pid)
    return bool(stamp and now) and abs(now - stamp) <= START_TOLERANCE * _MICROSECONDS


def kill(pid: int, stamp: int) -> bool:
    """Kill process `pid` now (SIGKILL, or TerminateProcess on Windows) if it is still the one that
    started at `stamp`; True when it was killed."""
    import psutil
    if not is_running(pid, stamp):
        return False
    try:
        psutil.Process(pid).kill()
        return True
    except psutil.Error:   # it ended meanwhile
        return False


def kill_children() -> None:
    """Kill this process's own child processes now (a game it is still launching, whose PID the
    launcher has not reported yet)."""
    import psutil
    for child in psutil.Process().children():
        try:
            child.kill()
        except psutil.Error:   # it ended meanwhile
            pass


def stop_signals() -> tuple[int, ...]:
    """The signals that ask a run to stop: SIGINT (Ctrl+C), SIGTERM and, where Python has them,
    SIGHUP (POSIX: the terminal closed) and SIGBREAK (Windows: Ctrl+Break, and the console window
    closing)."""
    return tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP", "SIGBREAK")
                 if hasattr(signal, name))


def console_signals() -> tuple[int, ...]:
    """The signals a terminal sends to every process it runs, workers included: SIGINT (Ctrl+C)
    and, where Python has them, SIGHUP (the terminal closed) and SIGBREAK (Windows' Ctrl+Break)."""
    return tuple(getattr(signal, name) for name in ("SIGINT", "SIGHUP", "SIGBREAK") if hasattr(signal, name))


def is_hangup(signum: int) -> bool:
    """Whether `signum` is SIGHUP: the terminal the process wrote to is gone."""
    return signum == getattr(signal, "SIGHUP", None)


def exit_status(signum: int) -> int:
    """The exit status of a run a signal stopped: 130 for Ctrl+C (128 + SIGINT), 129 for a closed
    terminal (128 + SIGHUP), 143 (128 + SIGTERM) for any other stop signal, Windows' SIGBREAK
    included."""
    if signum == signal.SIGINT or is_hangup(signum):
        return 128 + signum
    return 128 + signal.SIGTERM


def quiet_hung_up_terminal() -> None:
    """Send what the process still prints to the null device where it went to a terminal (a
    character device): after SIGHUP that terminal is gone, and a write to it fails (EIO). Files and
    pipes keep their output."""
    null = None
    try:
        for fd in (1, 2):
            try:
                to_terminal = stat.S_ISCHR(os.fstat(fd).st_mode)
            except OSError:   # closed
                continue
            if to_terminal:
                null = os.open(os.devnull, os.O_WRONLY) if null is None else null
                os.dup2(null, fd)
    finally:
        if null is not None:
            os.close(null)


def signal_thread(thread_id: int, signum: int) -> None:
    """Deliver `signum` to this process again, for thread `thread_id` (the main thread): by
    pthread_kill where threads can be signalled (POSIX: it also wakes the thread from a blocking
    call), else by raise_signal (Windows), whose handler Python runs in the main thread too."""
    to_thread = getattr(signal, "pthread_kill", None)
    if to_thread is not None:
        to_thread(thread_id, signum)
    else:
        signal.raise_signal(signum)


def apart_from_terminal() -> dict:
    """subprocess.Popen keyword arguments that keep the terminal's Ctrl+C from a program this
    process starts (Ctrl+C stays this process's to handle): a session of its own where Python can
    make one (POSIX), else a process group of its own (Windows, which sends Ctrl+C to every process
    of the console's group)."""
    if hasattr(os, "setsid"):
        return {"start_new_session": True}
    return {"creationflags": getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0)}
