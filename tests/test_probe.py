"""Tests of neatpar_sim/probe.py, the probe task whose every return is known in closed form: its behaviors,
observations, masks and rewards under the real UnityEnvironment, and the task itself called as the
academy calls it (option checks, executed values, coupling, episode ends and lifetimes), against a
reference written row by row."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mlagents_envs.base_env import ActionTuple

from neatpar_sim.probe import NAMES, OBSERVATION_PATTERN, Probe, observation
from neatpar_sim.spec import OptionError
from support.simulators import act, simulator

PROBE, RIVAL = NAMES


def probe(**options):
    return Probe(options, np.random.default_rng(0))


@pytest.mark.parametrize("options, message", [
    ({"behaviors": 3}, "behaviors must be an integer from 1 to 2, got 3"),
    ({"turns": 1}, "turns 1 needs two behaviors: add behaviors 2"),
    ({"couple": 1}, "couple 1 pairs the agents of two behaviors row by row: add behaviors 2"),
    ({"behaviors": 2, "agents": (2, 3), "couple": 1}, "give both the same agents"),
    ({"mask_first": 1}, "mask_first needs discrete actions for Probe?team=0: add discrete K (K > 1)"),
    ({"behaviors": 2, "discrete": 3, "mask_first": (0, 3)},
     "mask_first must leave an action allowed for Rival?team=1: below discrete (3), got 3"),
    ({"behaviors": 2, "lifetime": (1, 2, 3)}, "lifetime needs one value per behavior (2: Probe?team=0, Rival?team=1)"),
])
def test_options_that_make_no_probe_are_refused_naming_the_fix(options, message):
    with pytest.raises(OptionError, match=message.replace("?", r"\?").replace("(", r"\(").replace(")", r"\)")):
        probe(**options)


def test_behaviors_specs_masks_intro_and_turn_timing_follow_the_options():
    task = probe(behaviors=2, agents=(3, 2), obs=(5, 2), discrete=(0, 4), mask_first=(0, 3), spawn_after=(0, 7),
                 turns=1)
    assert [(b.name, b.observations, b.continuous, b.branches) for b in task.behaviors] == \
        [(PROBE, 5, 1, ()), (RIVAL, 2, 0, (4,))]
    assert (task.rows(PROBE), task.rows(RIVAL)) == (3, 2)
    assert task.observe(RIVAL).tolist() == [[1.0, -0.5]] * 2 and task.observe(PROBE).dtype == np.float32
    assert task.masks(PROBE) is None and task.masks(RIVAL).tolist() == [[True, True, True, False]] * 2
    assert (task.spawn_after(PROBE), task.spawn_after(RIVAL)) == (0, 7)
    assert task.timing() == {PROBE: (2, 0, False), RIVAL: (2, 1, False)}
    assert probe(behaviors=2).timing() is None


@given(st.integers(1, 4096))
def test_the_observation_is_the_pattern_repeated_to_any_width(width):
    values = observation(width)
    assert values.dtype == np.float32 and values.shape == (width,)
    assert values.tolist() == [OBSERVATION_PATTERN[i % len(OBSERVATION_PATTERN)] for i in range(width)]


class ReferenceRows:
    """The probe's agents written one row at a time, from its module docstring: each execution
    earns the action's value (and, coupled, the paired row's); decisions and lives are counted
    per row."""

    def __init__(self, counts, discrete, episode_decisions, lifetime, couple):
        self.discrete, self.episode_decisions, self.lifetime, self.couple = discrete, episode_decisions, lifetime, couple
        self.decisions = [[0] * n for n in counts]
        self.lived = [[0] * n for n in counts]

    def step(self, actions, acting, deciding):
        executed = [[np.float32(0.0)] * len(rows) for rows in self.decisions]
        for b, (continuous, discrete) in enumerate(actions):
            for row in range(len(executed[b])):
                if acting[b][row]:
                    executed[b][row] = np.float32(discrete[row][0]) if self.discrete[b] else np.float32(continuous[row][0])
        results = []
        for b in range(len(executed)):
            rewards, done, destroyed = [], [], []
            for row in range(len(executed[b])):
                reward = executed[b][row]
                if self.couple:
                    reward = np.float32(reward + executed[1 - b][row])
                rewards.append(reward)
                if deciding[b][row]:
                    self.decisions[b][row] += 1
                    self.lived[b][row] += 1
                done.append(bool(deciding[b][row] and self.episode_decisions[b]
                                 and self.decisions[b][row] == self.episode_decisions[b]))
                destroyed.append(bool(deciding[b][row] and self.lifetime[b] and self.lived[b][row] == self.lifetime[b]))
            results.append((rewards, done, destroyed))
        return results

    def restart(self, b, rows):
        for row in rows:
            self.decisions[b][row] = 0

    def spawned(self, b, rows):
        for row in rows:
            self.decisions[b][row] = self.lived[b][row] = 0


@st.composite
def probe_runs(draw):
    """A probe's options and a few academy steps of actions, acting rows and deciding rows."""
    behaviors = draw(st.integers(1, 2))
    couple = behaviors == 2 and draw(st.booleans())
    agents = draw(st.integers(1, 5))
    counts = [agents] * behaviors if couple else [draw(st.integers(1, 5)) for _ in range(behaviors)]
    discrete = [draw(st.sampled_from([0, 0, 2, 5])) for _ in range(behaviors)]
    episode_decisions = [draw(st.integers(0, 3)) for _ in range(behaviors)]
    lifetime = [draw(st.integers(0, 4)) for _ in range(behaviors)]
    values = st.floats(-2, 2, width=32, allow_subnormal=False)
    steps = []
    for _ in range(draw(st.integers(1, 12))):
        step = []
        for n, k in zip(counts, discrete):
            continuous = np.array(draw(st.lists(values, min_size=n, max_size=n)), np.float32).reshape(n, 1)
            indices = np.array(draw(st.lists(st.integers(0, max(k - 1, 0)), min_size=n, max_size=n)),
                               np.int32).reshape(n, 1)
            deciding = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)))
            acting = deciding | np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)))
            step.append(((continuous if not k else np.zeros((n, 0), np.float32),
                          indices if k else np.zeros((n, 0), np.int32)), acting, deciding))
        steps.append(step)
    options = dict(behaviors=behaviors, couple=int(couple), agents=tuple(counts), discrete=tuple(discrete),
                   episode_decisions=tuple(episode_decisions), lifetime=tuple(lifetime))
    return options, steps


@settings(max_examples=150, deadline=None)
@given(probe_runs())
def test_each_step_s_rewards_episode_ends_and_destroyed_agents_match_a_row_by_row_reference(run):
    options, steps = run
    task = probe(**options)
    names = [b.name for b in task.behaviors]
    reference = ReferenceRows(options["agents"], options["discrete"], options["episode_decisions"],
                              options["lifetime"], options["couple"])
    for step in steps:
        results = task.step({name: s[0] for name, s in zip(names, step)}, {name: s[1] for name, s in zip(names, step)},
                            {name: s[2] for name, s in zip(names, step)})
        expected = reference.step([s[0] for s in step], [s[1] for s in step], [s[2] for s in step])
        for b, name in enumerate(names):
            rewards, done, destroyed = expected[b]
            result = results[name]
            assert result.reward.dtype == np.float32 and result.reward.tolist() == rewards
            assert result.done.tolist() == done and not result.interrupted.any() and not result.group_reward.any()
            if options["lifetime"][b]:
                assert result.destroyed.tolist() == destroyed
            else:
                assert result.destroyed is None and not any(destroyed)
            ended = np.flatnonzero(result.done & ~(result.destroyed if result.destroyed is not None else np.zeros_like(result.done)))
            gone = np.flatnonzero(result.destroyed) if result.destroyed is not None else np.array([], int)
            task.restart({name: ended})  # as the academy does: a new episode, or a new agent in the row
            reference.restart(b, ended.tolist())
            task.spawned({name: gone})
            reference.spawned(b, gone.tolist())


# ---------------------------------------------------------------- the probe build under UnityEnvironment

def test_probe_specs_constant_observations_masks_and_discrete_rewards():
    from neatpar_sim.probe import observation
    args = ["--behaviors", "2", "--agents", "3,2", "--obs", "4,6", "--discrete", "0,5", "--mask-first", "0,2"]
    with simulator("probe", args=args) as env:
        env.reset()
        assert list(env.behavior_specs) == [PROBE, RIVAL]
        probe, rival = env.behavior_specs[PROBE], env.behavior_specs[RIVAL]
        assert probe.action_spec.continuous_size == 1 and probe.action_spec.discrete_branches == ()
        assert rival.action_spec.continuous_size == 0 and rival.action_spec.discrete_branches == (5,)
        assert [o.shape for o in probe.observation_specs] == [(4,)]
        assert [o.shape for o in rival.observation_specs] == [(6,)]
        assert observation(6).tolist() == [1.0, -0.5, 0.25, 0.75, 1.0, -0.5]
        probe_ids, rival_ids = env.get_steps(PROBE)[0].agent_id, env.get_steps(RIVAL)[0].agent_id
        for step in range(4):
            decision, rival_decision = env.get_steps(PROBE)[0], env.get_steps(RIVAL)[0]
            assert np.array_equal(decision.obs[0], np.tile(observation(4), (3, 1)))
            assert np.array_equal(rival_decision.obs[0], np.tile(observation(6), (2, 1)))
            assert decision.action_mask is None
            assert rival_decision.action_mask[0].tolist() == [[True, True, False, False, False]] * 2
            if step:  # each reward is the value of the action executed since the previous decision
                assert decision.reward.tolist() == [np.float32(-0.3), np.float32(0.45), np.float32(0.7)]
                assert rival_decision.reward.tolist() == [4.0, 2.0]
            act(env, PROBE, dict(zip(probe_ids, [-0.3, 0.45, 0.7])))
            act(env, RIVAL, dict(zip(rival_ids, [4, 2])))
            env.step()


def test_coupled_probe_rewards_include_the_paired_agent_s_action():
    with simulator("probe", args=["--behaviors", "2", "--agents", "2", "--episode-decisions", "3",
                                  "--couple", "1"]) as env:
        env.reset()
        values = {"Probe?team=0": 0.25, "Rival?team=1": 0.5}
        returns = {name: {} for name in values}
        ended = {}
        for _ in range(4):
            for name, value in values.items():
                decision, terminal = env.get_steps(name)
                for steps in (decision, terminal):
                    for agent, reward in zip(steps.agent_id, steps.reward):
                        returns[name][agent] = returns[name].get(agent, 0.0) + reward
                if len(terminal):
                    ended[name] = list(terminal.reward)
                env.set_actions(name, ActionTuple(continuous=np.full((len(decision), 1), value, np.float32)))
            env.step()
    # Each of the 3 executions earns 0.25 + 0.5 for both sides; the terminal info carries the last.
    assert ended == {"Probe?team=0": [0.75, 0.75], "Rival?team=1": [0.75, 0.75]}
    assert all(list(r.values()) == [2.25, 2.25] for r in returns.values())
