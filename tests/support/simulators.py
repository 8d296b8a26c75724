"""Simulator builds under a real UnityEnvironment, on free ports, closed and reaped on exit; steps
driven with given actions, and rewards added up in float32 as C# adds them."""
import contextlib
import os
import random
import socket

import numpy as np

from .paths import BUILDS
from .processes import wait_gone


BASE_PORT = 5005
# Drawn from the system's entropy, not the global `random`: tests seed that (neat.Population(seed=...),
# Hypothesis), and two test processes seeded alike would draw the same worker_ids at the same time.
_DRAW = random.SystemRandom()


def free_worker_id() -> int:
    """A worker_id whose port (5005 + id) is free on this machine right now."""
    for _ in range(200):
        worker_id = _DRAW.randint(100, 3000)
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", BASE_PORT + worker_id))
                return worker_id
            except OSError:
                continue
    raise RuntimeError("no free port for a simulator")


@contextlib.contextmanager
def simulator(build="ball", args=(), seed=0, side_channels=None, log_folder=None, timeout_wait=30):
    """A UnityEnvironment on a simulator build; closed (and its process reaped) on exit."""
    from mlagents_envs.environment import UnityEnvironment
    env = UnityEnvironment(os.path.join(BUILDS, build), worker_id=free_worker_id(), seed=seed,
                           no_graphics=True, additional_args=list(args), side_channels=side_channels or [],
                           log_folder=log_folder, timeout_wait=timeout_wait)
    process = env._process
    try:
        yield env
    finally:
        try:
            env.close()
        finally:
            if process is not None and process.poll() is None:
                process.kill()
            if process is not None:
                process.wait()
                assert not wait_gone([process.pid], 2.0)


# ---------------------------------------------------------------- driving a build and adding up as it does

def step_with(env, name, action_fn):
    decision, _ = env.get_steps(name)
    env.set_actions(name, action_fn(len(decision)))
    env.step()
    return env.get_steps(name)


def act(env, name, values_by_id):
    """Give each agent requesting a decision of `name` its value: a continuous action[0], or a
    discrete action index."""
    from mlagents_envs.base_env import ActionTuple
    decision, _ = env.get_steps(name)
    values = [values_by_id[agent] for agent in decision.agent_id]
    spec = env.behavior_specs[name].action_spec
    if spec.continuous_size:
        env.set_actions(name, ActionTuple(continuous=np.array(values, np.float32).reshape(-1, 1)))
    else:
        env.set_actions(name, ActionTuple(discrete=np.array(values, np.int32).reshape(-1, 1)))


def zeros_continuous(n):
    from mlagents_envs.base_env import ActionTuple
    return ActionTuple(continuous=np.zeros((n, 2), np.float32))


def f32_sum(values) -> np.float32:
    """Left-to-right float32 sum, as C#'s `float m_Reward += value` accumulates."""
    total = np.float32(0.0)
    for value in values:
        total = np.float32(total + np.float32(value))
    return total


def repeated(v, m) -> np.float32:
    """S_m(v): v added m times in float32."""
    return f32_sum([v] * m)
