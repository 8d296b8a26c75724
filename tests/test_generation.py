"""One generation's stepping (neatpar/episodes/generation.py), through UnityEvaluator on the simulator
builds: genomes take turns on the agents, episodes are cut at max_steps and never inherited, and on
the probe build every return is exact, in process, on the pool and on env hosts."""
import dataclasses

import neat
import numpy as np
import pytest

from neatpar.episodes.env_evaluator import UnityEvaluator
from support.episode_runs import (MODES, ball_config, expected_return, first_generation, observation, probe_config,
                                  run_generation)


def test_more_genomes_than_agents_take_turns(tmp_path):
    config, run = ball_config(tmp_path, agents=3, pop=10, max_steps=60, episodes=2)
    run = dataclasses.replace(run, env_args=run.env_args + ("--stats", "1"))
    genomes = first_generation(config)
    with UnityEvaluator.from_settings(run) as evaluator:
        evaluator.evaluate(genomes, config)
        returns = evaluator.episode_returns
        stats = evaluator.last_stats
        simulated = evaluator.last_stats.game.series["Environment/Cumulative Reward"].values
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


def test_max_steps_cuts_episodes(tmp_path):
    # The simulator would run 1000 steps; the runner cuts each episode at 10.
    config, run = ball_config(tmp_path, agents=4, pop=4, max_steps=10)
    run = dataclasses.replace(run, env_args=("--agents", "4", "--max-steps", "1000"))
    genomes = first_generation(config)
    with UnityEvaluator.from_settings(run) as evaluator:
        evaluator.evaluate(genomes, config)
    assert all(g.fitness <= 1.0 + 1e-6 for _, g in genomes)


SCENARIOS = {
    # name: (probe arguments, [neatpar] behaviors, max_steps, episode length, executions per decision)
    "period 3, actions between decisions": ("--agents 3 --decision-period 3 --episode-decisions 4", None, 20, 4, 3),
    "period 3, no actions between": ("--agents 3 --decision-period 3 --actions-between 0 --episode-decisions 4",
                                      None, 20, 4, 1),
    "staggered offsets, rival joins late": ("--behaviors 2 --agents 2 --decision-period 2 --decision-offset 0,1 "
                                            "--spawn-after 0,7 --episode-decisions 3,0",
                                            "Probe?team=0: population, Rival?team=1: champion", 20, 3, 2),
    "turn-based pair": ("--behaviors 2 --agents 2 --turns 1 --episode-decisions 5",
                        "Probe?team=0: population, Rival?team=1: population", 20, 5, 1),
    "terminal and next decision in one step": ("--agents 2 --episode-decisions 3", None, 20, 3, 1),
    "agents destroyed and respawned with fresh ids": ("--agents 3 --lifetime 4", None, 20, 4, 1),
    "episodes longer than max_steps": ("--agents 3 --episode-decisions 9", None, 5, 9, 1),
    "episodes that never end": ("--agents 3 --decision-period 2", None, 4, 0, 2),
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_every_return_is_exact_for_the_ways_real_games_behave(tmp_path, scenario, mode):
    args, behaviors, max_steps, episode, executions = SCENARIOS[scenario]
    config, settings = probe_config(tmp_path, args, behaviors or "Probe?team=0: population", max_steps=max_steps,
                                    **MODES[mode])
    genomes, stats = run_generation(config, settings)
    for key, genome in genomes:
        assert genome.fitness == expected_return(genome, config, episode, max_steps, executions), (scenario, key)
    assert stats.episodes == len(genomes)  # one scored episode each, whichever agent played it


def test_recurrent_genomes_start_each_episode_fresh_and_score_exactly(tmp_path):
    """Recurrent networks change their action from decision to decision; every genome's episode
    starts from a clean state, also after the runner resets a game that never ends episodes."""
    config, settings = probe_config(tmp_path, "--agents 3 --decision-period 2", max_steps=6, network="recurrent")
    genomes, stats = run_generation(config, settings)
    assert stats.resets >= 2   # 8 genomes on 3 agents whose game episodes never end
    for key, genome in genomes:
        assert genome.fitness == expected_return(genome, config, 0, 6, 2, network="recurrent"), key


@pytest.mark.parametrize("mode", MODES)
def test_ctrnn_genomes_start_each_episode_fresh_and_score_exactly(tmp_path, mode):
    """CTRNNs (each decision one CTRNN.advance of 0.1 s in steps of 0.02 s) score exactly what
    neat-python's CTRNN earns from a fresh network per episode, in process, on the pool and on env
    hosts: episodes that end, an agent that plays the same genome again (3 genomes, 2 episodes
    each, on 3 agents), and episodes cut by a reset of a game that never ends them."""
    scenarios = [("--agents 3 --episode-decisions 7", 20, 7, 8, 1), ("--agents 3 --episode-decisions 5", 20, 5, 3, 2),
                 ("--agents 3", 9, 0, 8, 1)]
    for args, max_steps, episode, pop, episodes in scenarios:
        config, settings = probe_config(tmp_path, args, max_steps=max_steps, network="ctrnn", pop=pop,
                                        episodes_per_genome=episodes, **MODES[mode])
        genomes, _ = run_generation(config, settings)
        returns = [genome.fitness for _, genome in genomes]
        assert len(set(returns)) > 1  # the genomes act differently
        for key, genome in genomes:
            assert genome.fitness == expected_return(genome, config, episode, max_steps, network="ctrnn"), (args, key)


def test_discrete_actions_take_the_best_allowed_and_score_exactly(tmp_path):
    config, settings = probe_config(tmp_path, "--agents 4 --discrete 3 --mask-first 1 --episode-decisions 3",
                                    discrete=3)
    genomes, _ = run_generation(config, settings)
    for key, genome in genomes:
        net = neat.nn.FeedForwardNetwork.create(genome, config)
        scores = np.asarray(net.activate(observation()))
        best_allowed = float(1 + np.argmax(scores[1:]))  # action 0 is masked
        assert genome.fitness == 3 * best_allowed, key


def test_mixed_decision_rates_count_the_population_s_decisions(tmp_path):
    """Population deciding every 4th step, opponent every step, episodes of 200 decisions and
    max_steps = 200: the budget is the population's decisions, not environment steps."""
    config, settings = probe_config(
        tmp_path, "--behaviors 2 --agents 2 --decision-period 4,1 --episode-decisions 200,0",
        "Probe?team=0: population, Rival?team=1: champion", pop=4, max_steps=200)
    genomes, stats = run_generation(config, settings)
    for key, genome in genomes:
        assert genome.fitness == expected_return(genome, config, 200, 200, 4), key
    # Two rounds of 200 decisions, one every 4th academy step; the opponent makes every step an
    # exchange; the last terminal arrives one step after the last decision.
    assert stats.env_steps == (2 * 200 - 1) * 4 + 1


def test_a_longer_game_episode_is_never_inherited_and_warns_once(tmp_path, caplog):
    config, settings = probe_config(tmp_path, "--agents 2 --episode-decisions 9", max_steps=5)
    with caplog.at_level("WARNING", logger="neatpar"):
        genomes, _ = run_generation(config, settings)
    warnings = [r.getMessage() for r in caplog.records if "max_steps" in r.getMessage()]
    assert len(warnings) == 1 and "after max_steps = 5 decisions" in warnings[0]
    assert all(g.fitness == expected_return(g, config, 9, 5) for _, g in genomes)

