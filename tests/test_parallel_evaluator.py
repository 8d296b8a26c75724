"""Tests of parallel/parallel_evaluator.py: neatpar.ParallelEvaluator, the drop-in for neat-python's, against
real neat-python genomes and real spawn workers."""
import copy
import os
import pickle
import random
import re
import socket
import sys
import threading
import time

import neat
import numpy as np
import pytest

from support import fitness_fns
import neatpar
import neatpar.parallel.serialize
from neatpar.parallel.chunks import seed_genome
from support.configs import load_config, make_config
from support.processes import child_pids, run_marked, wait_gone


def fitnesses(pairs):
    return {k: g.fitness for k, g in pairs}


@pytest.fixture
def victim(monkeypatch, tmp_path, genomes):
    """Pick a genome in the middle of the population as the fault victim."""
    key = genomes[len(genomes) // 2][0]
    monkeypatch.setenv("NEATPAR_TEST_VICTIM", str(key))
    monkeypatch.setenv("NEATPAR_TEST_DIR", str(tmp_path))
    return key


def test_drop_in_population_run_solves_nothing_breaks(xor_config):
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "examples"))
    import xor_parallel
    population = neat.Population(xor_config, seed=5)
    with neatpar.ParallelEvaluator(2, xor_parallel.eval_genome, seed=5) as evaluator:
        winner = population.run(evaluator.evaluate, 5)
    assert 0.0 < winner.fitness <= 4.0
    assert winner.fitness == xor_parallel.eval_genome(winner, xor_config)  # what the function gives it, serially


def test_fitness_matches_serial_plain_loop_and_any_worker_count(genomes, xor_config):
    expected = {}
    for key, genome in genomes:  # the plain serial loop, seeded per genome as documented
        seed_genome(11, key)
        expected[key] = fitness_fns.stochastic(genome, xor_config)
    results = []
    for workers in (1, 2):
        pairs = copy.deepcopy(genomes)
        with neatpar.ParallelEvaluator(workers, fitness_fns.stochastic, seed=11, chunksize=7) as ev:
            ev.evaluate(pairs, xor_config)
        results.append(fitnesses(pairs))
    serial = copy.deepcopy(genomes)
    neatpar.ParallelEvaluator(0, fitness_fns.stochastic, seed=11).evaluate(serial, xor_config)
    assert results[0] == results[1] == fitnesses(serial) == expected
    assert len(set(expected.values())) == len(expected)  # really stochastic per genome


def plain_serial(genomes, config):
    """The loop a neat-python user writes, seeded per genome as neatpar documents."""
    for key, genome in genomes:
        state = random.getstate(), np.random.get_state()
        seed_genome(21, key)
        genome.fitness = fitness_fns.stochastic(genome, config)
        random.setstate(state[0])
        np.random.set_state(state[1])


def test_same_seed_same_evolution_serial_1_and_2_workers():
    def run(evaluate):
        population = neat.Population(load_config(), seed=21)  # fresh: the config holds innovation state
        best = []
        population.add_reporter(BestPerGeneration(best))
        winner = population.run(evaluate, 6)
        return winner.key, winner.fitness, best
    serial = run(plain_serial)
    in_process = run(neatpar.ParallelEvaluator(0, fitness_fns.stochastic, seed=21).evaluate)
    with neatpar.ParallelEvaluator(1, fitness_fns.stochastic, seed=21) as one:
        one_worker = run(one.evaluate)
    with neatpar.ParallelEvaluator(2, fitness_fns.stochastic, seed=21) as two:
        two_workers = run(two.evaluate)
    assert serial == in_process == one_worker == two_workers


def test_a_seed_repeats_with_a_fresh_config_per_population_and_not_with_one_config_reused(tmp_path):
    """As the documentation says where seeds are explained: neat-python keeps the node-key counter in the
    config, so a second seeded Population on the same Config evolves other genomes."""
    def curve(config):
        population = neat.Population(config, seed=7)
        statistics = neat.StatisticsReporter()
        population.add_reporter(statistics)
        population.run(sum_of_outputs, 10)
        return statistics.get_fitness_mean()
    options = dict(node_add_prob=0.9, activation_options="sigmoid tanh relu", activation_mutate_rate=0.3)
    reused = make_config(tmp_path, "reused.cfg", **options)
    first = curve(reused)
    assert curve(make_config(tmp_path, "fresh.cfg", **options)) == first  # a fresh Config: the same run
    assert curve(reused) != first                                         # the same Config again: another


def sum_of_outputs(genomes, config):
    for _, genome in genomes:
        net = neat.nn.FeedForwardNetwork.create(genome, config)
        genome.fitness = sum(net.activate((a, b, 1.0))[0] for a in (0, 1) for b in (0, 1))


class BestPerGeneration(neat.reporting.BaseReporter):
    def __init__(self, out):
        self.out = out

    def post_evaluate(self, config, population, species, best_genome):
        self.out.append((best_genome.key, best_genome.fitness, len(best_genome.nodes)))


def test_sending_the_config_does_not_advance_its_node_counter(xor_config, genomes):
    """neat-python's DefaultGenomeConfig.__getstate__ consumes a node key each time the config is
    pickled (a sender's data changed by sending it, inside neat-python): neatpar must not."""
    gc = xor_config.genome_config
    genome = genomes[0][1]
    genome.mutate_add_node(gc)  # starts the node counter
    before = neatpar.parallel.serialize.dumps(xor_config)
    next_key = neatpar.parallel.serialize._peek_count(gc.node_indexer)
    with neatpar.ParallelEvaluator(2, fitness_fns.key_fitness) as ev:
        ev.evaluate(genomes, xor_config)
        ev.evaluate(genomes, xor_config)
    assert neatpar.parallel.serialize._peek_count(gc.node_indexer) == next_key
    assert neatpar.parallel.serialize.dumps(xor_config) == before


def test_sender_objects_unchanged_byte_for_byte(genomes, xor_config):
    config_before = neatpar.parallel.serialize.dumps(xor_config)
    genomes_before = [pickle.dumps(g) for _, g in genomes]
    with neatpar.ParallelEvaluator(2, fitness_fns.key_fitness) as ev:
        ev.evaluate(genomes, xor_config)
    assert neatpar.parallel.serialize.dumps(xor_config) == config_before
    for (key, genome), before in zip(genomes, genomes_before):
        assert genome.fitness == float(key)
        genome.fitness = None  # the one field evaluate() is meant to set
        assert pickle.dumps(genome) == before


def test_worker_sigkill_reruns_lost_genome_and_replaces_worker(genomes, xor_config, victim):
    with neatpar.ParallelEvaluator(2, fitness_fns.sigkill_once, chunksize=10) as ev:
        pids_before = set(ev.pids)
        started = time.monotonic()
        ev.evaluate(genomes, xor_config)
        assert time.monotonic() - started < 10
        assert len(pids_before - set(ev.pids)) == 1  # exactly one worker was replaced
    assert all(g.fitness == float(k) for k, g in genomes)  # the victim was re-run, nothing lost
    assert not wait_gone(pids_before)


@pytest.mark.parametrize("fn", [fitness_fns.sigkill_always, fitness_fns.segfault_always, fitness_fns.exit_always])
def test_genome_that_kills_its_worker_twice_gets_failure_fitness(genomes, xor_config, victim, fn):
    with neatpar.ParallelEvaluator(2, fn, failure_fitness=-5.0, chunksize=10) as ev:
        ev.evaluate(genomes, xor_config)
    for key, genome in genomes:
        assert genome.fitness == (-5.0 if key == victim else float(key))


def test_genome_that_kills_its_worker_twice_raises_by_default(genomes, xor_config, victim):
    ev = neatpar.ParallelEvaluator(2, fitness_fns.sigkill_always)
    pids = set(ev.pids)
    with pytest.raises(neatpar.GenomeEvaluationError, match=f"genome {victim}: .*killed its worker 2 times"):
        ev.evaluate(genomes, xor_config)
    assert ev.tasks is None and not wait_gone(pids)


def test_timeout_kills_the_hung_worker_and_continues(genomes, xor_config, victim):
    with neatpar.ParallelEvaluator(2, fitness_fns.hang, timeout=1.0, failure_fitness=-1.0) as ev:
        pids = set(ev.pids)
        started = time.monotonic()
        ev.evaluate(genomes, xor_config)
        elapsed = time.monotonic() - started
        hung = pids - set(ev.pids)
    assert elapsed < 8
    assert len(hung) == 1 and not wait_gone(hung, 1.0)
    assert all(g.fitness == (-1.0 if k == victim else float(k)) for k, g in genomes)
    assert (ev.last_failures.timed_out, ev.last_failures.failed) == (1, 1)


def test_timeout_raises_by_default(genomes, xor_config, victim):
    ev = neatpar.ParallelEvaluator(2, fitness_fns.hang, timeout=0.5)
    with pytest.raises(neatpar.GenomeEvaluationError, match=f"genome {victim}: .*timeout"):
        ev.evaluate(genomes, xor_config)


def test_exception_in_fitness_raises_with_worker_traceback(genomes, xor_config, victim):
    with neatpar.ParallelEvaluator(2, fitness_fns.raise_for_victim) as ev:
        with pytest.raises(neatpar.GenomeEvaluationError) as info:
            ev.evaluate(genomes, xor_config)
    message = str(info.value)
    assert f"genome {victim}" in message and "ValueError: boom" in message and "fitness_fns.py" in message


def test_a_fitness_function_that_exits_stops_the_run_naming_its_genome(genomes, xor_config, victim):
    """SystemExit is no Exception: not a genome's failure to give failure_fitness, but the run's end,
    naming the genome that exited even when genomes before it in its chunk were not reported yet."""
    with neatpar.ParallelEvaluator(1, fitness_fns.sys_exit_for_victim, failure_fitness=0.0,
                                   chunksize=len(genomes)) as ev:
        with pytest.raises(neatpar.GenomeEvaluationError) as info:
            ev.evaluate(genomes, xor_config)
    assert str(info.value).startswith(f"evaluating genome {victim} failed in the worker: SystemExit: exit in "
                                      f"genome {victim}")


def test_exception_in_fitness_can_get_failure_fitness(genomes, xor_config, victim):
    with neatpar.ParallelEvaluator(2, fitness_fns.raise_for_victim, failure_fitness=0.0) as ev:
        ev.evaluate(genomes, xor_config)
    assert dict(genomes)[victim].fitness == 0.0


def test_none_fitness_names_genome_and_likely_cause(genomes, xor_config):
    with pytest.raises(neatpar.FitnessError, match=r"returned None for genome \d+.*eval_genomes"):
        with neatpar.ParallelEvaluator(2, fitness_fns.returns_none) as ev:
            ev.evaluate(genomes, xor_config)


def test_a_function_that_sets_the_fitness_instead_of_returning_it_is_told_to_return_it(genomes, xor_config):
    with pytest.raises(neatpar.FitnessError) as error:
        with neatpar.ParallelEvaluator(2, fitness_fns.sets_fitness_instead) as ev:
            ev.evaluate(genomes, xor_config)
    assert "return the fitness from eval_function (`return fitness`): setting genome.fitness there is not enough" \
        in str(error.value)


def failure_warnings(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.getMessage().startswith("ParallelEvaluator: ")]


def test_failures_given_failure_fitness_are_counted_every_generation_the_first_with_its_traceback(
        genomes, xor_config, victim, caplog):
    with caplog.at_level("WARNING", logger="neatpar"):
        with neatpar.ParallelEvaluator(2, fitness_fns.raise_for_victim, failure_fitness=0.0) as ev:
            for _ in range(3):
                ev.evaluate(genomes, xor_config)
                failures = ev.last_failures
                assert (failures.failed, failures.raised, failures.genomes) == (1, 1, len(genomes))
    first, *later = failure_warnings(caplog)
    assert first.startswith(f"ParallelEvaluator: 1 of {len(genomes)} genomes failed (1 raised); they got "
                            f"failure_fitness = 0 (every generation with failures says so); the first, genome "
                            f"{victim}: eval_function raised an exception:\nTraceback (most recent call last):")
    assert f"ValueError: boom in genome {victim}" in first
    assert later == [f"ParallelEvaluator: 1 of {len(genomes)} genomes failed (1 raised); they got "
                     f"failure_fitness = 0"] * 2


@pytest.mark.parametrize("workers", [0, 2])
def test_a_generation_in_which_every_genome_fails_is_an_error_even_with_failure_fitness(genomes, xor_config, workers):
    with pytest.raises(neatpar.GenomeEvaluationError) as error:
        with neatpar.ParallelEvaluator(workers, fitness_fns.raise_always, failure_fitness=0.0) as ev:
            ev.evaluate(genomes, xor_config)
    assert str(error.value).startswith(f"every genome of the generation failed ({len(genomes)} of {len(genomes)} "
                                       f"genomes failed ({len(genomes)} raised)), so it has no fitness to select on")
    assert f"ValueError: boom in genome {genomes[0][0]}" in str(error.value)


def test_a_generation_in_which_every_genome_times_out_is_an_error(genomes, xor_config):
    few = genomes[:4]
    with pytest.raises(neatpar.GenomeEvaluationError, match=r"every genome of the generation failed \(4 of 4 genomes "
                                                            r"failed \(4 timed out\)\)"):
        with neatpar.ParallelEvaluator(2, fitness_fns.hang_always, timeout=0.5, failure_fitness=0.0) as ev:
            ev.evaluate(few, xor_config)


def test_failures_show_in_a_neat_python_run_s_output_each_generation(tmp_path):
    script = (
        "import neat, neatpar\n"
        "from support import fitness_fns\n"
        "from support.configs import load_config\n"
        "if __name__ == '__main__':\n"
        "    population = neat.Population(load_config(), seed=3)\n"
        "    population.add_reporter(neat.StdOutReporter(False))\n"
        "    with neatpar.ParallelEvaluator(2, fitness_fns.raise_for_odd_keys, failure_fitness=-1.0) as ev:\n"
        "        population.run(ev.evaluate, 3)\n")
    result, _ = run_marked(["-c", script])
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("****** Running generation") == 3
    counts = [line for line in result.stderr.splitlines() if line.startswith("ParallelEvaluator: ")]
    assert len(counts) == 3 and all(" genomes failed (" in line and " raised); they got failure_fitness = -1" in line
                                    for line in counts), result.stderr
    assert "Traceback" in result.stderr and "ValueError: odd genome" in result.stderr


def test_population_level_function_passed_by_mistake_is_named(genomes, xor_config):
    with pytest.raises(neatpar.GenomeEvaluationError, match=r"(?s)genome \d+.*population-level eval_genomes"):
        with neatpar.ParallelEvaluator(2, fitness_fns.eval_genomes_by_mistake) as ev:
            ev.evaluate(genomes, xor_config)


def test_nan_fitness_is_refused(genomes, xor_config):
    with pytest.raises(neatpar.FitnessError, match=r"returned nan for genome \d+.*not finite"):
        neatpar.ParallelEvaluator(0, fitness_fns.returns_nan).evaluate(genomes, xor_config)


def test_a_fitness_that_is_no_number_is_refused_asking_for_a_float(genomes, xor_config):
    with pytest.raises(neatpar.FitnessError) as error:
        neatpar.ParallelEvaluator(0, lambda genome, config: "1.5").evaluate(genomes, xor_config)
    assert str(error.value) == (f"eval_function returned '1.5' for genome {genomes[0][0]}, not a finite number: "
                                f"return a float (or int) fitness, or (fitness, descriptor) with the descriptor a "
                                f"sequence of numbers")


def test_in_process_evaluation_leaves_the_caller_s_generators_as_they_were(genomes, xor_config):
    """neat-python's reproduction draws from `random` between generations: seeding per genome here
    must not change what it draws."""
    state = random.getstate(), np.random.get_state()
    try:
        random.seed(4)
        np.random.seed(4)
        expected = random.random(), float(np.random.random())
        random.seed(4)
        np.random.seed(4)
        neatpar.ParallelEvaluator(0, fitness_fns.stochastic, seed=9).evaluate(genomes, xor_config)
        assert (random.random(), float(np.random.random())) == expected
    finally:
        random.setstate(state[0])
        np.random.set_state(state[1])


def test_in_process_evaluation_runs_the_initializer_here():
    with pytest.raises(RuntimeError, match="^initializer refused 8$"):
        neatpar.ParallelEvaluator(0, fitness_fns.trivial, initializer=fitness_fns.failing_initializer, initargs=(8,))


def test_lambdas_and_closures_travel_by_value(genomes, xor_config):
    offset = 0.25

    def closure(genome, config):
        return float(genome.key) + offset
    for fn in (closure, lambda genome, config: float(genome.key) * 2):
        pairs = copy.deepcopy(genomes)
        with neatpar.ParallelEvaluator(2, fn) as ev:
            ev.evaluate(pairs, xor_config)
        assert fitnesses(pairs) == {k: fn(g, xor_config) for k, g in genomes}


def test_a_function_sent_by_value_that_uses_a_live_handle_is_refused_before_any_worker_starts():
    before = child_pids()
    with socket.socket() as sock:
        def closure(genome, config):
            return float(sock.fileno())
        with pytest.raises(neatpar.LiveHandleError, match=r"closure variable 'sock' \(socket, socket\)"):
            neatpar.ParallelEvaluator(2, closure)
        with pytest.raises(neatpar.LiveHandleError, match=r"default 0 \(socket, socket\)"):
            neatpar.ParallelEvaluator(2, lambda genome, config, conn=sock: 1.0)
    assert child_pids() == before


def test_a_function_that_cannot_be_pickled_is_a_transfer_error_before_any_worker_starts():
    before = child_pids()
    lock = threading.Lock()
    with pytest.raises(neatpar.errors.TransferError) as info:
        neatpar.ParallelEvaluator(2, lambda genome, config: lock.locked() and 1.0)
    assert str(info.value) == ("cannot send eval_function to a worker: eval_function's closure variable 'lock' cannot "
                               "be pickled (TypeError: cannot pickle '_thread.lock' object)")
    assert child_pids() == before


@pytest.mark.parametrize("failure_fitness", [None, 0.0])
def test_genomes_a_worker_cannot_load_stop_the_run_and_no_genome_is_charged(genomes, xor_config, tmp_path,
                                                                             monkeypatch, failure_fitness):
    monkeypatch.setenv("NEATPAR_TEST_DIR", str(tmp_path))
    genomes[4][1].annotation = fitness_fns.Unloadable()  # pickles here, raises when a worker unpickles it
    with neatpar.ParallelEvaluator(2, fitness_fns.key_fitness, failure_fitness=failure_fitness, chunksize=5) as ev:
        started = ev.tasks.pool.started
        with pytest.raises(neatpar.errors.TransferError, match=r"^pool worker \d cannot load task \d+ \(its function "
                                                               r"and arguments\): RuntimeError: this object refuses"):
            ev.evaluate(genomes, xor_config)
    assert ev.tasks is None and started == 2
    assert genomes[4][1].fitness is None  # not given failure_fitness: it is no genome's fault


def test_initializer_failure_is_a_clear_error_not_a_respawn_loop():
    started = time.monotonic()
    with pytest.raises(neatpar.WorkerStartError, match="initializer failed: RuntimeError: initializer refused 42"):
        neatpar.ParallelEvaluator(2, fitness_fns.trivial, initializer=fitness_fns.failing_initializer, initargs=(42,))
    assert time.monotonic() - started < 30


def test_maxtasksperchild_recycles_workers(genomes, xor_config):
    with neatpar.ParallelEvaluator(1, fitness_fns.report_pid, maxtasksperchild=10, chunksize=5) as ev:
        ev.evaluate(genomes, xor_config)
    assert len({g.fitness for _, g in genomes}) >= len(genomes) // 10


def test_close_and_context_manager_leave_no_processes(genomes, xor_config):
    ev = neatpar.ParallelEvaluator(2, fitness_fns.trivial)
    pids = set(ev.pids)
    assert pids <= child_pids()
    ev.evaluate(genomes, xor_config)
    ev.close()
    assert not wait_gone(pids, 0.5)
    with pytest.raises(ValueError, match="closed"):
        ev.evaluate(genomes, xor_config)


def test_progress_bar_on_request(genomes, xor_config, capsys):
    with neatpar.ParallelEvaluator(2, fitness_fns.trivial, progress=True) as ev:
        ev.evaluate(genomes, xor_config)
    assert f"{len(genomes)}/{len(genomes)}" in capsys.readouterr().err or "genome" in capsys.readouterr().err


def test_progress_silent_when_not_a_terminal(genomes, xor_config, capsys):
    with neatpar.ParallelEvaluator(2, fitness_fns.trivial) as ev:
        ev.evaluate(genomes, xor_config)
    assert capsys.readouterr().err == ""


def test_bad_arguments_are_one_line_errors():
    for kwargs, pattern in [({"num_workers": -1}, "num_workers"), ({"timeout": 0}, "timeout"),
                            ({"failure_fitness": float("nan")}, "failure_fitness"),
                            ({"chunksize": 0}, "chunksize")]:
        args = {"num_workers": 1, "eval_function": fitness_fns.trivial, **kwargs}
        with pytest.raises(ValueError, match=pattern):
            neatpar.ParallelEvaluator(**args)


def test_a_function_that_is_not_callable_and_an_unknown_backend_are_one_line_errors_before_any_worker_starts():
    before = child_pids()
    with pytest.raises(TypeError, match=r"^eval_function must be callable, got 'fitness'$"):
        neatpar.ParallelEvaluator(2, "fitness")
    with pytest.raises(ValueError, match=r"^backend must be 'local' or 'ray', got 'dask'$"):
        neatpar.ParallelEvaluator(2, fitness_fns.trivial, backend="dask")
    assert child_pids() == before


def test_options_only_a_local_pool_has_are_refused_with_backend_ray_before_ray_starts():
    for kwargs, message in [({"num_workers": 0}, "num_workers must be at least 1 with backend='ray'"),
                            ({"maxtasksperchild": 5}, "maxtasksperchild and clear_globals apply to local spawn"),
                            ({"clear_globals": ["ENV"]}, "maxtasksperchild and clear_globals apply to local spawn")]:
        args = {"num_workers": 2, "eval_function": fitness_fns.trivial, "backend": "ray", **kwargs}
        with pytest.raises(ValueError, match=f"^{re.escape(message)}"):
            neatpar.ParallelEvaluator(**args)
    assert "ray" not in sys.modules or not sys.modules["ray"].is_initialized()
