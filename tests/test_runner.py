"""The episode runner (neatpar/episodes/runner.py), through UnityEvaluator, on the simulator builds through the
real mlagents-envs: seeded generations, opponents (the champion, a genome file), every network kind, a
relaunched game and the on_decisions hook. (How a generation is stepped: test_generation.py.)"""
import dataclasses
import os

import neat
import numpy as np
import pytest

from neatpar import settings as run_config
from neatpar.record.genomes import save_genome_json
from neatpar.episodes.env_evaluator import UnityEvaluator
from neatpar.episodes.runner import EpisodeRunner
from support.configs import write_config
from support.episode_runs import CTRNN_GENES, ball_config, expected_return, first_generation, probe_config
from support.paths import BALL, BUILDS
from support.simulators import free_worker_id

TEAMS = os.path.join(BUILDS, "teams")


def test_same_seed_same_fitness(tmp_path):
    config, run = ball_config(tmp_path, agents=3, pop=8, max_steps=25)
    results = []
    for _ in range(2):
        genomes = first_generation(config)
        with UnityEvaluator.from_settings(run) as evaluator:
            evaluator.evaluate(genomes, config)
        results.append([g.fitness for _, g in genomes])
    assert results[0] == results[1]
    assert len(set(results[0])) > 1


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
    with UnityEvaluator.from_settings(run) as evaluator:
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
    with UnityEvaluator.from_settings(run) as evaluator:
        evaluator.evaluate(genomes, config)
    # The same opponent as the champion role's before there is a champion (the first genome):
    # the same game, the same fitnesses.
    champion_config, champion_run = teams_config(tmp_path, "Blue?team=0: population, Purple?team=1: champion")
    against_first = first_generation(champion_config)
    with UnityEvaluator.from_settings(champion_run) as evaluator:
        evaluator.evaluate(against_first, champion_config)
    assert [g.fitness for _, g in genomes] == [g.fitness for _, g in against_first]
    assert None not in [g.fitness for _, g in genomes]


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
    with UnityEvaluator.from_settings(run) as evaluator:
        evaluator.evaluate(genomes, config)
    assert all(np.isfinite(g.fitness) for _, g in genomes)


@pytest.mark.parametrize("network", ["feedforward", "recurrent", "ctrnn"])
def test_every_kind_of_network_plays_from_a_camera(tmp_path, network):
    """A camera's image reaches the networks flattened (6 x 6 x 3 = 108 inputs): each kind plays a
    generation on the camera build, and the genomes, seeing differently, score differently."""
    memory = network != "feedforward"
    section = {"env": os.path.join(BUILDS, "camera"), "env_args": "--agents 4 --size 6 --max-steps 10",
               "behaviors": "Camera?team=0: population", "max_steps": 10, "network": network, "seed": 2,
               "worker_id": free_worker_id()}
    path = write_config(tmp_path, "camera.cfg", neatpar=section, pop_size=6, num_inputs=108, num_outputs=2,
                        activation_options="tanh", activation_default="tanh", feed_forward="false" if memory else "true",
                        num_hidden=1 if memory else 0, **(CTRNN_GENES if network == "ctrnn" else {}))
    config, run = run_config.load(path)
    genomes = first_generation(config)
    with UnityEvaluator.from_settings(run) as evaluator:
        evaluator.evaluate(genomes, config)
    fitness = [genome.fitness for _, genome in genomes]
    assert all(np.isfinite(fitness)) and len(set(fitness)) > 1



def test_a_relaunched_game_reports_its_late_behavior_again_and_scores_stay_exact(tmp_path, caplog):
    """The game dies mid-generation (SIGKILL at the runner's 12th step); the relaunched game's
    Rival appears late again (7 academy steps after each reset), its spec is read again, and every
    genome's fitness is still exact."""
    import signal
    config, settings = probe_config(tmp_path, "--behaviors 2 --agents 2 --spawn-after 0,7 --episode-decisions 6,0",
                                    "Probe?team=0: population, Rival?team=1: champion")
    genomes = first_generation(config)
    with UnityEvaluator.from_settings(settings) as evaluator:
        environment = evaluator.environment
        step, steps = environment.step, []

        def step_then_kill_once():
            steps.append(1)
            if len(steps) == 12:
                os.kill(environment.process_pid, signal.SIGKILL)
            step()
        environment.step = step_then_kill_once
        with caplog.at_level("WARNING", logger="neatpar"):
            evaluator.evaluate(genomes, config)
        launches = environment.bridge.launches
    assert launches == 2 and any("relaunching it" in r.getMessage() for r in caplog.records)
    for key, genome in genomes:
        assert genome.fitness == expected_return(genome, config, 6, 20), key


def test_on_decisions_sees_every_scored_decision_once_with_its_genome_and_changes_nothing(tmp_path):
    """Genomes take turns on 3 agents and play episodes the runner cuts at 7 decisions (overtime
    follows); the hook is told of each scored decision once, by agent and genome, before the
    actions, and the returns are those of a generation without it."""
    config, run = ball_config(tmp_path, agents=3, pop=7, max_steps=7, episodes=2)
    run = dataclasses.replace(run, env_args=("--agents", "3", "--max-steps", "12"))
    genomes = [g for _, g in first_generation(config)]
    seen = []
    with UnityEvaluator.from_settings(run) as evaluator:
        runner = EpisodeRunner(evaluator.environment, run, config)
        plain, stats = runner.evaluate(genomes)
        runner.on_decisions = lambda behavior, agents, played: seen.append((behavior, agents.copy(), played.copy()))
        watched, _ = runner.evaluate(genomes)
    assert watched == plain
    assert {behavior for behavior, _, _ in seen} == {"Ball3D?team=0"}
    played = np.concatenate([p for _, _, p in seen])
    assert np.bincount(played, minlength=7).tolist() == [14] * 7   # 2 episodes of 7 decisions each
    assert sum(stats.scored["Ball3D?team=0"].lengths) == len(played)
    for _, agents, playing in seen:
        assert len(set(agents.tolist())) == len(agents) == len(playing) <= 3   # one genome per agent at a time
