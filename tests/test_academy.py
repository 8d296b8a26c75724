"""The Academy semantics of the simulator builds (neatpar_sim/academy.py), read through the probe
build's closed form (neatpar_sim/probe.py), and what a strict and a lenient build do with a masked action,
under the real, unmodified mlagents_envs UnityEnvironment."""
import numpy as np
import pytest
from mlagents_envs.base_env import ActionTuple
from mlagents_envs.exception import UnityEnvironmentException
from mlagents_envs.side_channel.environment_parameters_channel import EnvironmentParametersChannel
from mlagents_envs.side_channel.stats_side_channel import StatsSideChannel
from support.simulators import act, f32_sum, repeated, simulator, step_with, zeros_continuous


# ---------------------------------------------------------------- Academy semantics, through the probe build
# What Python sees step by step from builds that follow ML-Agents' Academy, Agent and
# DecisionRequester (neatpar_sim/academy.py); expected rewards come from the probe's closed form
# (neatpar_sim/probe.py), computed here in float32 the way C# adds them.

PROBE, RIVAL = "Probe?team=0", "Rival?team=1"


def seen(env, name):
    """(decision ids, decision rewards, terminal ids, terminal rewards, terminal interrupted) as lists."""
    decision, terminal = env.get_steps(name)
    return (decision.agent_id.tolist(), decision.reward.tolist(), terminal.agent_id.tolist(),
            terminal.reward.tolist(), terminal.interrupted.tolist())


@pytest.mark.parametrize("between", [1, 0])
def test_decision_period_closed_form_over_episodes(between):
    """Period 6, 2 decisions per episode: Python sees [decisions, reward 0], [decisions, reward
    S_E(v)], [terminals, reward v], again and again; each env.step() spans several academy steps."""
    period, agents = 6, 24
    values = np.random.default_rng(5).uniform(-1, 1, agents).astype(np.float32)
    with simulator("probe", args=["--agents", str(agents), "--decision-period", str(period),
                                  "--actions-between", str(between), "--episode-decisions", "2"]) as env:
        env.reset()
        ids = env.get_steps(PROBE)[0].agent_id.tolist()
        v = dict(zip(ids, values))
        per_decision = [repeated(v[i], period if between else 1) for i in ids]
        if between:  # the exact float32 running sum matters: S_6(v) is not float32(6 v) for every v
            assert any(s != np.float32(6 * np.float64(v[i])) for s, i in zip(per_decision, ids))
        for step in range(9):
            decision_ids, decision_rewards, terminal_ids, terminal_rewards, interrupted = seen(env, PROBE)
            if step % 3 == 0:
                assert (decision_ids, decision_rewards, terminal_ids) == (ids, [0.0] * agents, [])
            elif step % 3 == 1:
                assert (decision_ids, decision_rewards, terminal_ids) == (ids, per_decision, [])
            else:
                assert decision_ids == [] and terminal_ids == ids and not any(interrupted)
                assert terminal_rewards == [v[i] for i in ids]
            act(env, PROBE, v)
            env.step()


def test_decision_periods_and_offsets_per_behavior_decide_the_exchanges():
    """Probe every 2 academy steps from 1, Rival every 3 from 0: an exchange at every count in
    either sequence; Probe's BrainParameters wait for its first decision."""
    args = ["--behaviors", "2", "--agents", "1", "--decision-period", "2,3", "--decision-offset", "1,0"]
    exchanges = [c for c in range(40) if c % 2 == 1 or c % 3 == 0][:14]
    with simulator("probe", args=args) as env:
        env.reset()
        assert list(env.behavior_specs) == [RIVAL]  # count 0: only Rival has asked
        values = {PROBE: 0.3, RIVAL: 0.7}
        last = {}
        for count in exchanges:
            for name, (period, offset) in ((PROBE, (2, 1)), (RIVAL, (3, 0))):
                if name not in env.behavior_specs:
                    assert count % period != offset
                    continue
                decision_ids, rewards, terminal_ids, _, _ = seen(env, name)
                assert terminal_ids == []
                if count % period == offset:
                    # one execution per academy step since its previous decision (zeros before the first)
                    expected = repeated(values[name], count - last[name]) if name in last else 0.0
                    assert len(decision_ids) == 1 and rewards == [expected]
                    last[name] = count
                    act(env, name, {decision_ids[0]: values[name]})
                else:
                    assert decision_ids == []
            env.step()


def test_ball_with_a_decision_period_and_max_step():
    """Ball rewards +0.1 every academy step: period 3 gives S_3(0.1) per decision; MaxStep 6 ends
    the episode at the 6th academy step, so its terminal and the next decision share an exchange."""
    s3 = repeated(np.float32(0.1), 3)
    with simulator("ball", args=["--agents", "4", "--decision-period", "3", "--max-step", "6"]) as env:
        env.reset()
        ids = env.get_steps("Ball3D?team=0")[0].agent_id.tolist()
        for step in range(1, 7):
            decision, terminal = step_with(env, "Ball3D?team=0", zeros_continuous)
            assert decision.agent_id.tolist() == ids
            if step % 2:
                assert decision.reward.tolist() == [s3] * 4 and len(terminal) == 0
            else:
                assert terminal.agent_id.tolist() == ids and terminal.interrupted.all()
                assert terminal.reward.tolist() == [s3] * 4 and decision.reward.tolist() == [0.0] * 4


def test_episode_end_terminal_and_next_decision_of_the_same_agent_in_one_step():
    with simulator("probe", args=["--agents", "4", "--episode-decisions", "3"]) as env:
        env.reset()
        ids = env.get_steps(PROBE)[0].agent_id.tolist()
        v = dict(zip(ids, np.array([0.1, -0.2, 0.3, 1.5], np.float32)))
        returns = {i: 0.0 for i in ids}
        for step in range(1, 8):
            act(env, PROBE, v)
            env.step()
            decision_ids, decision_rewards, terminal_ids, terminal_rewards, interrupted = seen(env, PROBE)
            assert decision_ids == ids  # stable across episodes
            if step % 3 == 0:
                assert terminal_ids == ids and not any(interrupted)
                assert terminal_rewards == [v[i] for i in ids] and decision_rewards == [0.0] * 4
                for i, r in zip(ids, terminal_rewards):
                    assert returns[i] + r == 2 * np.float64(v[i]) + v[i]  # (L-1) S_1(v) + v
                    returns[i] = 0.0
            else:
                assert terminal_ids == [] and decision_rewards == [v[i] for i in ids]
                for i, r in zip(ids, decision_rewards):
                    returns[i] += r


def test_max_step_interrupts_episodes_with_max_step_reached():
    """MaxStep 3 with period 2 from offset 1 and actions between: the sequence the C# Agent gives."""
    v = np.float32(0.1)
    s2 = repeated(v, 2)
    with simulator("probe", args=["--agents", "2", "--max-step", "3", "--decision-period", "2",
                                  "--decision-offset", "1"]) as env:
        env.reset()
        ids = env.get_steps(PROBE)[0].agent_id.tolist()
        # (decision reward or None, terminal reward or None) per env.step() after the reset
        cycle = [(0.0, s2), (s2, None), (None, v), (0.0, None)]
        expected = [(0.0, None)] + cycle * 3
        for step, (decided, ended) in enumerate(expected):
            decision_ids, decision_rewards, terminal_ids, terminal_rewards, interrupted = seen(env, PROBE)
            assert decision_ids == (ids if decided is not None else [])
            assert decision_rewards == [decided] * len(decision_ids)
            assert terminal_ids == (ids if ended is not None else [])
            assert terminal_rewards == [ended] * len(terminal_ids) and all(interrupted)
            act(env, PROBE, {i: v for i in ids})
            env.step()


def test_lifetime_destroys_agents_and_fresh_ids_replace_them_also_across_resets():
    with simulator("probe", args=["--agents", "3", "--lifetime", "2"]) as env:
        env.reset()
        live = env.get_steps(PROBE)[0].agent_id.tolist()
        used = set(live)
        for step in range(1, 7):
            act(env, PROBE, {i: 0.25 for i in live})
            env.step()
            decision_ids, decision_rewards, terminal_ids, terminal_rewards, interrupted = seen(env, PROBE)
            if step % 2 == 0:  # second decision's action executed: destroyed, replaced at once
                assert terminal_ids == live and terminal_rewards == [0.25] * 3 and not any(interrupted)
                assert not set(decision_ids) & used and len(decision_ids) == 3 and decision_rewards == [0.0] * 3
                used |= set(decision_ids)
                live = decision_ids
            else:
                assert terminal_ids == [] and decision_ids == live and decision_rewards == [0.25] * 3
        env.reset()
        assert seen(env, PROBE) == (live, [0.0] * 3, [], [], [])  # a reset keeps the live agents
        for step in range(1, 3):
            act(env, PROBE, {i: 0.25 for i in live})
            env.step()
        decision_ids, _, terminal_ids, _, _ = seen(env, PROBE)
        assert terminal_ids == live and not set(decision_ids) & used and min(decision_ids) > max(used)


def test_spawn_after_announces_a_behavior_late_and_again_after_each_reset():
    with simulator("probe", args=["--behaviors", "2", "--agents", "2", "--spawn-after", "0,3"]) as env:
        env.reset()
        probe_ids = env.get_steps(PROBE)[0].agent_id.tolist()
        rival_ids = []
        for step in range(1, 6):
            assert (RIVAL in env.behavior_specs) == (step > 3)
            act(env, PROBE, {i: 0.5 for i in probe_ids})
            if RIVAL in env.behavior_specs:
                act(env, RIVAL, {i: 0.5 for i in rival_ids})
            env.step()
            if step == 3:
                assert list(env.behavior_specs) == [PROBE, RIVAL]
                rival_ids = env.get_steps(RIVAL)[0].agent_id.tolist()
                assert len(rival_ids) == 2 and not set(rival_ids) & set(probe_ids)
                assert seen(env, RIVAL) == (rival_ids, [0.0, 0.0], [], [], [])
        env.reset()  # the intro starts again: Rival's agents are disabled and new ones come 3 steps later
        assert seen(env, PROBE) == (probe_ids, [0.0, 0.0], [], [], [])
        assert seen(env, RIVAL) == ([], [], rival_ids, [0.0, 0.0], [False, False])
        for step in range(1, 4):
            act(env, PROBE, {i: 0.5 for i in probe_ids})
            env.step()
            decision_ids, _, terminal_ids, _, _ = seen(env, RIVAL)
            assert terminal_ids == [] and (decision_ids == []) == (step < 3)
        assert len(decision_ids) == 2 and not set(decision_ids) & set(rival_ids + probe_ids)


def test_turns_alternate_the_side_to_move_without_actions_between():
    with simulator("probe", args=["--behaviors", "2", "--agents", "2,1", "--turns", "1"]) as env:
        env.reset()
        assert list(env.behavior_specs) == [PROBE]  # Rival moves first at academy step 1
        values = {PROBE: -0.75, RIVAL: 0.125}
        for step in range(8):
            mover, waiting = (PROBE, RIVAL) if step % 2 == 0 else (RIVAL, PROBE)
            decision_ids, rewards, terminal_ids, _, _ = seen(env, mover)
            assert len(decision_ids) == (2 if mover == PROBE else 1) and terminal_ids == []
            assert rewards == [values[mover] if step > 1 else 0.0] * len(decision_ids)  # one execution per turn
            if waiting in env.behavior_specs:
                assert seen(env, waiting)[0] == []
            act(env, mover, {i: values[mover] for i in decision_ids})
            env.step()


def test_reset_restarts_live_agents_without_terminal_steps_ids_unchanged(tmp_path):
    stats = StatsSideChannel()
    with simulator("probe", args=["--agents", "3", "--decision-period", "2", "--stats", "1"],
                   side_channels=[stats]) as env:
        env.reset()
        ids = env.get_steps(PROBE)[0].agent_id.tolist()
        for _ in range(3):
            act(env, PROBE, {i: 0.5 for i in ids})
            env.step()
        assert seen(env, PROBE) == (ids, [1.0] * 3, [], [], [])
        for _ in range(2):
            env.reset()
            assert seen(env, PROBE) == (ids, [0.0] * 3, [], [], [])
        assert dict(stats.get_and_reset_stats()) == {}  # no episode ended
        act(env, PROBE, {i: 0.5 for i in ids})
        env.step()
        assert seen(env, PROBE) == (ids, [1.0] * 3, [], [], [])


def test_stats_channel_sends_episode_values_with_their_aggregation_methods():
    """Probe, period 6 from offset 1, 2 decisions per episode: Game/Return = S_7(v), lengths
    o + (L-1)N + 1 = 8 for the first episode after the reset and L N = 12 for the next."""
    from mlagents_envs.side_channel.stats_side_channel import StatsAggregationMethod as Method
    stats = StatsSideChannel()
    values = np.random.default_rng(11).uniform(-1, 1, 3).astype(np.float32)
    returns = [float(repeated(v, 7)) for v in values] * 2
    assert any(r != np.float32(7 * np.float64(v)) for r, v in zip(returns, values))  # float32 running sums
    with simulator("probe", args=["--agents", "3", "--decision-period", "6", "--decision-offset", "1",
                                  "--episode-decisions", "2", "--stats", "1"], side_channels=[stats]) as env:
        env.reset()
        ids = env.get_steps(PROBE)[0].agent_id.tolist()
        for _ in range(6):  # two episodes: decision, decision, terminal each
            act(env, PROBE, dict(zip(ids, values)))
            env.step()
        received = stats.get_and_reset_stats()
    assert received["Environment/Cumulative Reward"] == [(r, Method.AVERAGE) for r in returns]
    assert received["Environment/Episode Length"] == [(8.0, Method.AVERAGE)] * 3 + [(12.0, Method.AVERAGE)] * 3
    assert received["Game/Episodes"] == [(1.0, Method.SUM)] * 6
    assert received["Game/Last Return"] == [(r, Method.MOST_RECENT) for r in returns]
    assert received["Game/Return"] == [(r, Method.HISTOGRAM) for r in returns]


@pytest.mark.parametrize("build, args", [("ball", ["--agents", "3", "--max-steps", "4"]),
                                         ("teams", ["--areas", "2", "--max-steps", "4"])])
def test_stats_of_ball_and_teams_are_the_float32_running_returns(build, args):
    from mlagents_envs.side_channel.stats_side_channel import StatsAggregationMethod as Method
    stats = StatsSideChannel()
    with simulator(build, args=args + ["--stats", "1"], side_channels=[stats]) as env:
        env.reset()
        running, ended = {}, []
        for _ in range(4):
            for name, spec in env.behavior_specs.items():
                n = len(env.get_steps(name)[0])
                env.set_actions(name, spec.action_spec.empty_action(n))
            env.step()
            for name in env.behavior_specs:
                decision, terminal = env.get_steps(name)
                for steps, done in ((terminal, True), (decision, False)):
                    for agent, r, g in zip(steps.agent_id, steps.reward, steps.group_reward):
                        total = f32_sum([running.get((name, agent), 0.0), r, g])
                        running[(name, agent)] = 0.0 if done else total
                        if done:
                            ended.append(float(total))
        received = stats.get_and_reset_stats()
    assert len(ended) == (3 if build == "ball" else 4)  # every episode interrupted at max_steps
    assert sorted(value for value, _ in received["Game/Return"]) == sorted(ended)
    assert received["Environment/Cumulative Reward"] == [(v, Method.AVERAGE) for v, _ in received["Game/Return"]]
    assert received["Environment/Episode Length"] == [(4.0, Method.AVERAGE)] * len(ended)
    assert received["Game/Episodes"] == [(1.0, Method.SUM)] * len(ended)
    assert [m for _, m in received["Game/Last Return"]] == [Method.MOST_RECENT] * len(ended)
    assert {m for _, m in received["Game/Return"]} == {Method.HISTOGRAM}


def test_per_behavior_options_through_the_side_channel_apply_at_the_next_reset(tmp_path):
    params = EnvironmentParametersChannel()
    with simulator("probe", args=["--behaviors", "2", "--agents", "1"], side_channels=[params],
                   log_folder=str(tmp_path)) as env:
        params.set_float_parameter("decision_period.1", 2)
        params.set_float_parameter("decision_period.5", 2)  # no such behavior: refused, logged
        env.reset()
        env.step()
        assert len(env.get_steps(RIVAL)[0]) == 1  # the refused batch left period 1 in place
        params.set_float_parameter("decision_period.1", 2)
        env.reset()
        for step in range(6):
            assert len(env.get_steps(PROBE)[0]) == 1
            assert len(env.get_steps(RIVAL)[0]) == (1 if step % 2 == 0 else 0)
            env.step()
        params.set_float_parameter("obs", 7)  # would change a spec Python already has: refused
        env.reset()
        assert env.get_steps(PROBE)[0].obs[0].shape == (1, 4)
        assert len(env.get_steps(RIVAL)[0]) == 1
        env.step()
        assert len(env.get_steps(RIVAL)[0]) == 0  # decision_period.1 = 2 still holds
    log = open(next(tmp_path.glob("Player-*.log"))).read()
    assert "decision_period.5 names behavior 5, but task 'probe' has 2 here" in log
    assert "these options change Probe?team=0's observations or actions, which Python already has" in log


def test_fewer_agents_at_a_reset_end_the_extra_ones_and_more_agents_get_fresh_ids():
    params = EnvironmentParametersChannel()
    with simulator("probe", args=["--agents", "3"], side_channels=[params]) as env:
        env.reset()
        ids = env.get_steps(PROBE)[0].agent_id.tolist()
        params.set_float_parameter("agents", 1)
        env.reset()  # the two extra agents are disabled: terminal infos, not interrupted
        assert seen(env, PROBE) == (ids[:1], [0.0], ids[1:], [0.0, 0.0], [False, False])
        params.set_float_parameter("agents", 3)
        env.reset()
        decision_ids, _, terminal_ids, _, _ = seen(env, PROBE)
        assert decision_ids[0] == ids[0] and terminal_ids == []
        assert len(decision_ids) == 3 and min(decision_ids[1:]) > max(ids)


def test_bad_academy_option_is_a_clear_log_line_and_exit_status_2(tmp_path):
    with pytest.raises(UnityEnvironmentException, match="return code 2"):
        with simulator("probe", args=["--decision-period", "3", "--decision-offset", "3"],
                       log_folder=str(tmp_path), timeout_wait=10):
            pass
    log = open(next(tmp_path.glob("Player-*.log"))).read()
    assert "error: decision_offset must be below decision_period (from 0 to 2), got 3" in log


class ReferenceAgent:
    """One agent as C#'s Agent keeps it, for the probe task (value = action)."""

    def __init__(self, agent_id):
        self.id = agent_id
        self.restart()

    def restart(self):
        self.steps, self.decisions, self.lived = 0, 0, 0
        self.reward, self.action = np.float32(0.0), np.float32(0.0)
        self.done_sent = self.decide = self.act = False


class ReferenceScene:
    """ML-Agents' Academy, Agent and DecisionRequester written agent by agent, as the C# package
    does it, for the probe task: what each exchange must carry. Independent of neatpar_sim's
    vectorized academy; ids are handed out in the simulator's documented order."""

    def __init__(self, counts):
        self.counts, self.next_id = counts, 0
        self.agents = {name: [] for name in counts}
        self.pending = {name: True for name in counts}
        self.queue = {name: [] for name in counts}
        self.requests, self.announced = {}, set()

    def reset(self, settings):
        """Python's RESET with new per-behavior settings (period, offset, between, max_step, L, D, spawn)."""
        self.settings, self.requests, self.count = settings, {}, 0
        for name, agents in self.agents.items():
            if settings[name]["spawn"] > 0:
                for agent in agents:
                    self._notify(name, agent, False)
                self.agents[name] = []
            for agent in self.agents[name]:
                agent.restart()
            self.pending[name] = not self.agents[name]
        return self._advance()

    def step(self, values):
        for name, agents in self.requests.items():
            for agent, value in zip(agents, values.get(name, [])):
                agent.action = np.float32(value)
        self.requests = {}
        self._finish()
        return self._advance()

    def _advance(self):
        while True:
            self._begin()
            if any(self.queue.values()):
                break
            self._finish()
        out, self.queue = self.queue, {name: [] for name in self.counts}
        self.announced |= {name for name, infos in out.items() if infos}
        return out

    def _new(self):
        self.next_id += 1
        return ReferenceAgent(self.next_id - 1)

    def _begin(self):
        due = [n for n in self.counts if self.pending[n] and self.settings[n]["spawn"] == self.count]
        for row in range(max(self.counts.values())):
            for name in due:
                if row < self.counts[name]:
                    self.agents[name].append(self._new())
        for name in due:
            self.pending[name] = False
        for name, agents in self.agents.items():
            s = self.settings[name]
            decides = self.count % s["period"] == s["offset"]
            for agent in agents:
                agent.decide, agent.act = decides, decides or s["between"]
                agent.steps += 1
            if decides and agents:
                self.requests[name] = list(agents)
                for agent in agents:
                    self.queue[name].append(("D", agent.id, agent.reward, False))
                    agent.reward, agent.action, agent.done_sent = np.float32(0.0), np.float32(0.0), False
        self.count += 1

    def _finish(self):
        for name, agents in self.agents.items():
            s, destroyed = self.settings[name], []
            for agent in list(agents):
                if agent.act:
                    agent.reward = np.float32(agent.reward + agent.action)
                if agent.decide:
                    agent.decisions += 1
                    agent.lived += 1
                ended = agent.decide and s["L"] and agent.decisions == s["L"]
                gone = agent.decide and s["D"] and agent.lived == s["D"]
                maxed = not ended and not gone and s["max_step"] and agent.steps >= s["max_step"]
                if ended or gone or maxed:
                    self._notify(name, agent, bool(maxed))
                if ended or maxed:
                    agent.steps = agent.decisions = 0
                if gone:
                    agents.remove(agent)
                    destroyed.append(agent)
            agents.extend(self._new() for _ in destroyed)

    def _notify(self, name, agent, interrupted):
        if not agent.done_sent:
            self.queue[name].append(("T", agent.id, agent.reward, interrupted))
            agent.reward, agent.action, agent.done_sent = np.float32(0.0), np.float32(0.0), True


def test_random_settings_match_a_reference_written_agent_by_agent():
    """Many random combinations of period, offset, actions between, MaxStep, episode length,
    lifetime and intro per behavior (set through the side channel, applied at each reset),
    random action values: every exchange carries exactly the reference's infos, in order."""
    rng = np.random.default_rng(2024)
    counts = {PROBE: 3, RIVAL: 2}
    params = EnvironmentParametersChannel()
    reference = ReferenceScene(counts)
    with simulator("probe", args=["--behaviors", "2", "--agents", "3,2", "--discrete", "0,4"],
                   side_channels=[params]) as env:
        for _ in range(14):
            settings = {}
            for index, name in enumerate(counts):
                period = int(rng.integers(1, 8))
                s = dict(period=period, offset=int(rng.integers(0, period)), between=int(rng.integers(0, 2)),
                         max_step=int(rng.choice([0, 0, 2, 3, 5, 8])), L=int(rng.choice([0, 1, 2, 3])),
                         D=int(rng.choice([0, 0, 2, 4])), spawn=int(rng.choice([0, 0, 1, 3])))
                for key, option in (("period", "decision_period"), ("offset", "decision_offset"),
                                    ("between", "actions_between"), ("max_step", "max_step"),
                                    ("L", "episode_decisions"), ("D", "lifetime"), ("spawn", "spawn_after")):
                    params.set_float_parameter(f"{option}.{index}", s[key])
                settings[name] = s
            env.reset()
            expected = reference.reset(settings)
            for _ in range(25):
                assert set(env.behavior_specs) == reference.announced
                values = {}
                for name in env.behavior_specs:
                    decision, terminal = env.get_steps(name)
                    infos = expected[name]
                    assert [(i, r) for kind, i, r, _ in infos if kind == "D"] == \
                        list(zip(decision.agent_id.tolist(), decision.reward.tolist()))
                    assert [(i, r, x) for kind, i, r, x in infos if kind == "T"] == \
                        list(zip(terminal.agent_id.tolist(), terminal.reward.tolist(), terminal.interrupted.tolist()))
                    if name == PROBE:
                        values[name] = rng.uniform(-1, 1, len(decision)).astype(np.float32)
                        env.set_actions(name, ActionTuple(continuous=values[name].reshape(-1, 1)))
                    else:
                        values[name] = rng.integers(0, 4, len(decision))
                        env.set_actions(name, ActionTuple(discrete=values[name].reshape(-1, 1).astype(np.int32)))
                env.step()
                expected = reference.step(values)


# ---------------------------------------------------------------- masks: strict and lenient builds

def masked_probe(strict: bool, log_folder):
    """The probe with one branch of 3 actions, action 0 masked for every agent."""
    return simulator("probe", args=["--discrete", "3", "--mask-first", "1", "--strict-masks", str(int(strict))],
                     log_folder=str(log_folder), timeout_wait=10)


def test_a_masked_action_ends_a_strict_build_naming_it(tmp_path):
    with pytest.raises(UnityEnvironmentException, match="return code 3"):
        with masked_probe(True, tmp_path) as env:
            env.reset()
            for _ in range(3):
                env.set_actions(PROBE, ActionTuple(discrete=np.array([[1], [2], [0], [1]], np.int32)))
                env.step()
    log = open(next(tmp_path.glob("Player-*.log"))).read()
    assert "error: agent 2 of Probe?team=0 was sent action 0 on branch 0, which the mask sent with its decision " \
           "request forbids (1 masked actions in this exchange)" in log


def test_allowed_actions_pass_a_strict_build_and_a_lenient_one_logs_a_masked_action_once(tmp_path):
    with masked_probe(True, tmp_path / "strict") as env:
        env.reset()
        for _ in range(5):
            env.set_actions(PROBE, ActionTuple(discrete=np.array([[1], [2], [1], [2]], np.int32)))
            env.step()
    with masked_probe(False, tmp_path / "lenient") as env:
        env.reset()
        for _ in range(5):
            env.step()  # mlagents-envs' empty action: 0, masked
    log = open(next((tmp_path / "lenient").glob("Player-*.log"))).read()
    assert log.count("was sent action 0 on branch 0, which the mask sent with its decision request forbids") == 1
    assert "forbids" not in open(next((tmp_path / "strict").glob("Player-*.log"))).read()


# ---------------------------------------------------------------- time: Unity's real time at time scale 1

@pytest.mark.parametrize("time_scale, seconds", [(1.0, 0.02), (0.5, 0.04), (20.0, 0.0), (100.0, 0.0)])
def test_at_time_scale_1_or_less_an_academy_step_takes_its_fixed_delta_time_and_above_none(time_scale, seconds):
    """10 academy steps of the ball task (decision period 2: 2 academy steps an exchange) take 10 x
    fixedDeltaTime / time scale of real time at a time scale of 1 or less, and no time is waited
    for above 1 (training)."""
    import time
    from neatpar_sim.academy import FIXED_DELTA_TIME, Academy, requesters
    from neatpar_sim.tasks import TASKS
    task = TASKS["ball"]({"agents": 2}, np.random.default_rng(0))
    academy = Academy(lambda line: None)
    academy.reset(task, requesters({"decision_period": 2}, task))
    academy.pace(time_scale)
    assert academy.step_seconds == pytest.approx(seconds) and FIXED_DELTA_TIME == 0.02
    academy.advance()   # the first academy step begins at once
    started = time.monotonic()
    for _ in range(5):
        academy.act({})
        academy.advance()
    elapsed = time.monotonic() - started
    assert elapsed >= 0.9 * 10 * seconds and (seconds or elapsed < 0.05), elapsed
