"""Pool inference (neatpar/episodes/inference.py: networks on spawn workers, fed through shared memory)
against in-process inference: the same actions, always."""
import os
import signal

import neat
import numpy as np
import pytest

from neatpar import settings as run_config
from neatpar.episodes.inference import AutoInference, InProcessInference, PoolInference
from neatpar.nn import CTRNNPopulation, FeedForwardPopulation, RecurrentPopulation
from neatpar.episodes.env_evaluator import UnityEvaluator
from support.configs import ball_cfg, write_config
from support.paths import BUILDS
from support.processes import segments_mapped, shm_segments, wait_gone
from support.runs import Run
from support.simulators import free_worker_id


def evolved(tmp_path, feed_forward, count=12, outputs=2):
    path = write_config(tmp_path, f"k{feed_forward}.cfg", pop_size=count, num_inputs=8, num_outputs=outputs,
                        feed_forward=str(feed_forward).lower(), activation_options="tanh sigmoid relu",
                        activation_mutate_rate=0.3, activation_default="tanh", time_constant_init_mean=0.3,
                        time_constant_init_stdev=0.2, time_constant_mutate_rate=0.5, time_constant_mutate_power=0.1,
                        time_constant_min_value=0.05)
    config = neat.Config(neat.DefaultGenome, neat.DefaultReproduction, neat.DefaultSpeciesSet,
                         neat.DefaultStagnation, path)
    genomes = list(neat.Population(config, seed=1).population.values())
    for g in genomes:
        for _ in range(12):
            g.mutate(config.genome_config)
    return config, genomes


def steps(count, agents, genomes, seed=0):
    """Batches like the runner's: varying agent subsets, genome changes, resets."""
    rng = np.random.default_rng(seed)
    owner = rng.integers(0, genomes, agents)
    for _ in range(count):
        present = np.flatnonzero(rng.random(agents) < 0.8)
        reset = rng.random(len(present)) < 0.1
        change = present[reset & (rng.random(len(present)) < 0.5)]
        owner[change] = rng.integers(0, genomes, len(change))
        yield rng.normal(size=(len(present), 8)), owner[present].copy(), present.astype(np.int64), reset


KERNELS = {"feedforward": FeedForwardPopulation.create, "recurrent": RecurrentPopulation.create,
           "ctrnn": lambda genomes, config: CTRNNPopulation.create(genomes, config, 0.1, 0.02)}


@pytest.mark.parametrize("network", KERNELS)
def test_pool_gives_the_same_actions_step_by_step(tmp_path, network):
    config, genomes = evolved(tmp_path, network == "feedforward")
    create = KERNELS[network]
    local, pool = InProcessInference(), PoolInference(2)
    try:
        local.install(create(genomes, config))
        pool.install(create(genomes, config))
        for obs, index, rows, reset in steps(60, 30, len(genomes)):
            assert np.array_equal(local.activate(obs, index, rows, reset), pool.activate(obs, index, rows, reset))
        mine = segments_mapped([os.getpid()])  # the exchange's segments, mapped by this process
    finally:
        pool.close()
    assert mine and not mine & shm_segments()


def kill_worker(pool_inference, sig):
    pid = pool_inference.pool.pids[0]
    os.kill(pid, sig)
    return pid


@pytest.mark.parametrize("sig, network", [(signal.SIGKILL, "recurrent"), (signal.SIGSTOP, "recurrent"),
                                          (signal.SIGKILL, "ctrnn")])
def test_worker_death_or_hang_redoes_the_step_with_the_same_result(tmp_path, sig, network):
    config, genomes = evolved(tmp_path, False)
    local, pool = InProcessInference(), PoolInference(2, timeout=1.0)
    try:
        local.install(KERNELS[network](genomes, config))
        pool.install(KERNELS[network](genomes, config))
        for i, (obs, index, rows, reset) in enumerate(steps(20, 16, len(genomes), seed=3)):
            if i == 10:
                victim = kill_worker(pool, sig)  # SIGSTOP: a worker that hangs
            assert np.array_equal(local.activate(obs, index, rows, reset), pool.activate(obs, index, rows, reset))
        assert pool.redone >= 1 and victim not in pool.pool.pids
        mine = segments_mapped([os.getpid()])
    finally:
        pool.close()
    assert not wait_gone([victim], 3.0) and mine and not mine & shm_segments()


@pytest.mark.parametrize("network", ["feedforward", "ctrnn"])
def test_auto_keeps_the_faster_and_says_why(tmp_path, network):
    """The timing trials change no state: the first real step equals a fresh kernel's."""
    config, genomes = evolved(tmp_path, network == "feedforward")
    auto, fresh = AutoInference(2), InProcessInference()
    try:
        auto.install(KERNELS[network](genomes, config))
        fresh.install(KERNELS[network](genomes, config))
        for obs, index, rows, reset in steps(2, 20, len(genomes)):
            assert np.array_equal(auto.activate(obs, index, rows, reset), fresh.activate(obs, index, rows, reset))
        assert auto.chosen is not None and auto.reason.startswith(f"inference auto: {auto.chosen.name}")
        assert "ms per step in process" in auto.reason and "pool workers" in auto.reason
    finally:
        auto.close()


def runner_fitness(tmp_path, inference, teams=False):
    if teams:
        section = {"env": os.path.join(BUILDS, "teams"), "env_args": "--areas 3 --max-steps 25",
                   "behaviors": "Blue?team=0: population, Purple?team=1: champion", "max_steps": 25}
        outputs = 7
    else:
        section = {"env": os.path.join(BUILDS, "ball"), "env_args": "--agents 4 --max-steps 25",
                   "behaviors": "Ball3D?team=0: population", "max_steps": 25, "network": "recurrent"}
        outputs = 2
    section.update(seed=5, worker_id=free_worker_id(), inference=inference, workers=2)
    path = write_config(tmp_path, f"{inference}-{teams}.cfg", neatpar=section, pop_size=10, num_inputs=8,
                        num_outputs=outputs, feed_forward="false" if not teams else "true",
                        activation_options="tanh", activation_default="tanh")
    config, run = run_config.load(path)
    population = neat.Population(config, seed=2)
    with UnityEvaluator.from_settings(run) as evaluator:
        population.run(evaluator.evaluate, 2)
        return sorted((k, g.fitness) for k, g in population.population.items() if g.fitness is not None), \
            evaluator.champion.fitness


@pytest.mark.parametrize("teams", [False, True])
def test_runner_results_identical_in_process_and_on_the_pool(tmp_path, teams):
    # Ball: continuous, recurrent, 10 genomes on 4 agents; teams: discrete with masks vs the champion.
    assert runner_fitness(tmp_path, "inprocess", teams) == runner_fitness(tmp_path, "pool", teams)


def test_ctrl_c_with_pool_inference_leaves_no_processes_or_segments(tmp_path):
    config = ball_cfg(tmp_path, generations=100, interval=50, inference="pool", workers=2)
    run = Run(config, tmp_path / "run")
    run.wait_for("gen    1")
    assert len(run.simulators()) == 1 and len(run.workers()) == 2
    run.proc.send_signal(signal.SIGINT)
    code, err = run.finish(timeout=60)
    assert code == 130, err
    run.assert_clean(segments_expected=True)