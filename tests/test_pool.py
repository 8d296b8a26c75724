"""Tests of parallel/pool.py: neatpar.Pool, the spawn pool under ParallelEvaluator, on its own. (Its
workers' state table: test_worker_states.py; a task's result: test_async_result.py.)"""
import multiprocessing
import os
import signal
import socket

import pytest

from support import fitness_fns
import neatpar
from neatpar.errors import LiveHandleError, TaskTimeout, TransferError, WorkerDied


@pytest.fixture(scope="module")
def pool():
    with neatpar.Pool(2) as p:
        yield p


def test_workers_are_spawned_not_forked(pool):
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


def test_a_generator_task_that_raises_keeps_every_item_it_yielded_before(pool):
    """The items of the batch being gathered when the generator raised travel before the failure."""
    result = pool.apply_async(fitness_fns.count_up_then_raise, (5,))
    with pytest.raises(neatpar.errors.RemoteError, match="ValueError: raised after 5 items") as info:
        result.get(30)
    assert result.partial == info.value.partial == [0, 1, 2, 3, 4]


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
    reader, writer = multiprocessing.Pipe()  # plain pickle would send its bare descriptor number
    with reader, writer, pytest.raises(LiveHandleError, match=r"args\[1\] \(multiprocessing connection"):
        pool.apply_async(fitness_fns.whoami, (1, writer))


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


def test_terminate_fails_the_tasks_it_stops_and_close_delivers_the_ones_it_lets_finish():
    """No result is left waiting for a worker that is gone: running ones too, not only queued ones."""
    with neatpar.Pool(1) as p:
        running, queued = p.apply_async(fitness_fns.sleep_then, (60, 0)), p.apply_async(fitness_fns.whoami, (1,))
        p.terminate()
        assert running.ready() and queued.ready()
        with pytest.raises(WorkerDied, match=r"^the pool was stopped while worker 0 ran task \d+$"):
            running.get(0)
        with pytest.raises(WorkerDied, match="the pool was stopped before the task ran"):
            queued.get(0)
    with neatpar.Pool(1) as p:
        finishing = p.apply_async(fitness_fns.sleep_then, (0.2, 7))
        p.close()
        assert finishing.get(0) == 7


def test_dead_worker_fails_only_its_task():
    with neatpar.Pool(1) as p:
        doomed = p.apply_async(fitness_fns.sleep_then, (60, 0))  # dispatched at once: the worker is busy
        os.kill(p.pids[0], signal.SIGKILL)
        with pytest.raises(WorkerDied, match="signal 9"):
            doomed.get(10)  # the worker's exit is seen at once, not after the task's 60 s
        assert p.apply_async(fitness_fns.whoami, (7,)).get(30)[0] == 7


def test_a_task_that_cannot_be_loaded_fails_alone_with_the_cause(tmp_path, monkeypatch):
    monkeypatch.setenv("NEATPAR_TEST_DIR", str(tmp_path))  # inherited by the workers
    with neatpar.Pool(1) as p:
        result = p.apply_async(fitness_fns.whoami, (fitness_fns.Unloadable(),))
        with pytest.raises(TransferError) as info:
            result.get(30)
        assert str(info.value) == (f"pool worker 0 cannot load task {result.task_id} (its function and arguments): "
                                   f"RuntimeError: this object refuses to be unpickled")
        assert p.apply_async(fitness_fns.whoami, (3,)).get(30)[0] == 3  # the same worker serves on
        assert p.started == 1


def test_a_worker_that_dies_while_loading_a_task_is_reported_as_such_and_replaced(tmp_path, monkeypatch):
    """A death is a death (a kill from outside can land then too): the caller decides about retries."""
    monkeypatch.setenv("NEATPAR_TEST_DIR", str(tmp_path))
    with neatpar.Pool(1) as p:
        started = p.started
        result = p.apply_async(fitness_fns.whoami, (fitness_fns.KillsOnLoad(),))
        with pytest.raises(WorkerDied, match=rf"^worker 0 \(pid \d+\) died with exit code 3 while loading task "
                                             rf"{result.task_id}$") as info:
            result.get(30)
        assert info.value.position == 0 and info.value.partial == []
        assert p.apply_async(fitness_fns.whoami, (5,)).get(30)[0] == 5
        assert p.started == started + 1  # replaced once


def test_a_lambda_task_and_a_preloaded_closure_travel_by_value():
    factor = 3

    def times(x):
        return x * factor
    with neatpar.Pool(2, preload={"times": times}) as p:
        ref = p.preloaded["times"]
        assert p.apply_async(lambda f, x: f(x), (ref, 5)).get(30) == 15
        assert p.started == 2
        with pytest.raises(ValueError, match="preloaded"):
            p.unshare(ref)
