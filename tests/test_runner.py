"""The episode runner and UnityEvaluator, on the simulator builds through the real mlagents-envs."""
import os

import neat
import numpy as np
import pytest
from mlagents_envs.base_env import ActionSpec, BehaviorSpec, ObservationSpec

from neatpar import config as run_config
from neatpar.genome_io import save_genome_json
from neatpar.runner import UnityEvaluator, outputs_to_actions
from helpers import BALL, BUILDS, free_worker_id, write_config

TEAMS = os.path.join(BUILDS, "teams")


def ball_config(tmp_path, agents=4, pop=10, max_steps=20, episodes=1, **neatpar):
    section = {"env": BALL, "env_args": f"--agents {agents} --max-steps {max_steps}",
               "behaviors": "Ball3D?team=0: population", "max_steps": max_steps,
               "episodes_per_genome": episodes, "seed": 3, "worker_id": free_worker_id(), **neatpar}
    path = write_config(tmp_path, "ball.cfg", neatpar=section, pop_size=pop, num_inputs=8, num_outputs=2,
                        activation_options="tanh", activation_default="tanh")
    return run_config.load(path)


def first_generation(config, seed=5):
    return list(neat.Population(config, seed=seed).population.items())


def test_more_genomes_than_agents_take_turns(tmp_path):
    config, run = ball_config(tmp_path, agents=3, pop=10, max_steps=60, episodes=2)
    run = run_config.RunConfig(**{**run.__dict__, "env_args": run.env_args + ("--stats", "1")})
    genomes = first_generation(config)
    with UnityEvaluator(run.env, run.behaviors, _run=run) as evaluator:
        evaluator.evaluate(genomes, config)
        returns = evaluator.episode_returns
        stats = evaluator.last_stats
        simulated = [v for v, _ in evaluator.bridge.stats.get_and_reset_stats()["Environment/Cumulative Reward"]]
    assert sorted(returns) == sorted(k for k, _ in genomes)
    assert all(len(r) == 2 for r in returns.values())           # exactly episodes_per_genome each
    for key, genome in genomes:
        assert genome.fitness == pytest.approx(np.mean(returns[key]))
        for value in returns[key]:
            assert -1.0 - 1e-6 <= value <= 0.1 * 60 + 1e-6
    assert stats.episodes == 20
    # Every return the runner recorded is an episode the simulator itself counted (its Stats
    # channel), terminal reward included: rewards went to the genome that earned them.
    pool = sorted(simulated)
    for value in (r for rs in returns.values() for r in rs):
        match = min(pool, key=lambda v: abs(v - value))
        assert abs(match - value) < 1e-4
        pool.remove(match)


def test_runner_step_limit_cuts_episodes(tmp_path):
    # The simulator would run 1000 steps; the runner cuts each episode at 10.
    config, run = ball_config(tmp_path, agents=4, pop=4, max_steps=10)
    run = run_config.RunConfig(**{**run.__dict__, "env_args": ("--agents", "4", "--max-steps", "1000")})
    genomes = first_generation(config)
    with UnityEvaluator(run.env, run.behaviors, _run=run) as evaluator:
        evaluator.evaluate(genomes, config)
    assert all(g.fitness <= 1.0 + 1e-6 for _, g in genomes)


def test_same_seed_same_fitness(tmp_path):
    config, run = ball_config(tmp_path, agents=3, pop=8, max_steps=25)
    results = []
    for _ in range(2):
        genomes = first_generation(config)
        with UnityEvaluator(run.env, run.behaviors, _run=run) as evaluator:
            evaluator.evaluate(genomes, config)
        results.append([g.fitness for _, g in genomes])
    assert results[0] == results[1]
    assert len(set(results[0])) > 1


def test_fitness_aggregate_option(tmp_path):
    config, run = ball_config(tmp_path, agents=4, pop=6, max_steps=12, episodes=3, fitness="min")
    genomes = first_generation(config)
    with UnityEvaluator(run.env, run.behaviors, _run=run) as evaluator:
        evaluator.evaluate(genomes, config)
        for key, genome in genomes:
            assert genome.fitness == min(evaluator.episode_returns[key])


def teams_config(tmp_path, behaviors, pop=8, areas=3):
    section = {"env": TEAMS, "env_args": f"--areas {areas} --max-steps 30", "behaviors": behaviors,
               "max_steps": 30, "seed": 2, "worker_id": free_worker_id()}
    path = write_config(tmp_path, "teams.cfg", neatpar=section, pop_size=pop, num_inputs=8, num_outputs=7,
                        activation_options="tanh", activation_default="tanh")
    return run_config.load(path)


class BestSoFar(neat.reporting.BaseReporter):
    def __init__(self):
        self.best = None

    def post_evaluate(self, config, population, species, best_genome):
        top = max(g.fitness for g in population.values())
        self.best = top if self.best is None else max(self.best, top)


def test_two_teams_against_the_champion(tmp_path):
    config, run = teams_config(tmp_path, "Blue?team=0: population, Purple?team=1: champion")
    population = neat.Population(config, seed=4)
    tracker = BestSoFar()
    population.add_reporter(tracker)
    goals = 0
    with UnityEvaluator(run.env, run.behaviors, _run=run) as evaluator:
        for _ in range(3):
            population.run(evaluator.evaluate, 1)
            returns = [r for rs in evaluator.episode_returns.values() for r in rs]
            assert len(returns) == 8  # only Blue's (population) episodes are scored
            goals += sum(abs(r) > 0.5 for r in returns)  # a win or a loss: group reward +-1
        assert evaluator.champion.fitness == tracker.best  # the best genome so far, frozen copy
    assert goals > 0


def test_fixed_opponent_from_a_genome_file(tmp_path):
    config, run = teams_config(tmp_path, "Blue?team=0: population, Purple?team=1: champion")
    genome = first_generation(config)[0][1]
    save_genome_json(genome, config, str(tmp_path / "opponent.json"))
    config, run = teams_config(tmp_path, "Blue?team=0: population, Purple?team=1: opponent.json")
    assert run.behaviors[1].role == "file"
    genomes = first_generation(config)
    with UnityEvaluator(run.env, run.behaviors, _run=run) as evaluator:
        evaluator.evaluate(genomes, config)
    assert all(g.fitness is not None for _, g in genomes)


def test_recurrent_networks_run(tmp_path):
    section = {"env": BALL, "env_args": "--agents 3 --max-steps 15", "behaviors": "Ball3D?team=0: population",
               "max_steps": 15, "network": "recurrent", "worker_id": free_worker_id()}
    path = write_config(tmp_path, "rec.cfg", neatpar=section, pop_size=6, num_inputs=8, num_outputs=2,
                        feed_forward="false", activation_options="tanh", activation_default="tanh")
    config, run = run_config.load(path)
    genomes = first_generation(config)
    for _, g in genomes:
        for _ in range(5):
            g.mutate(config.genome_config)
    with UnityEvaluator(run.env, run.behaviors, _run=run) as evaluator:
        evaluator.evaluate(genomes, config)
    assert all(np.isfinite(g.fitness) for _, g in genomes)


def test_outputs_to_actions_clip_and_respect_masks():
    spec = BehaviorSpec([ObservationSpec((8,), (1,), 0, "")], ActionSpec(1, (3, 2)))
    outputs = np.array([[5.0, 0.9, 0.1, 0.5, 0.2, 0.3], [-5.0, 0.9, 0.8, 0.7, 0.9, 0.1]])
    mask = [np.array([[True, False, False], [True, True, True]]), np.array([[False, True], [False, False]])]
    action = outputs_to_actions(spec, outputs, mask)
    assert action.continuous.tolist() == [[1.0], [-1.0]]
    assert action.discrete.tolist() == [[2, 0], [0, 0]]  # best allowed; all forbidden falls back to 0
