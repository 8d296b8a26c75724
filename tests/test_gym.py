"""Gymnasium environments (neatpar/envs/gym.py) through the episode runner: copies of real
Gymnasium environments (and a few Env classes of this module's own, named as module:Class) played
by real neat-python genomes, against a plain per-genome Gymnasium loop with neat-python's
FeedForwardNetwork."""
import os
import subprocess
import sys

import gymnasium
import neat
import numpy as np
import pytest
from gymnasium import spaces

from neatpar import ConfigError, EnvEvaluator, UnityEvaluator
from neatpar.envs.gym import GymEnvironment, GymSetup, episode_seed
from neatpar.settings import Settings
from support.configs import make_config, write_config
from support.paths import ROOT
from support.runs import neatpar_cli

MODULE = __name__  # this module, as the Env classes below are named from a config: gymnasium:MODULE:Class
# Box2D's SWIG bindings warn about themselves when LunarLander first imports them.
pytestmark = pytest.mark.filterwarnings("ignore:builtin type (SwigPy|swigvarlink):DeprecationWarning")


# ---------------------------------------------------------------- Env classes of this module's own

class Dial(gymnasium.Env):
    """Random Box observations; the reward is a weighted sum of the action's values, so every
    return shows exactly which actions were taken. Episodes end after 3 to 11 steps, at random."""

    ACTIONS = {
        "multidiscrete": lambda: spaces.MultiDiscrete([3, 4], start=[1, -2]),
        "discrete_start": lambda: spaces.Discrete(5, start=-2),
        "box_infinite": lambda: spaces.Box(np.array([-np.inf, 0.0, -2.0], np.float32),
                                           np.array([np.inf, np.inf, 3.0], np.float32)),
        "multibinary": lambda: spaces.MultiBinary(3),
        "dict_observations": lambda: spaces.Discrete(2),
    }

    def __init__(self, kind: str = "multidiscrete"):
        self.action_space = self.ACTIONS[kind]()
        self.observation_space = spaces.Box(-1.0, 1.0, (3,), np.float32)
        if kind == "dict_observations":
            self.observation_space = spaces.Dict({"a": spaces.Box(-1.0, 1.0, (3,), np.float32)})
        self.weights = np.array([1.0, 10.0, 100.0])

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.left = int(self.np_random.integers(3, 12))
        return self._observe(), {}

    def _observe(self):
        return self.np_random.uniform(-1.0, 1.0, 3).astype(np.float32)

    def step(self, action):
        values = np.ravel(np.asarray(action, np.float64))
        self.left -= 1
        return self._observe(), float(values @ self.weights[:len(values)]), self.left <= 0, False, {}


class Endless(gymnasium.Env):
    """An episode the task never ends: reward 1 per step, until a TimeLimit cuts it."""
    observation_space = spaces.Box(-1.0, 1.0, (1,), np.float32)
    action_space = spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return np.zeros(1, np.float32), {}

    def step(self, action):
        return np.zeros(1, np.float32), 1.0, False, False, {}


class Picture(gymnasium.Env):
    """uint8 images of 8 x 6 x 3 pixels at random; the reward is the first action, and an episode
    lasts 4 steps."""
    observation_space = spaces.Box(0, 255, (8, 6, 3), np.uint8)
    action_space = spaces.Box(-1.0, 1.0, (2,), np.float32)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.left = 4
        return self._observe(), {}

    def _observe(self):
        return self.np_random.integers(0, 256, (8, 6, 3)).astype(np.uint8)

    def step(self, action):
        self.left -= 1
        return self._observe(), float(action[0]), self.left <= 0, False, {}


# ---------------------------------------------------------------- a plain Gymnasium loop

def plain_action(space, outputs):
    """How a network's outputs become an action, written out for one agent."""
    if isinstance(space, spaces.Discrete):
        return int(np.argmax(outputs)) + int(space.start)
    if isinstance(space, spaces.MultiDiscrete):
        action, start = [], 0
        for size, first in zip(space.nvec, space.start):
            action.append(int(np.argmax(outputs[start:start + size])) + int(first))
            start += size
        return np.array(action, space.dtype)
    action = []
    for o, low, high in zip(outputs, space.low.tolist(), space.high.tolist()):
        o = min(max(o, -1.0), 1.0)
        finite = np.isfinite(low) and np.isfinite(high)
        action.append(low + (o + 1) / 2 * (high - low) if finite else min(max(o, low), high))
    return np.array(action, space.dtype)


def plain_returns(make_env, pairs, config, seed, episodes, max_steps, network=neat.nn.FeedForwardNetwork):
    """Each genome's episode returns in a per-genome loop (neat-python's examples): episode r of
    genome g is the (r * len(pairs) + g)-th episode the run started, seeded by neatpar's rule."""
    env = make_env()
    returns = {}
    for g, (key, genome) in enumerate(pairs):
        returns[key] = []
        for r in range(episodes):
            net = network.create(genome, config)  # a recurrent network starts each episode clean
            observation, _ = env.reset(seed=episode_seed(seed, r * len(pairs) + g))
            total = 0.0
            for _ in range(max_steps):
                # The observation as a list of Python floats, as neat-python's networks take inputs:
                # numpy scalars would make its arithmetic numpy's (float32 products of a float32
                # observation under NumPy 2) and its sum() a plain one (Python 3.12 and later sum
                # Python floats with compensation), so the loop would not be neat-python's own.
                inputs = np.ravel(observation).tolist()
                action = plain_action(env.action_space, net.activate(inputs))
                observation, reward, terminated, truncated, _ = env.step(action)
                total += reward
                if terminated or truncated:
                    break
            returns[key].append(total)
    env.close()
    return returns


def has_cycle(genome) -> bool:
    links = [k for k, c in genome.connections.items() if c.enabled]
    return any(neat.graphs.creates_cycle([l for l in links if l != link], link) for link in links)


def population(tmp_path, inputs, outputs, size=12, seed=3, **options):
    config = make_config(tmp_path, num_inputs=inputs, num_outputs=outputs, pop_size=size, activation_default="tanh",
                         activation_options="tanh", num_hidden=1, **options)
    return config, list(neat.Population(config, seed=seed).population.items())


CASES = {
    # id: (env, env_kwargs, inputs, outputs, max_steps, make the same env for the plain loop)
    "CartPole (Box observations, Discrete actions)":
        ("gymnasium:CartPole-v1", {}, 4, 2, 120, lambda: gymnasium.make("CartPole-v1")),
    "LunarLander (float64 rewards, Discrete(4))":
        ("gymnasium:LunarLander-v3", {}, 8, 4, 120, lambda: gymnasium.make("LunarLander-v3")),
    "LunarLander continuous (Box actions in [-1, 1])":
        ("gymnasium:LunarLander-v3", {"continuous": True}, 8, 2, 80,
         lambda: gymnasium.make("LunarLander-v3", continuous=True)),
    "Pendulum (Box actions in [-2, 2], cut by its own TimeLimit at 200)":
        ("gymnasium:Pendulum-v1", {}, 3, 1, 1000, lambda: gymnasium.make("Pendulum-v1")),
    "MultiDiscrete with starts":
        (f"gymnasium:{MODULE}:Dial", {"kind": "multidiscrete"}, 3, 7, 50, lambda: Dial("multidiscrete")),
    "Discrete with a start":
        (f"gymnasium:{MODULE}:Dial", {"kind": "discrete_start"}, 3, 5, 50, lambda: Dial("discrete_start")),
    "Box with infinite and half-infinite bounds":
        (f"gymnasium:{MODULE}:Dial", {"kind": "box_infinite"}, 3, 3, 50, lambda: Dial("box_infinite")),
}


@pytest.mark.parametrize("case", list(CASES))
def test_fitness_equals_a_plain_gymnasium_loop_with_feedforward_networks(tmp_path, case):
    env, kwargs, inputs, outputs, max_steps, make_env = CASES[case]
    config, pairs = population(tmp_path, inputs, outputs)
    with EnvEvaluator(env, env_kwargs=kwargs, agents=5, seed=7, max_steps=max_steps, episodes_per_genome=2,
                      fitness="mean") as evaluator:
        evaluator.evaluate(pairs, config)
        seed = evaluator.environment.seed
        got = dict(evaluator.episode_returns)
    expected = plain_returns(make_env, pairs, config, seed, 2, max_steps)
    assert got == expected                                     # exact, episode by episode
    assert [g.fitness for _, g in pairs] == [float(np.mean(expected[k])) for k, _ in pairs]
    assert len({tuple(r) for r in got.values()}) > 1           # the genomes did play differently


def test_recurrent_networks_equal_neat_pythons_recurrent_network(tmp_path):
    config, pairs = population(tmp_path, 4, 2, feed_forward="false", node_add_prob=0.6, conn_add_prob=0.9)
    for _, genome in pairs:  # some recurrent links, so that the hidden state matters
        for _ in range(4):
            genome.mutate(config.genome_config)
    assert sum(map(has_cycle, (g for _, g in pairs))) >= 3
    with EnvEvaluator("gymnasium:CartPole-v1", network="recurrent", agents=5, seed=4, max_steps=150,
                      episodes_per_genome=2) as evaluator:
        evaluator.evaluate(pairs, config)
        seed, got = evaluator.environment.seed, dict(evaluator.episode_returns)
    expected = plain_returns(lambda: gymnasium.make("CartPole-v1"), pairs, config, seed, 2, 150,
                             network=neat.nn.RecurrentNetwork)
    assert got == expected


def test_an_env_class_given_from_python(tmp_path):
    config, pairs = population(tmp_path, 3, 5, size=4)
    with EnvEvaluator(Dial, env_kwargs={"kind": "discrete_start"}, agents=2, seed=5, max_steps=50) as evaluator:
        assert evaluator.settings.env == f"gymnasium:{MODULE}:Dial"
        evaluator.evaluate(pairs, config)
        seed, got = evaluator.environment.seed, dict(evaluator.episode_returns)
    assert got == plain_returns(lambda: Dial("discrete_start"), pairs, config, seed, 1, 50)


def test_pendulum_episodes_are_cut_by_its_own_time_limit(tmp_path):
    """Pendulum never ends an episode by itself: its TimeLimit (200 steps) truncates each one."""
    env = GymEnvironment(GymSetup("Pendulum-v1", copies=2))
    env.reset(3)
    for _ in range(199):
        env.act("Pendulum-v1", np.zeros((2, 1)))
        env.step()
        assert not len(env.poll()["Pendulum-v1"].terminal_ids)
    env.act("Pendulum-v1", np.zeros((2, 1)))
    env.step()
    batch = env.poll()["Pendulum-v1"]
    assert batch.terminal_ids.tolist() == [0, 1] and batch.interrupted.tolist() == [True, True]
    env.close()


def test_a_copy_reports_its_end_and_its_next_first_decision_in_the_same_step():
    env = GymEnvironment(GymSetup("CartPole-v1", copies=3))
    env.reset(11)
    batch = env.poll()["CartPole-v1"]
    assert batch.decision_ids.tolist() == [0, 1, 2] and not len(batch.terminal_ids)
    for i in range(3):  # the k-th episode started is seeded with episode_seed(seed, k)
        first, _ = gymnasium.make("CartPole-v1").reset(seed=episode_seed(11, i))
        assert batch.observations[i].tolist() == first.astype(np.float64).tolist()
    ended, steps = [], 0
    while not ended:  # always push right: the pole falls (terminated, not truncated)
        env.act("CartPole-v1", np.tile([0.0, 1.0], (3, 1)))
        env.step()
        steps += 1
        batch = env.poll()["CartPole-v1"]
        ended = batch.terminal_ids.tolist()
    assert ended and set(ended) <= set(batch.decision_ids.tolist())   # ended and deciding again
    assert not batch.interrupted.any() and batch.terminal_rewards.tolist() == [1.0] * len(ended)
    rows = [batch.decision_ids.tolist().index(i) for i in ended]
    assert batch.decision_rewards[rows].tolist() == [0.0] * len(ended)  # a new episode has earned nothing
    first, _ = gymnasium.make("CartPole-v1").reset(seed=episode_seed(11, 3))
    assert batch.observations[rows[0]].tolist() == first.astype(np.float64).tolist()
    # the ended episode's last observation comes with its end (behaviour descriptors read it)
    alone = gymnasium.make("CartPole-v1")
    last, _ = alone.reset(seed=episode_seed(11, ended[0]))
    for _ in range(steps):
        last, *_ = alone.step(1)
    assert batch.terminal_observations.shape == (len(ended), 4)
    assert batch.terminal_observations[0].tolist() == last.astype(np.float64).tolist()
    env.close()


def test_truncation_by_the_envs_own_time_limit_and_by_max_steps(tmp_path):
    config, pairs = population(tmp_path, 1, 2, size=6)
    endless = f"gymnasium:{MODULE}:Endless"
    # The environment's own TimeLimit (gymnasium.make's max_episode_steps) ends episodes at 7 steps...
    with EnvEvaluator(endless, env_kwargs={"max_episode_steps": 7}, agents=4, max_steps=10, seed=1) as evaluator:
        evaluator.evaluate(pairs, config)
        assert [g.fitness for _, g in pairs] == [7.0] * 6
        assert evaluator.last_stats.scored_steps == 6 * 7
    # ... and max_steps = 5 decisions ends them first: the copy starts its next episode at once.
    with EnvEvaluator(endless, env_kwargs={"max_episode_steps": 7}, agents=4, max_steps=5, seed=1) as evaluator:
        evaluator.evaluate(pairs, config)
        stats = evaluator.last_stats
        assert [g.fitness for _, g in pairs] == [5.0] * 6
        assert stats.scored_steps == stats.agent_steps == 6 * 5   # no step on an unscored rest
        assert stats.env_steps == 10                                # 4 copies: 5 steps, then 2 copies 5 more


def test_copies_no_genome_needs_rest(tmp_path):
    """3 genomes and 8 copies: only 3 copies play, and every decision is a scored genome's."""
    config, pairs = population(tmp_path, 4, 2, size=3)
    with EnvEvaluator("gymnasium:CartPole-v1", agents=8, max_steps=50, seed=2, episodes_per_genome=2) as evaluator:
        evaluator.evaluate(pairs, config)
        stats = evaluator.last_stats
        assert stats.episodes == 6 and stats.agent_steps == stats.scored_steps
        assert evaluator.environment.episodes == 6


def test_expected_episodes_rest_the_other_copies_until_the_next_reset():
    env = GymEnvironment(GymSetup("CartPole-v1", copies=4))
    env.expect(3)
    env.reset(5)
    batch = env.poll()["CartPole-v1"]
    assert batch.decision_ids.tolist() == [0, 1, 2]            # only 3 episodes are needed
    ended = []
    while len(batch.decision_ids):
        env.act("CartPole-v1", np.tile([0.0, 1.0], (len(batch.decision_ids), 1)))
        env.step()
        batch = env.poll()["CartPole-v1"]
        ended += batch.terminal_ids.tolist()
    assert sorted(ended) == [0, 1, 2] and env.episodes == 3    # each ended once, none started again
    env.reset(None)                                             # no expect(): every copy plays
    assert env.poll()["CartPole-v1"].decision_ids.tolist() == [0, 1, 2, 3]
    env.close()


def evolve(population, generations, **settings):
    """Fitnesses of every generation of a short neat-python run on an EnvEvaluator, and where
    the evaluator played them."""
    seen = []
    with EnvEvaluator("gymnasium:CartPole-v1", **settings) as evaluator:
        def evaluate(genomes, config):
            evaluator.evaluate(genomes, config)
            seen.append([(k, g.fitness) for k, g in genomes])
        population.run(evaluate, generations)
        return seen, evaluator.hosts_note


def test_seeded_runs_repeat_exactly_in_process_and_on_two_env_hosts(tmp_path):
    runs, where = {}, {}
    for label, envs in (("in process", 1), ("again", 1), ("two hosts", 2), ("two hosts again", 2)):
        config, _ = population(tmp_path, 4, 2, size=16)  # a fresh config: neat-python's counts node keys in it
        runs[label], where[label] = evolve(neat.Population(config, seed=9), 3, agents=4, seed=21, max_steps=80,
                                           envs=envs)
    assert runs["in process"] == runs["again"]
    assert runs["two hosts"] == runs["two hosts again"]
    assert len({f for generation in runs["in process"] for _, f in generation}) > 3
    assert where["in process"] == "environment: 4 copies of CartPole-v1, in the main process"
    assert where["two hosts"] == "environments: 2 env hosts (local processes), each playing 4 copies of CartPole-v1"


def test_unity_evaluator_is_the_env_evaluator():
    assert UnityEvaluator is EnvEvaluator


# ---------------------------------------------------------------- bad input: one line naming the fix

def one_line(error) -> str:
    text = str(error.value)
    assert "\n" not in text, text
    return text


def test_wrong_observation_width_names_both(tmp_path):
    config, pairs = population(tmp_path, 5, 2, size=2)
    with EnvEvaluator("gymnasium:CartPole-v1", agents=2) as evaluator:
        with pytest.raises(ConfigError) as error:
            evaluator.evaluate(pairs, config)
    assert "observes 4 values but the genomes have num_inputs = 5: set num_inputs = 4" in one_line(error)


def test_wrong_action_width_names_both(tmp_path):
    config, pairs = population(tmp_path, 8, 2, size=2)
    with EnvEvaluator("gymnasium:LunarLander-v3", agents=2) as evaluator:
        with pytest.raises(ConfigError) as error:
            evaluator.evaluate(pairs, config)
    assert "takes 4 action values" in one_line(error) and "num_outputs = 2" in one_line(error)


@pytest.mark.parametrize("env, kwargs, named", [
    ("gymnasium:FrozenLake-v1", {}, "observation space Discrete(16) is not supported"),
    ("gymnasium:Blackjack-v1", {}, "observation space Tuple(Discrete(32), Discrete(11), Discrete(2)) is not supported"),
    (f"gymnasium:{MODULE}:Dial", {"kind": "dict_observations"}, "observation space Dict('a': Box("),
    (f"gymnasium:{MODULE}:Dial", {"kind": "multibinary"}, "action space MultiBinary(3) is not supported"),
])
def test_unsupported_spaces_are_refused_by_name(env, kwargs, named):
    with pytest.raises(ConfigError) as error:
        EnvEvaluator(env, env_kwargs=kwargs)
    assert named in one_line(error)


def test_unknown_id_carries_the_registrys_suggestion():
    with pytest.raises(ConfigError) as error:
        EnvEvaluator("gymnasium:LunarLandr-v3")
    assert "Did you mean: `LunarLander`?" in one_line(error)
    with pytest.raises(ConfigError) as error:
        EnvEvaluator("gymnasium:LunarLander-v9")
    assert "It provides versioned environments: [ `v3` ]" in one_line(error)


@pytest.mark.parametrize("values, message", [
    ({"env": "gymnasium:CartPole-v1", "behaviors": "Pole: population"},
     "a Gymnasium environment has one behavior, 'CartPole-v1', whose copies are the population; leave behaviors out"),
    ({"env": "gymnasium:CartPole-v1", "env_args": "--fast"}, "env_args are for Unity builds"),
    ({"env": "gymnasium:CartPole-v1", "env_kwargs": "gravity = fast"}, "which is not a Python literal"),
    ({"env": "gymnasium:", }, "names no Gymnasium environment"),
    ({"env": "gymnasium:CartPole-v1", "agents": 0}, "agents=0 is out of range"),
    ({"env": "unity_builds/ball", "behaviors": "Ball3D?team=0: population", "agents": 4},
     "agents = 4 sets the copies of a Gymnasium environment"),
    ({"env": "unity_builds/ball"}, "behaviors is missing"),
])
def test_settings_that_do_not_fit_a_gymnasium_environment(values, message):
    with pytest.raises(ConfigError) as error:
        Settings.create(values)
    assert message in one_line(error)


def test_a_gymnasium_env_brings_its_behavior_and_a_new_env_its_own():
    settings = Settings.create({"env": "gymnasium:CartPole-v1"})
    assert [(r.behavior, r.role) for r in settings.behaviors] == [("CartPole-v1", "population")]
    assert Settings.create({"env": "gymnasium:CartPole-v1", "behaviors": "CartPole-v1: population"}) == settings
    changed = settings.with_changes(env="gymnasium:Acrobot-v1")
    assert [r.behavior for r in changed.behaviors] == ["Acrobot-v1"] and changed.gym == "Acrobot-v1"
    assert Settings.create({"env": f"gymnasium:{MODULE}:Dial"}).behaviors[0].behavior == "Dial"


def test_env_kwargs_reach_gymnasium_make(tmp_path):
    settings = Settings.create({"env": "gymnasium:LunarLander-v3",
                                "env_kwargs": "continuous = true, gravity = -9.5, wind_power = 2"})
    assert dict(settings.env_kwargs) == {"continuous": True, "gravity": -9.5, "wind_power": 2}
    config, pairs = population(tmp_path, 8, 2, size=2)
    with EnvEvaluator.from_settings(settings.with_changes(agents=2, max_steps=5)) as evaluator:
        evaluator.evaluate(pairs, config)
        copy = evaluator.environment._envs[0]
        assert copy.unwrapped.gravity == -9.5 and copy.unwrapped.continuous
    with pytest.raises(ConfigError) as error:
        EnvEvaluator("gymnasium:CartPole-v1", env_kwargs={"gravity": 3})
    assert "env_kwargs do not fit gymnasium:CartPole-v1" in one_line(error) and "gravity" in one_line(error)


# ---------------------------------------------------------------- through `neatpar evolve`

def gym_cfg(folder, env="gymnasium:CartPole-v1", name="gym.cfg", **options):
    section = {"env": env, "agents": 8, "max_steps": 100, "generations": 2, "seed": 3, "checkpoint_interval": 1}
    neat_options = {"pop_size": 10, "num_inputs": 4, "num_outputs": 2, "activation_default": "tanh",
                    "activation_options": "tanh"}
    for key in list(options):
        (section if key not in neat_options else neat_options)[key] = options.pop(key)
    return write_config(folder, name, neatpar=section, **neat_options)


def refused(tmp_path, config, pattern, python_prelude=None):
    """`neatpar evolve` on a bad config: exit status 2, one line naming the fix, no run folder."""
    out = tmp_path / "should-not-exist"
    args = ["evolve", "--config", config, "--out", str(out)]
    if python_prelude is None:
        result = neatpar_cli(*args)
    else:
        code = f"{python_prelude}\nimport neatpar.cli\nraise SystemExit(neatpar.cli.main({args!r}))"
        result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2, result.stderr
    assert len(lines) == 1 and lines[0].startswith("neatpar: error: "), result.stderr
    assert pattern in lines[0], lines[0]
    assert not out.exists()


def test_evolve_and_play_a_gymnasium_config(tmp_path):
    config, out = gym_cfg(tmp_path), tmp_path / "run"
    result = neatpar_cli("evolve", "--config", config, "--out", str(out), "--agents", "3", "--envs", "2")
    assert result.returncode == 0, result.stderr
    assert "environments: 2 env hosts (local processes), each playing 3 copies of CartPole-v1" in result.stdout
    assert "gen    1" in result.stdout and (out / "winner.json").exists()
    played = neatpar_cli("play", "--config", config, "--genome", str(out / "winner.json"), "--episodes", "2")
    assert played.returncode == 0 and "2 episodes" in played.stdout, played.stderr


def test_evolve_refuses_a_wrong_width(tmp_path):
    refused(tmp_path, gym_cfg(tmp_path, num_inputs=3), "observes 4 values but the genomes have num_inputs = 3")


def test_evolve_refuses_an_unsupported_space(tmp_path):
    refused(tmp_path, gym_cfg(tmp_path, env="gymnasium:FrozenLake-v1"), "observation space Discrete(16)")


def test_evolve_refuses_an_unknown_id_with_the_registrys_suggestion(tmp_path):
    refused(tmp_path, gym_cfg(tmp_path, env="gymnasium:CartPol-v1"), "Did you mean: `CartPole`?")


def test_evolve_without_the_gym_extra_says_what_to_install(tmp_path):
    refused(tmp_path, gym_cfg(tmp_path), "gymnasium, which is not installed: pip install 'neatpar[gym]'",
            python_prelude="import sys; sys.modules['gymnasium'] = None")


def test_box2d_missing_says_what_to_install(tmp_path):
    refused(tmp_path, gym_cfg(tmp_path, env="gymnasium:LunarLander-v3", num_inputs=8, num_outputs=4),
            "needs a package that is not installed", python_prelude="import sys; sys.modules['Box2D'] = None")


def test_copies_made_with_frames_give_the_picture_each_decides_on_and_others_refuse():
    from neatpar.envs.gym import picture
    from neatpar.errors import FramesUnavailable
    rendering = GymEnvironment(GymSetup("CartPole-v1", copies=2, max_steps=10, frames=True))
    plain = GymEnvironment(GymSetup("CartPole-v1", copies=2, max_steps=10))
    try:
        for environment in (rendering, plain):
            environment.reset(5)
        rendering.capture("CartPole-v1", 1)
        alone = gymnasium.make("CartPole-v1", render_mode="rgb_array")
        alone.reset(seed=episode_seed(5, 1))   # copy 1 plays the second episode started
        expected = alone.render()
        alone.close()
        rendering.act("CartPole-v1", np.array([[1.0, 0.0], [0.0, 1.0]]))
        rendering.step()
        rendering.capture("CartPole-v1", 1)
        frames = rendering.take_frames()
        assert frames.fps == 50.0 and len(frames.images) == 2 and (frames.images[0] == expected).all()
        assert not (frames.images[1] == frames.images[0]).all() and rendering.take_frames().images == []
        with pytest.raises(FramesUnavailable, match=r"^these copies of CartPole-v1 were made without render_mode "
                                                    r"'rgb_array': make them with GymSetup\(frames=True\) to take "
                                                    r"pictures of them$"):
            plain.capture("CartPole-v1", 0)
    finally:
        rendering.close()
        plain.close()
    rgba = np.zeros((2, 3, 4), np.uint8)
    assert picture(rgba, "X").shape == (2, 3, 3)
    with pytest.raises(FramesUnavailable, match=r"X's render\(\) in mode 'rgb_array' gave float64 of shape \(2, 3\)"):
        picture(np.zeros((2, 3)), "X")


def test_on_a_machine_without_a_display_pictures_are_drawn_without_sdl_s_error_line():
    """A fresh interpreter without DISPLAY, WAYLAND_DISPLAY, SDL_VIDEODRIVER and XDG_RUNTIME_DIR (a
    headless server): SDL's own video drivers print "error: XDG_RUNTIME_DIR is invalid ..." there;
    a rendering copy draws through the dummy driver instead, and leaves a display's driver alone."""
    script = ("import os\n"
              "from neatpar.envs.gym import GymEnvironment, GymSetup\n"
              "copies = GymEnvironment(GymSetup('CartPole-v1', copies=1, max_steps=5, frames=True))\n"
              "copies.reset(1)\n"
              "copies.capture('CartPole-v1', 0)\n"
              "copies.step()\n"
              "print(copies.take_frames().images[0].shape, os.environ.get('SDL_VIDEODRIVER'))\n"
              "copies.close()\n")
    bare = {k: v for k, v in os.environ.items()
            if k not in ("DISPLAY", "WAYLAND_DISPLAY", "SDL_VIDEODRIVER", "XDG_RUNTIME_DIR")}
    for extra, driver in (({}, "dummy"), ({"DISPLAY": ":99"}, "None")):
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=120,
                              env={**bare, "PYGAME_HIDE_SUPPORT_PROMPT": "1", **extra})
        assert done.returncode == 0, done.stderr
        assert done.stdout == f"(400, 600, 3) {driver}\n"
        if driver == "dummy":
            assert done.stderr == ""


def test_image_observations_are_a_visual_sensor_shrunk_and_scaled_as_asked():
    setup = GymSetup(f"{MODULE}:Picture", copies=2)
    plain = GymEnvironment(setup)
    plain.reset(3)
    assert plain.layout(plain.behavior).sensors[0].shape == (8, 6, 3) and plain.layout(plain.behavior).inputs == 144
    shrunk = GymEnvironment(GymSetup(f"{MODULE}:Picture", copies=2, image_size=(4, 3)))
    shrunk.reset(3)
    layout = shrunk.layout(shrunk.behavior)
    assert layout.sensors[0].shape == (4, 3, 3) and layout.sensors[0].visual and layout.inputs == 36
    images = plain.poll()[plain.behavior].observations.reshape(2, 4, 2, 3, 2, 3)   # the same seeded episodes
    expected = images.mean(axis=(2, 4)).reshape(2, -1) / 255.0
    assert np.allclose(shrunk.poll()[shrunk.behavior].observations, expected, rtol=0, atol=1e-12)
    for _ in range(4):   # to the episodes' end: their last images come shrunk too (descriptors read them)
        for env in (plain, shrunk):
            env.act(env.behavior, np.zeros((2, 2)))
            env.step()
        ends = [env.poll()[env.behavior] for env in (plain, shrunk)]
    assert ends[1].terminal_ids.tolist() == [0, 1] and ends[1].terminal_observations.shape == (2, 36)
    expected = ends[0].terminal_observations.reshape(2, 4, 2, 3, 2, 3).mean(axis=(2, 4)).reshape(2, -1) / 255.0
    assert np.allclose(ends[1].terminal_observations, expected, rtol=0, atol=1e-12)
    plain.close(), shrunk.close()
    with pytest.raises(ConfigError, match="gym_image_size = 3x3 does not divide"):
        GymEnvironment(GymSetup(f"{MODULE}:Picture", copies=1, image_size=(3, 3))).reset(0)


def test_a_hyperneat_substrate_takes_gymnasium_images(tmp_path):
    """network = hyperneat on a Gymnasium image environment: the substrate is laid out on the
    shrunk image (a 3-D grid of 4 x 3 x 3 nodes), and seeded runs repeat."""
    config = make_config(tmp_path, num_inputs=7, num_outputs=1, pop_size=6)
    returns = []
    for _ in range(2):
        with EnvEvaluator(f"gymnasium:{MODULE}:Picture", agents=4, network="hyperneat", gym_image_size="4x3",
                          seed=2) as evaluator:
            genomes = list(neat.Population(config, seed=1).population.items())
            evaluator.evaluate(genomes, config)
            assert evaluator.geometry.sizes == (36, 2) and evaluator.geometry.io.sensors == ((4, 3, 3),)
            returns.append([g.fitness for _, g in genomes])
    assert returns[0] == returns[1] and len(set(returns[0])) > 1
