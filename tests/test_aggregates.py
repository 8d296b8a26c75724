"""A genome's fitness from its episode returns (neatpar/episodes/aggregates.py): every `[neatpar] fitness`
choice has its aggregate, and a run scores each genome by the one it names."""
import statistics

import pytest

from neatpar.config.settings_model import FITNESS_AGGREGATES
from neatpar.episodes.aggregates import AGGREGATES, aggregate
from neatpar.episodes.env_evaluator import UnityEvaluator
from support.episode_runs import ball_config, first_generation

PLAIN = {"mean": statistics.fmean, "min": min, "max": max, "median": statistics.median, "sum": sum}


def test_every_fitness_choice_has_its_aggregate():
    assert set(AGGREGATES) == set(FITNESS_AGGREGATES)


@pytest.mark.parametrize("how", sorted(PLAIN))
def test_each_aggregate_is_the_plain_one(how):
    returns = [0.5, -1.25, 3.0, 0.0, 2.5]
    assert aggregate(returns, how) == pytest.approx(PLAIN[how](returns))
    assert aggregate([-2.0], how) == pytest.approx(-2.0)
    assert isinstance(aggregate(returns, how), float)


def test_fitness_aggregate_option(tmp_path):
    config, run = ball_config(tmp_path, agents=4, pop=6, max_steps=12, episodes=3, fitness="min")
    genomes = first_generation(config)
    with UnityEvaluator.from_settings(run) as evaluator:
        evaluator.evaluate(genomes, config)
        for key, genome in genomes:
            assert genome.fitness == min(evaluator.episode_returns[key])
