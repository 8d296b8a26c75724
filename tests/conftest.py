"""Shared fixtures: real neat-python configs and genomes, and a check that no child process
outlives a test; a run in pytest-xdist processes refuses to start where its xdist_group marks
would not keep tests together. Shared functions live in the support package."""
import os
import re
import shutil
import signal
import tempfile

import neat
import pytest

from support.configs import load_config
from support.processes import child_pids, wait_gone


def version_of(text: str) -> tuple[int, ...]:
    """A release's leading numbers: '9.2.0' -> (9, 2, 0)."""
    return tuple(int(part) for part in re.findall(r"\d+", text)[:3])


def pytest_configure(config):
    """With --dist loadgroup, the tests of one xdist_group run one after another in one process
    (the tests that start Ray, support/marks.py). pytest-xdist (3.8 and before) carries the group
    in a test's ID, which pytest 9.2 no longer lets it change: the tests would be spread over the
    processes without a word, so that pairing stops the run instead."""
    if getattr(config.option, "dist", "no") != "loadgroup":
        return
    import xdist
    if version_of(pytest.__version__) >= (9, 2) and version_of(xdist.__version__) < (3, 9):
        raise pytest.UsageError(f"pytest {pytest.__version__} with pytest-xdist {xdist.__version__} ignores "
                                f"xdist_group marks under --dist loadgroup: install the test extra's pytest "
                                f"(make venv), or run in one process with -n 0")


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
