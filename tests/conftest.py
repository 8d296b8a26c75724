"""Shared fixtures: real neat-python configs and genomes, and a check that no child process
outlives a test. Shared functions live in the support package."""
import os
import shutil
import signal
import tempfile

import neat
import pytest

from support.configs import load_config
from support.processes import child_pids, wait_gone


@pytest.fixture
def xor_config():
    return load_config("xor.cfg")


@pytest.fixture
def genomes(xor_config):
    """A real first-generation population, as (key, genome) pairs."""
    population = neat.Population(xor_config, seed=3)
    return list(population.population.items())


@pytest.fixture(autouse=True)
def no_leftover_children(monkeypatch):
    """Every test must leave no child process behind; stragglers are killed and reported. The
    processes a test starts get a temporary folder of their own (TMPDIR, short enough for Ray's
    socket paths), removed afterwards: what a run keeps there (a failed start's simulator logs)
    does not outlive the test."""
    temporary = tempfile.mkdtemp(prefix="neatpar-test-")
    monkeypatch.setenv("TMPDIR", temporary)
    before = child_pids()
    yield
    left = wait_gone(child_pids() - before)
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    shutil.rmtree(temporary, ignore_errors=True)
    assert not left, f"child processes left running after the test: {sorted(left)}"
