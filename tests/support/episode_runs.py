"""Generations played on the simulator builds through the real mlagents-envs: the ball and probe
runs' configs, and the probe's returns in closed form (what every genome's episode must score)."""
import os

import neat
import numpy as np

from neatpar import settings as run_config
from neatpar.episodes.env_evaluator import UnityEvaluator

from .configs import write_config
from .paths import BALL, BUILDS
from .simulators import free_worker_id


def ball_config(tmp_path, agents=4, pop=10, max_steps=20, episodes=1, **neatpar):
    """(neat config, settings) of a seeded ball run: `agents` balls, episodes of `max_steps`."""
    section = {"env": BALL, "env_args": f"--agents {agents} --max-steps {max_steps}",
               "behaviors": "Ball3D?team=0: population", "max_steps": max_steps,
               "episodes_per_genome": episodes, "seed": 3, "worker_id": free_worker_id(), **neatpar}
    path = write_config(tmp_path, "ball.cfg", neatpar=section, pop_size=pop, num_inputs=8, num_outputs=2,
                        activation_options="tanh", activation_default="tanh")
    return run_config.load(path)


def first_generation(config, seed=5):
    """A seeded population's first genomes, as (key, genome) pairs."""
    return list(neat.Population(config, seed=seed).population.items())


# ---------------------------------------------------------------- real-game behaviours, exact returns
#
# The probe build (neatpar_sim/probe.py) shows each way a real Unity game behaves and makes every
# return known in closed form: the observation is constant, and each execution of an action adds
# its value to the agent's reward (accumulated in float32, as C#'s float m_Reward). A feed-forward
# genome therefore plays the value v = its clipped output on that observation at every decision,
# and its episode return follows from the decisions it made (see the probe's docstring).

PROBE = os.path.join(BUILDS, "probe")
MODES = {"inprocess": {}, "pool": {"inference": "pool", "workers": 2}, "envs2": {"envs": 2}}


def probe_config(tmp_path, env_args, behaviors="Probe?team=0: population", pop=8, max_steps=20,
                 network="feedforward", discrete=0, **neatpar):
    section = {"env": PROBE, "env_args": env_args, "behaviors": behaviors, "max_steps": max_steps, "seed": 2,
               "worker_id": free_worker_id(), "timeout": 20, "network": network, **neatpar}
    memory = network != "feedforward"
    path = write_config(tmp_path, "probe.cfg", neatpar=section, pop_size=pop, num_inputs=4,
                        num_outputs=discrete or 1, activation_options="tanh", activation_default="tanh",
                        feed_forward="false" if memory else "true", num_hidden=1 if memory else 0,
                        **(CTRNN_GENES if network == "ctrnn" else {}))
    return run_config.load(path)


# Time constants that differ from node to node (neat-python's default is 1.0 for every node).
CTRNN_GENES = dict(time_constant_init_mean=0.3, time_constant_init_stdev=0.2, time_constant_min_value=0.05)


def observation():
    from neatpar_sim.probe import observation as probe_observation
    return probe_observation(4).astype(np.float64)


def f32_sum(values) -> np.float32:
    """Left-to-right float32 sum, as the game accumulates a reward."""
    total = np.float32(0.0)
    for v in values:
        total = np.float32(total + np.float32(v))
    return total


def action_values(genome, config, decisions: int, network: str, discrete: int, times=(0.1, 0.02)) -> list[np.float32]:
    """The value of each of a genome's first `decisions` actions in an episode (fresh network; a
    CTRNN advances by `times` = (decision time, time step) per decision)."""
    if network == "ctrnn":
        net = neat.ctrnn.CTRNN.create(genome, config)
        step = lambda: net.advance(list(observation()), *times)  # noqa: E731
    else:
        net = (neat.nn.RecurrentNetwork if network == "recurrent" else neat.nn.FeedForwardNetwork).create(genome, config)
        step = lambda: net.activate(observation())  # noqa: E731
    values = []
    for _ in range(decisions):
        out = np.asarray(step())
        values.append(np.float32(np.argmax(out)) if discrete else np.float32(np.clip(out[0], -1.0, 1.0)))
    return values


def expected_return(genome, config, episode: int, max_steps: int, executions: int = 1, network="feedforward",
                    discrete=0) -> float:
    """The runner's return: the infos after decisions 2..k carry the sums of the previous action's
    executions; an episode the game ends at its L-th decision adds that action's one execution
    (the terminal); an episode cut at max_steps keeps the rewards of max_steps actions."""
    ended = 0 < episode <= max_steps
    values = action_values(genome, config, episode if ended else max_steps, network, discrete)
    infos = [f32_sum([v] * executions) for v in (values[:-1] if ended else values)]
    if ended:
        infos.append(values[-1])
    total = 0.0
    for reward in infos:
        total += float(reward)
    return total


def run_generation(config, settings):
    """A first generation played through UnityEvaluator: the genomes (fitness set) and its stats."""
    genomes = first_generation(config)
    with UnityEvaluator.from_settings(settings) as evaluator:
        evaluator.evaluate(genomes, config)
        stats = evaluator.last_stats
    return genomes, stats

