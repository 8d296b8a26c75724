"""Shared fixtures: real neat-python configs and genomes, and a check that no child process
outlives a test."""
import os
import signal
import time
from multiprocessing import resource_tracker

import neat
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONFIGS = os.path.join(ROOT, "configs")


def load_config(name: str = "xor.cfg") -> neat.Config:
    return neat.Config(neat.DefaultGenome, neat.DefaultReproduction, neat.DefaultSpeciesSet,
                       neat.DefaultStagnation, os.path.join(CONFIGS, name))


@pytest.fixture
def xor_config():
    return load_config("xor.cfg")


@pytest.fixture
def genomes(xor_config):
    """A real first-generation population, as (key, genome) pairs."""
    population = neat.Population(xor_config, seed=3)
    return list(population.population.items())


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


@pytest.fixture(autouse=True)
def no_leftover_children():
    """Every test must leave no child process behind; stragglers are killed and reported."""
    before = child_pids()
    yield
    left = wait_gone(child_pids() - before)
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert not left, f"child processes left running after the test: {sorted(left)}"
