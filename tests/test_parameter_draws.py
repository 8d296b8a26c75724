"""Environment parameters drawn in Python for Gymnasium environments (neatpar/envs/parameter_draws.py):
constants as they are, samplers a new draw per episode from their own seeds, and a parameter file
driving a Gymnasium run's `reset(options=...)` with its lessons; a check of the winner on fresh
episodes draws other values than training does."""
import gymnasium
import neat
import numpy as np
from gymnasium import spaces

from neatpar import EnvEvaluator
from neatpar.config.parameter_file import Constant, Gaussian, MultiRangeUniform, Uniform
from neatpar.envs.parameter_draws import ParameterDraws
from support.configs import make_config
from support.curricula import write_yaml

MODULE = __name__


def test_each_episode_draws_anew_from_each_sampler_s_own_seed():
    values = {"c": Constant(2.0, 1), "u": Uniform(1.0, 2.0, 5), "g": Gaussian(10.0, 0.5, 6),
              "m": MultiRangeUniform(((0.0, 1.0), (5.0, 8.0)), 7)}
    draws = [ParameterDraws(values).draw() for _ in range(2)]
    assert draws[0] == draws[1]                          # made anew: the same first values again
    many = ParameterDraws(values)
    episodes = [many.draw() for _ in range(3000)]
    assert {e["c"] for e in episodes} == {2.0}
    u = np.array([e["u"] for e in episodes])
    assert ((1.0 <= u) & (u < 2.0)).all() and len(set(u)) == 3000
    assert abs(np.mean([e["g"] for e in episodes]) - 10.0) < 0.05
    m = np.array([e["m"] for e in episodes])
    assert (((0 <= m) & (m <= 1)) | ((5 <= m) & (m <= 8))).all() and 0.7 < np.mean(m >= 5) < 0.8


class Reach(gymnasium.Env):
    """Scores the `goal` option its episode began with: reward goal - |goal - action| for one step."""
    observation_space = spaces.Box(-1.0, 1.0, (1,), np.float32)
    action_space = spaces.Box(-1.0, 1.0, (1,), np.float32)
    goals: list = []   # every option an episode began with, in this process

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.goal = (options or {}).get("goal", 0.0)
        Reach.goals.append(dict(options or {}))
        return np.zeros(1, np.float32), {}

    def step(self, action):
        return np.zeros(1, np.float32), self.goal, True, False, {}


def test_a_parameter_file_drives_reset_options_lesson_by_lesson(tmp_path):
    body = ("noise:\n  sampler_type: uniform\n  sampler_parameters: {min_value: 0, max_value: 1}\n"
            "goal:\n  curriculum:\n    - name: near\n      completion_criteria: {behavior: Reach, measure: reward, "
            "threshold: 0.5, signal_smoothing: false}\n      value: 0.9\n    - name: far\n      value: 0.6\n")
    path = write_yaml(tmp_path, body)
    config = make_config(tmp_path, num_inputs=1, num_outputs=1, pop_size=4)
    population = neat.Population(config, seed=1)
    Reach.goals.clear()
    with EnvEvaluator(Reach, env_parameters=path, agents=2, seed=3, max_steps=5, generations=3) as evaluator:
        population.run(evaluator.evaluate, 2)
        assert evaluator.curriculum.lessons() == {"goal": 1}
        # The champion is of the lesson played now: a fitness of 0.9 in the first lesson does not count.
        assert evaluator.champion.fitness == 0.6
    goals = [options["goal"] for options in Reach.goals]
    assert goals[:4] == [0.9] * 4 and goals[4:8] == [0.6] * 4   # one episode per genome, 4 genomes
    noise = [options["noise"] for options in Reach.goals]
    assert len(set(noise[:4])) == 4 and noise[:4] == noise[4:]  # drawn per episode, the same sequence each generation


def test_a_check_of_the_winner_on_fresh_episodes_draws_other_values_than_training(tmp_path):
    path = write_yaml(tmp_path, "noise:\n  sampler_type: uniform\n  sampler_parameters: {min_value: 0, max_value: 1}\n")
    config = make_config(tmp_path, num_inputs=1, num_outputs=1, pop_size=4)
    population = neat.Population(config, seed=1)
    Reach.goals.clear()
    with EnvEvaluator(Reach, env_parameters=path, agents=2, seed=3, max_steps=5, winner_candidates=1,
                      winner_episodes=4, winner_interval=1) as evaluator:
        population.run(evaluator.evaluate, 1)
        assert evaluator.validation.score.episodes == 4
    noise = [options["noise"] for options in Reach.goals]
    training, check = noise[:4], noise[4:]
    assert len(check) == 4 and len(set(check)) == 4 and not set(check) & set(training)
