"""Tests of parallel/pool_tasks.py, ParallelEvaluator's local backend: the fitness function
preloaded in real spawn workers, the config installed once, chunks of real neat-python genomes
streamed back one outcome at a time, and the genome a dead or hung worker was running named."""
import contextlib
import hashlib
import random
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from support import fitness_fns
import neatpar
from neatpar.errors import TaskTimeout, WorkerDied
from neatpar.parallel.chunks import GenomeResult, Status, evaluate_chunk
from neatpar.parallel.pool_tasks import PoolTasks
from neatpar.parallel.serialize import dumps_for_worker
from support.processes import wait_gone


@contextlib.contextmanager
def pool_tasks(eval_function, workers=2, timeout=None):
    """PoolTasks as ParallelEvaluator makes them (no initializer, no recycling), closed afterwards."""
    tasks = PoolTasks(workers, eval_function, timeout, None, (), None, ())
    try:
        yield tasks
    finally:
        tasks.close()


def shared(tasks: PoolTasks, config):
    """The config installed in the workers, as ParallelEvaluator installs it."""
    payload = dumps_for_worker(config)
    return tasks.share_config(payload, hashlib.blake2b(payload, digest_size=16).digest())


@pytest.fixture(scope="module")
def two_workers():
    with pool_tasks(fitness_fns.stochastic) as tasks:
        yield tasks


@pytest.fixture
def victim(monkeypatch, tmp_path):
    """The genome at `index` of a chunk is the fault victim (workers started afterwards see it)."""
    def choose(chunk, index):
        monkeypatch.setenv("NEATPAR_TEST_VICTIM", str(chunk[index].key))
        monkeypatch.setenv("NEATPAR_TEST_DIR", str(tmp_path))
        return chunk[index]
    return choose


def in_process(eval_function, config, seed, chunk):
    """The outcomes of `chunk` evaluated here, the global generators left as they were."""
    state = random.getstate(), np.random.get_state()
    try:
        return list(evaluate_chunk(eval_function, config, seed, chunk))
    finally:
        random.setstate(state[0])
        np.random.set_state(state[1])


def test_config_sent_once_per_worker_not_per_genome(genomes, xor_config):
    with neatpar.ParallelEvaluator(2, fitness_fns.trivial, chunksize=5) as ev:
        ev.evaluate(genomes, xor_config)
        first_ref = ev.tasks.config_ref
        ev.evaluate(genomes, xor_config)
        assert ev.tasks.config_ref is first_ref  # unchanged config: not installed again
        workers = ev.tasks.pool._workers
        assert all(first_ref.key in w.refs for w in workers)
        xor_config.pop_size += 1  # a changed config is installed anew
        ev.evaluate(genomes, xor_config)
        assert ev.tasks.config_ref is not first_ref


def test_a_chunk_streams_one_outcome_per_genome_seeded_as_in_this_process(two_workers, genomes, xor_config):
    chunk = [g for _, g in genomes[:12]]
    result = two_workers.submit(shared(two_workers, xor_config), 11, chunk)
    assert result.get(30) is None
    assert result.partial == in_process(fitness_fns.stochastic, xor_config, 11, chunk)
    assert [o.status for o in result.partial] == [Status.OK] * len(chunk)


def test_a_changed_config_replaces_the_installed_one_which_workers_then_drop(genomes):
    with_config = lambda genome, config: float(config)  # noqa: E731 - travels by value, preloaded
    with pool_tasks(with_config) as tasks:
        chunk = [g for _, g in genomes[:2]]
        first = shared(tasks, 2.5)
        assert shared(tasks, 2.5) is first  # the same bytes: nothing installed again
        assert tasks.submit(first, None, chunk).get(30) is None
        second = shared(tasks, 4.0)
        assert second.key != first.key
        result = tasks.submit(second, None, chunk)
        result.get(30)
        assert result.partial == [GenomeResult(Status.OK, 4.0)] * 2
        assert all(first.key not in w.refs for w in tasks.pool._workers)
        with pytest.raises(ValueError, match="unshared"):
            tasks.submit(first, None, chunk)
        assert tasks.pool.started == 2  # the function was loaded once per worker, at its start


def test_the_fitness_function_is_loaded_once_per_worker_not_sent_with_each_chunk(genomes, xor_config):
    """A closure sent by value: the worker's one copy counts every call, over every chunk it runs."""
    calls = []

    def counted(genome, config):
        calls.append(genome.key)
        return float(len(calls))
    with pool_tasks(counted, workers=1) as tasks:
        config = shared(tasks, xor_config)
        chunks = [[g for _, g in genomes[:2]], [g for _, g in genomes[2:5]]]
        results = [tasks.submit(config, None, chunk) for chunk in chunks]
        assert [r.get(30) for r in results] == [None, None]
        assert [[o.value for o in r.partial] for r in results] == [[1.0, 2.0], [3.0, 4.0, 5.0]]
    assert calls == []  # this process's copy was never called


@settings(max_examples=100, deadline=None)
@given(count=st.integers(1, 5000))
def test_the_default_chunk_size_gives_about_four_tasks_per_worker(two_workers, count):
    size = two_workers.default_chunksize(count)
    tasks = -(-count // size)
    assert size >= 1 and tasks <= 4 * two_workers.num_workers
    assert size == 1 or -(-count // (size - 1)) > 4 * two_workers.num_workers  # the smallest such size


def test_a_worker_that_dies_mid_chunk_names_the_genome_it_was_running(genomes, xor_config, victim):
    chunk = [g for _, g in genomes[:10]]
    victim(chunk, 6)
    with pool_tasks(fitness_fns.sigkill_always) as tasks:
        pids = set(tasks.pids)
        result = tasks.submit(shared(tasks, xor_config), None, chunk)
        with pytest.raises(WorkerDied, match="died with signal 9") as info:
            result.get(30)
        assert len(pids - set(tasks.pids)) == 1 and len(tasks.pids) == 2  # the dead one was replaced
    assert info.value.position == 6
    assert len(result.partial) <= 6  # those computed since the last batch went with the worker
    assert result.partial == [GenomeResult(Status.OK, float(g.key)) for g in chunk[:len(result.partial)]]


def test_a_genome_that_hangs_past_the_timeout_is_named_and_its_worker_killed(genomes, xor_config, victim):
    chunk = [g for _, g in genomes[:8]]
    victim(chunk, 3)
    with pool_tasks(fitness_fns.hang, timeout=0.5) as tasks:
        pids = set(tasks.pids)
        with pytest.raises(TaskTimeout, match="made no progress for 0.5 s") as info:
            tasks.submit(shared(tasks, xor_config), None, chunk).get(30)
        hung = pids - set(tasks.pids)
    assert info.value.position == 3
    assert len(hung) == 1 and not wait_gone(hung, 1.0)


def test_waiting_returns_as_soon_as_one_chunk_is_done_and_terminate_stops_the_rest(genomes, xor_config, victim):
    chunk = [g for _, g in genomes[:4]]
    victim(chunk, 0)
    with pool_tasks(fitness_fns.hang) as tasks:
        pids = set(tasks.pids)
        config = shared(tasks, xor_config)
        hanging, finishing = tasks.submit(config, None, chunk[:1]), tasks.submit(config, None, chunk[1:])
        started = time.monotonic()
        assert tasks.wait([hanging, finishing], timeout=30) == [finishing]
        assert time.monotonic() - started < 10 and not hanging.ready()
        tasks.terminate()
        assert not wait_gone(pids, 2.0)
    assert isinstance(hanging.error, WorkerDied)  # stopped, not left waiting


def test_close_leaves_no_process(genomes, xor_config):
    with pool_tasks(fitness_fns.key_fitness) as tasks:
        pids = set(tasks.pids)
        chunk = [g for _, g in genomes[:6]]
        result = tasks.submit(shared(tasks, xor_config), None, chunk)
        result.get(30)
        tasks.close()
        assert not wait_gone(pids, 2.0) and tasks.pids == []
    assert result.partial == [GenomeResult(Status.OK, float(g.key)) for g in chunk]
