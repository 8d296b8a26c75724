"""The tasks of the simulator builds (neatpar/sim/tasks.py) beyond the ball and teams builds' basics:
the hover build, under the real UnityEnvironment."""
import numpy as np
from mlagents_envs.base_env import ActionTuple
from support.simulators import simulator


# ---------------------------------------------------------------- the hover build

HOVER = "Hover?team=0"


def hover_run(controller, steps, args=(), seed=0):
    """Drive every agent of the hover build with `controller(readings, memory) -> actions` for
    `steps` academy steps; returns the (steps, agents) rewards of decisions (NaN where an agent
    did not decide) and the terminal rewards seen."""
    with simulator("hover", args=["--agents", "16", *args], seed=seed) as env:
        env.reset()
        memory = {}
        rewards, terminals = [], []
        for _ in range(steps):
            decision, terminal = env.get_steps(HOVER)
            terminals += terminal.reward.tolist()
            row = np.full(16, np.nan)
            row[decision.agent_id] = decision.reward
            rewards.append(row)
            env.set_actions(HOVER, ActionTuple(continuous=controller(decision.obs[0], memory).astype(np.float32)))
            env.step()
        return np.array(rewards), terminals


def pid(readings, memory, integral=True):
    """Altitude hold from the noisy readings: thrust = 1.2 e - 0.6 v (+ 1.5 times the error's
    integral), e and v in metres and metres per second."""
    error, speed = readings[:, 0] * 2.0, readings[:, 1] * 3.0
    memory["i"] = memory.get("i", 0.0) + (error * 0.02 if integral else 0.0)
    return np.clip(1.2 * error - 0.6 * speed + 1.5 * memory["i"], -1, 1)[:, None]


def test_hover_specs_and_noisy_readings_that_repeat_with_the_seed():
    with simulator("hover", seed=3) as env:
        env.reset()
        spec = env.behavior_specs[HOVER]
        assert [o.shape for o in spec.observation_specs] == [(2,)] and spec.action_spec.continuous_size == 1
        first = env.get_steps(HOVER)[0].obs[0].copy()
    with simulator("hover", seed=3) as env:
        env.reset()
        again = env.get_steps(HOVER)[0].obs[0]
    assert first.shape == (16, 2) and np.array_equal(first, again)
    assert np.all(np.abs(first) <= [1.0 + 0.25, 0.25])  # clipped error, at rest; noise of sd 0.05
    assert len(np.unique(first[:, 1])) == 16  # the speed is 0 for all: what differs is the sensor noise


def test_hover_full_thrust_climbs_out_and_none_falls_both_ending_at_minus_one():
    for thrust in (1.0, -1.0):
        rewards, terminals = hover_run(lambda r, m: np.full((len(r), 1), thrust), 150)
        assert len(terminals) >= 16 and all(t == -1.0 for t in terminals)


def test_hover_memory_pays_and_jerky_thrust_costs():
    """The task's point: with the payload unknown, integral action (memory) tracks the target
    better than the same controller without it; switching thrust at every decision costs 0.5 per
    unit of change squared."""
    with_memory, _ = hover_run(pid, 400)
    without, _ = hover_run(lambda r, m: pid(r, m, integral=False), 400)
    assert np.nansum(with_memory) > 1.15 * np.nansum(without) > 0
    jerky, _ = hover_run(alternating, 20)
    assert np.all(jerky[2:] <= 0.1 - 0.5 * 1.0 ** 2 + 1e-6)  # from the second action on, each changes by 1.0


def alternating(readings, memory):
    """Thrust 0.5, -0.5, 0.5, ...: a change of 1.0 at every decision."""
    memory["thrust"] = -memory.get("thrust", -0.5)
    return np.full((len(readings), 1), memory["thrust"])
