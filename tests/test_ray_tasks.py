"""ParallelEvaluator's Ray backend (neatpar/parallel/ray_tasks.py) on a real local Ray cluster:
chunks of genomes as Ray tasks, at most `num_workers` at once, the config put into the object
store once per change, the initializer once per worker process, a genome that kills its worker or
exceeds its timeout failing alone, live handles refused, and the same results as the local pool."""
import hashlib
import os
import socket
import subprocess
import sys
import time

import pytest

from support import fitness_fns
from support.marks import ONE_RAY_AT_A_TIME
from support.paths import ROOT
from support.rays import local_cluster, ray
from support.runs import fitnesses
from neatpar import LiveHandleError, ParallelEvaluator
from neatpar.parallel.chunks import Status
from neatpar.parallel.serialize import dumps_for_worker
from neatpar.parallel.ray_tasks import RayTasks, _sent_by_value

pytestmark = [pytest.mark.slow, ONE_RAY_AT_A_TIME]

VICTIM = 4  # a genome key of the first xor generation; Ray workers read it from their environment
LIVE = None


@pytest.fixture(scope="module")
def records(tmp_path_factory):
    """A folder the Ray workers write into (NEATPAR_TEST_DIR: fitness_fns.record)."""
    return tmp_path_factory.mktemp("ray-records")


@pytest.fixture(scope="module", autouse=True)
def cluster(records):
    """One local Ray cluster for the module; its workers import the tests' helper modules."""
    with local_cluster(NEATPAR_TEST_VICTIM=str(VICTIM), NEATPAR_TEST_DIR=str(records)):
        yield


def uses_live_socket(genome, config):
    return float(LIVE.fileno())


def test_parallel_evaluator_on_ray_matches_the_local_pool(xor_config, genomes):
    with ParallelEvaluator(2, fitness_fns.stochastic, seed=9, backend="ray") as evaluator:
        evaluator.evaluate(genomes, xor_config)
    on_ray = fitnesses(genomes)
    with ParallelEvaluator(2, fitness_fns.stochastic, seed=9) as evaluator:
        evaluator.evaluate(genomes, xor_config)
    assert on_ray == fitnesses(genomes)


def test_a_genome_that_kills_its_ray_worker_fails_alone(xor_config, genomes):
    assert VICTIM in dict(genomes)
    with ParallelEvaluator(2, fitness_fns.sigkill_always, backend="ray", failure_fitness=-1.0) as evaluator:
        evaluator.evaluate(genomes, xor_config)
    assert {key: g.fitness for key, g in genomes} == {key: (-1.0 if key == VICTIM else float(key)) for key, _ in genomes}


def test_a_genome_past_its_timeout_fails_alone_on_ray(xor_config, genomes):
    with ParallelEvaluator(2, fitness_fns.hang, backend="ray", timeout=2.0, failure_fitness=-1.0) as evaluator:
        evaluator.evaluate(genomes, xor_config)
    assert {key: g.fitness for key, g in genomes} == {key: (-1.0 if key == VICTIM else float(key)) for key, _ in genomes}


def test_ray_refuses_a_fitness_function_that_would_copy_a_live_handle():
    global LIVE
    with socket.socket() as LIVE:
        with pytest.raises(LiveHandleError, match="uses the global 'LIVE' \\(socket\\)"):
            ParallelEvaluator(2, uses_live_socket, backend="ray")


def test_the_xor_example_on_ray_finds_the_same_winner_as_on_the_local_pool():
    def winner(*extra):
        result = subprocess.run([sys.executable, os.path.join("examples", "xor_parallel.py"), "--generations", "5",
                                 "--workers", "2", *extra], capture_output=True, text=True, cwd=ROOT, timeout=300)
        assert result.returncode == 0, result.stderr
        return [line for line in result.stdout.splitlines() if line.startswith(("Winner", "  input"))]
    on_ray = winner("--backend", "ray")  # a Ray instance of its own, started and stopped by neatpar
    assert len(on_ray) == 5 and on_ray == winner()


def xor_payload(xor_config):
    """The config as ParallelEvaluator sends it: pickled by neatpar, with its digest."""
    payload = dumps_for_worker(xor_config)
    return payload, hashlib.blake2b(payload, digest_size=16).digest()


def drive(tasks, jobs, seconds=120):
    """Wait on `jobs` until all have finished; every wait also starts the chunks that may start."""
    done, deadline = [], time.monotonic() + seconds
    while len(done) < len(jobs):
        assert time.monotonic() < deadline, f"{len(jobs) - len(done)} chunks did not finish within {seconds} s"
        done += [job for job in tasks.wait(jobs, timeout=1.0) if job not in done]
    return done


def test_no_more_than_num_workers_chunks_run_at_once_and_the_rest_start_as_they_finish(xor_config, genomes):
    tasks = RayTasks(1, fitness_fns.key_fitness)
    try:
        payload, digest = xor_payload(xor_config)
        config_ref = tasks.share_config(payload, digest)
        chunks = [[g for _, g in genomes[i:i + 2]] for i in (0, 2, 4)]
        jobs = [tasks.submit(config_ref, None, chunk) for chunk in chunks]
        assert [job.ref is not None for job in jobs] == [True, False, False]  # one worker: one chunk running
        assert len(tasks._running) == 1
        drive(tasks, jobs)
        assert [[outcome.value for outcome in job.partial] for job in jobs] == \
            [[float(g.key) for g in chunk] for chunk in chunks]
        assert all(o.status is Status.OK for job in jobs for o in job.partial) and not any(j.error for j in jobs)
    finally:
        tasks.close()


def test_the_config_is_put_into_the_object_store_again_only_when_its_digest_changes(xor_config):
    tasks = RayTasks(2, fitness_fns.trivial)
    try:
        payload, digest = xor_payload(xor_config)
        first = tasks.share_config(payload, digest)
        assert tasks.share_config(payload, digest) is first
        changed = tasks.share_config(payload + b".", b"another digest")
        assert changed is not first and ray.get(changed) == payload + b"."
        assert ray.get(first) == payload
    finally:
        tasks.close()


def test_default_chunks_are_a_quarter_of_a_worker_s_share_and_one_genome_with_a_timeout():
    untimed, timed = RayTasks(2, fitness_fns.trivial), RayTasks(2, fitness_fns.trivial, timeout=5.0)
    try:
        assert [untimed.default_chunksize(n) for n in (1, 8, 9, 150)] == [1, 1, 2, 19]
        assert [timed.default_chunksize(n) for n in (1, 150)] == [1, 1]  # a timeout is exact only per genome
    finally:
        untimed.close()
        timed.close()


def test_the_initializer_runs_once_in_each_ray_worker_process_per_evaluator(xor_config, genomes, records):
    """Every Ray worker that evaluated genomes ran the initializer once before them, however many
    chunks it took; a second evaluator's initializer runs again in the same workers."""
    for name in ("first", "second"):
        with ParallelEvaluator(2, fitness_fns.report_pid, backend="ray", chunksize=1,
                               initializer=fitness_fns.record, initargs=(name,)) as evaluator:
            evaluator.evaluate(genomes[:12], xor_config)
        workers = {int(g.fitness) for _, g in genomes[:12]}
        initialized = [int(line) for line in open(records / name)]
        assert 12 > len(workers)  # workers took several chunks each
        assert sorted(initialized) == sorted(set(initialized)) and workers <= set(initialized)


def nested_function():
    def inner(genome, config):
        return 0.0
    return inner


def test_functions_that_ray_sends_by_value_are_told_from_those_it_imports_by_name(monkeypatch):
    assert _sent_by_value(lambda genome, config: 0.0)
    assert _sent_by_value(nested_function())
    main_function = nested_function()  # a main script's function, at its name in the script
    main_function.__module__, main_function.__qualname__ = "__main__", "main_function"
    monkeypatch.setattr(sys.modules["__main__"], "main_function", main_function, raising=False)
    assert _sent_by_value(main_function)  # Ray's workers do not run the script: it goes by value
    assert not _sent_by_value(fitness_fns.trivial)  # a worker imports it from its module
    assert not _sent_by_value(uses_live_socket)
