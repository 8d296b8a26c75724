"""The tasks of the simulator builds (neatpar_sim/tasks.py), under the real UnityEnvironment: the
hover build, and the ball and teams builds' specs, masks, groups, episode ends and rewards."""
import numpy as np
from mlagents_envs.base_env import ActionTuple
from support.simulators import simulator, step_with, zeros_continuous


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


# ---------------------------------------------------------------- the ball and teams builds

def test_ball_handshake_specs_and_reset():
    with simulator("ball") as env:
        env.reset()
        assert list(env.behavior_specs) == ["Ball3D?team=0"]
        spec = env.behavior_specs["Ball3D?team=0"]
        assert [o.shape for o in spec.observation_specs] == [(8,)]
        assert spec.action_spec.continuous_size == 2 and spec.action_spec.discrete_branches == ()
        decision, terminal = env.get_steps("Ball3D?team=0")
        assert len(decision) == 12 and len(terminal) == 0
        assert decision.obs[0].dtype == np.float32 and np.isfinite(decision.obs[0]).all()
        assert list(decision.agent_id) == list(range(12))


def test_teams_specs_masks_and_groups():
    with simulator("teams", args=["--areas", "3"]) as env:
        env.reset()
        assert sorted(env.behavior_specs) == ["Blue?team=0", "Purple?team=1"]
        for name in env.behavior_specs:
            spec = env.behavior_specs[name]
            assert spec.action_spec.discrete_branches == (5, 2) and spec.action_spec.continuous_size == 0
            decision, _ = env.get_steps(name)
            assert len(decision) == 3
            move_mask, kick_mask = decision.action_mask
            assert move_mask.shape == (3, 5) and kick_mask.shape == (3, 2)
            assert not move_mask[:, 0].any()            # staying is always allowed
            assert kick_mask[:, 1].all()                 # nobody is in reach of the ball at kick-off
            assert len(set(decision.group_id)) == 3 and 0 not in decision.group_id


def test_many_steps_drops_and_same_step_terminal_and_decision():
    with simulator("ball", args=["--agents", "16"]) as env:
        env.reset()
        name = "Ball3D?team=0"
        seen_both = False
        drops = 0
        for _ in range(150):
            decision, terminal = step_with(env, name, lambda n: ActionTuple(continuous=np.ones((n, 2), np.float32)))
            assert len(decision) == 16
            drops += len(terminal)
            if len(terminal):
                assert set(terminal.agent_id) <= set(decision.agent_id)  # ended and asked again
                assert np.allclose(terminal.reward, -1.0) and not terminal.interrupted.any()
                seen_both = True
            assert np.isfinite(decision.obs[0]).all()
        assert seen_both and drops >= 16  # full tilt drops every ball, repeatedly


def test_interrupted_episodes_at_max_steps():
    with simulator("ball", args=["--agents", "4", "--max-steps", "5"]) as env:
        env.reset()
        for step in range(1, 6):
            # A gentle balancing action keeps the balls on for five steps.
            decision, terminal = step_with(env, "Ball3D?team=0", zeros_continuous)
        assert len(terminal) == 4 and terminal.interrupted.all()
        assert np.allclose(terminal.reward, 0.1)


def test_teams_win_gives_group_rewards():
    with simulator("teams", args=["--areas", "2", "--max-steps", "60"]) as env:
        env.reset()
        rewards = []
        for _ in range(60):
            for name, active in (("Blue?team=0", True), ("Purple?team=1", False)):
                decision, _ = env.get_steps(name)
                kick = ~decision.action_mask[1][:, 1] & active
                me_y, ball_y = decision.obs[0][:, 1], decision.obs[0][:, 3]
                moves = np.where(me_y < ball_y, 3, np.where(me_y > ball_y, 4, 1)) * active
                env.set_actions(name, ActionTuple(discrete=np.column_stack([moves, kick.astype(int)])))
            env.step()
            _, terminal = env.get_steps("Blue?team=0")
            rewards.extend(terminal.group_reward.tolist())
        assert 1.0 in rewards  # Blue chases and kicks; Purple stands still
