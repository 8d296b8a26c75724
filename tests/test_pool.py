"""neatpar.Pool: the spawn pool under ParallelEvaluator, on its own."""
import os
import signal
import socket
import time

import pytest

import fitness_fns
import neatpar
from neatpar.errors import LiveHandleError, TaskTimeout, WorkerDied


@pytest.fixture(scope="module")
def pool():
    with neatpar.Pool(2) as p:
        yield p


def test_workers_are_spawned_not_forked(pool):
    import multiprocessing
    assert pool._ctx.get_start_method() == "spawn"
    assert all(w.process._popen.__class__.__module__.endswith("popen_spawn_posix") for w in pool._workers)


def test_apply_async_returns_results(pool):
    results = [pool.apply_async(fitness_fns.whoami, (i,)) for i in range(6)]
    values = [r.get(timeout=30) for r in results]
    assert [tag for tag, _ in values] == list(range(6))
    assert {pid for _, pid in values} <= set(pool.pids)


def test_pinned_tasks_run_on_their_worker(pool):
    for index in range(pool.processes):
        pids = {pool.apply_async(fitness_fns.whoami, (0,), worker=index).get(30)[1] for _ in range(3)}
        assert pids == {pool.pids[index]}


def test_generator_tasks_stream_items(pool):
    result = pool.apply_async(fitness_fns.count_up, (5,))
    assert result.get(30) == "finished"
    assert result.partial == [0, 1, 2, 3, 4]


def test_shared_object_installed_once_and_resolved(pool):
    ref = pool.share(list(range(100)))
    assert [pool.apply_async(fitness_fns.read_shared, (ref, i)).get(30) for i in (3, 99)] == [3, 99]
    pool.unshare(ref)
    with pytest.raises(ValueError, match="unshared"):
        pool.apply_async(fitness_fns.read_shared, (ref, 1))


def test_live_handle_refused_with_its_name(pool):
    with socket.socket() as sock:
        with pytest.raises(LiveHandleError, match=r"args\[0\]\['conn'\] \(socket"):
            pool.apply_async(fitness_fns.whoami, ({"conn": sock},))
    with pytest.raises(LiveHandleError, match=r"args\[0\] \(neatpar pool|Pool cannot be sent"):
        pool.apply_async(fitness_fns.whoami, (pool,))


def test_timeout_kills_only_the_stuck_worker():
    with neatpar.Pool(2) as p:
        slow = p.apply_async(fitness_fns.sleep_then, (60, 1), timeout=0.5)
        fast = p.apply_async(fitness_fns.sleep_then, (0.1, 2))
        with pytest.raises(TaskTimeout):
            slow.get(10)
        assert fast.get(10) == 2
        assert p.apply_async(fitness_fns.whoami, (1,)).get(30)[0] == 1  # the slot was refilled


def test_remote_error_carries_worker_traceback(pool):
    result = pool.apply_async(fitness_fns.failing_initializer, ("x",))
    with pytest.raises(neatpar.errors.RemoteError, match="RuntimeError: initializer refused x") as info:
        result.get(30)
    assert "fitness_fns.py" in info.value.remote_traceback


def test_dead_worker_fails_only_its_task():
    with neatpar.Pool(1) as p:
        doomed = p.apply_async(fitness_fns.sleep_then, (60, 0))  # dispatched at once: the worker is busy
        os.kill(p.pids[0], signal.SIGKILL)
        with pytest.raises(WorkerDied, match="signal 9"):
            doomed.get(10)  # the worker's exit is seen at once, not after the task's 60 s
        assert p.apply_async(fitness_fns.whoami, (7,)).get(30)[0] == 7
