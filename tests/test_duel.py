"""The duel build (neatpar_sim/duel.py): a Pong-like match for self-play, one behavior with two
team ids (or an asymmetric keeper), hand-written opponents inside the game, skill transitive
enough for ELO to mean something."""
import numpy as np
from mlagents_envs.base_env import ActionTuple

from support.simulators import simulator


def test_duel_specs_one_behavior_two_teams_asymmetric_and_heuristic():
    with simulator("duel", args=["--areas", "3"]) as env:
        env.reset()
        assert sorted(env.behavior_specs) == ["Duel?team=0", "Duel?team=1"]   # SoccerTwos-style team ids
        for name, spec in env.behavior_specs.items():
            assert [o.shape for o in spec.observation_specs] == [(6,)] and spec.action_spec.continuous_size == 1
            decision, _ = env.get_steps(name)
            assert len(decision) == 3 and len(set(decision.group_id)) == 3
    with simulator("duel", args=["--areas", "2", "--asymmetric", "1"]) as env:
        env.reset()
        specs = env.behavior_specs
        assert sorted(specs) == ["Duel?team=0", "Keeper?team=1"]
        assert [o.shape for o in specs["Keeper?team=1"].observation_specs] == [(5,)]
        assert specs["Keeper?team=1"].action_spec.discrete_branches == (3,)
    with simulator("duel", args=["--areas", "2", "--heuristic", "3"]) as env:
        env.reset()
        env.step()
        assert list(env.behavior_specs) == ["Duel?team=0"]   # a heuristic team plays inside the game


def test_a_duel_match_ends_with_the_point_margin_for_each_side():
    """Team 0 follows the ball, team 1 stands still: team 0 wins every point it receives and
    every point team 1 receives; the match of 4 points ends with +1 for team 0, -1 for team 1."""
    with simulator("duel", args=["--areas", "2", "--points", "4"]) as env:
        env.reset()
        finals = {}
        for _ in range(2000):
            for name in ("Duel?team=0", "Duel?team=1"):
                decision, terminal = env.get_steps(name)
                if len(terminal):
                    finals[name] = (list(terminal.reward), list(terminal.interrupted))
                own, ball = decision.obs[0][:, 0], decision.obs[0][:, 2]
                move = np.clip(10 * (ball - own), -1, 1) if name == "Duel?team=0" else np.zeros(len(decision))
                env.set_actions(name, ActionTuple(continuous=move.reshape(-1, 1).astype(np.float32)))
            if len(finals) == 2:
                break
            env.step()
    assert finals == {"Duel?team=0": ([1.0, 1.0], [False, False]), "Duel?team=1": ([-1.0, -1.0], [False, False])}


def duel_result(task, policies, steps: int) -> tuple[np.ndarray, np.ndarray, int]:
    """Play `task` (every area) with `policies` (team -> function of the team's view) until every
    match ended: team 0's final rewards, whether each was interrupted, and the steps it took."""
    from neatpar_sim.duel import Duel
    assert isinstance(task, Duel)
    alive = np.ones(task.areas, bool)
    final, cut = np.zeros(task.areas), np.zeros(task.areas, bool)
    for step in range(1, steps + 1):
        actions = {b.name: (policies[t](*task._view(t)).reshape(-1, 1), None) for t, b in enumerate(task.behaviors)}
        result = task.step(actions, {b.name: alive.copy() for b in task.behaviors}, {})["Duel?team=0"]
        ended = result.done & alive
        final[ended], cut[ended] = result.reward[ended], result.interrupted[ended]
        alive &= ~ended
        if not alive.any():
            return final, cut, step
    raise AssertionError("matches still going")


def test_duel_rallies_past_rally_steps_are_replayed_and_max_steps_interrupts():
    from neatpar_sim.duel import Duel, idle
    # No serve reaches a paddle within 5 steps: every rally is replayed, the match a draw of 0.
    task = Duel({"areas": 6, "points": 3, "rally_steps": 5}, np.random.default_rng(0))
    final, cut, steps = duel_result(task, (idle, idle), 100)
    assert steps == 15 and (final == 0).all() and not cut.any()
    task = Duel({"areas": 6, "max_steps": 7, "rally_steps": 5}, np.random.default_rng(0))
    final, cut, steps = duel_result(task, (idle, idle), 100)
    assert steps == 7 and (final == 0).all() and cut.all()


def test_the_duel_s_hand_written_opponents_climb_a_transitive_ladder():
    """Each heuristic beats the one below it from either side, and the best beats the worst almost
    always: skill in the duel is transitive enough for ELO to mean something."""
    from neatpar_sim.duel import HEURISTICS, Duel

    def score(a, b) -> float:
        results = []
        for seed, (left, right, sign) in enumerate(((a, b, 1), (b, a, -1))):
            final, _, _ = duel_result(Duel({"areas": 300}, np.random.default_rng(seed)), (left, right), 2000)
            results.append(np.where(sign * final > 0, 1.0, np.where(final == 0, 0.5, 0.0)))
        return float(np.concatenate(results).mean())

    for lower, higher in zip(HEURISTICS, HEURISTICS[1:]):
        assert score(higher, lower) > 0.55, (higher.__name__, lower.__name__)
    assert score(HEURISTICS[-1], HEURISTICS[0]) > 0.95
