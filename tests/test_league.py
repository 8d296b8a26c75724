"""Self-play (neatpar/episodes/league.py): the league's draws, ELO, rounds in which every genome of a
generation faces the same opponents and rating games, on real simulator builds; `neatpar evolve`
with league roles is in test_selfplay.py."""
import math
import os
import random

import pytest

from neatpar import settings as run_config
from neatpar.config.readers import Source
from neatpar.errors import ConfigError
from neatpar.episodes.env_evaluator import UnityEvaluator
from neatpar.episodes.league import INITIAL_RATING, Game, League, Member, SelfPlay, expected, rate, result_of
from neatpar.generation_stats import EpisodeEnd, LeagueValues
from neatpar.settings import Settings
from support.configs import hand_genome, write_config
from support.paths import BUILDS
from support.simulators import free_worker_id

PROBE = os.path.join(BUILDS, "probe")
EPISODE = 5  # decisions of a probe episode


class Key:
    """A stand-in genome for draw tests: only its key is read."""

    def __init__(self, key):
        self.key = key


def league_settings(**changes) -> Settings:
    values = {"env": PROBE, "behaviors": "Probe?team=0: population, Rival?team=1: league", "seed": 5, **changes}
    return Settings.create(values)


# ---------------------------------------------------------------- results and ratings

def test_a_result_is_the_sign_of_the_final_reward_and_a_step_limit_is_a_draw():
    assert result_of(EpisodeEnd(1.0, False)) == 1.0
    assert result_of(EpisodeEnd(0.01, False)) == 1.0
    assert result_of(EpisodeEnd(-0.01, False)) == 0.0
    assert result_of(EpisodeEnd(0.0, False)) == 0.5
    assert result_of(EpisodeEnd(1.0, True)) == 0.5     # cut by max_step_reached or max_steps
    assert result_of(EpisodeEnd(-1.0, True)) == 0.5


def test_elo_updates_equal_a_hand_computation():
    learner = League(window=5, rating=1200.0)
    opponents = League(window=5, members=[Member(Key(1), 0, 0, 1200.0), Member(Key(2), 1, 1, 1400.0)])
    rate(learner, opponents, [Game(0, 1.0), Game(1, 0.0), Game(1, 0.5), Game(0, 0.5)])
    # By hand, E = 1 / (1 + 10 ** ((R_member - R) / 400)), R += S - E, R_member -= S - E:
    r, m0, m1 = 1200.0, 1200.0, 1400.0
    e = 0.5                                      # equal ratings
    r, m0 = r + (1.0 - e), m0 - (1.0 - e)        # 1200.5, 1199.5
    e = 1 / (1 + 10 ** ((1400.0 - 1200.5) / 400))
    r, m1 = 1200.5 - e, 1400.0 + e
    e2 = 1 / (1 + 10 ** ((m1 - r) / 400))
    r, m1 = r + (0.5 - e2), m1 - (0.5 - e2)
    e3 = 1 / (1 + 10 ** ((m0 - r) / 400))
    r, m0 = r + (0.5 - e3), m0 - (0.5 - e3)
    assert learner.rating == pytest.approx(r, rel=1e-13, abs=0)
    assert [m.rating for m in opponents.members] == [pytest.approx(m0, rel=1e-13), pytest.approx(m1, rel=1e-13)]
    # Points move from one side to the other: the sum of all ratings is kept.
    assert learner.rating + sum(m.rating for m in opponents.members) == pytest.approx(3800.0, abs=1e-9)
    one, other = League(window=5, rating=1200.0), League(window=5, members=[Member(Key(1), 0, 0, 1200.0)])
    rate(one, other, [Game(0, 1.0)])
    assert (one.rating, other.members[0].rating) == (1200.5, 1199.5)   # a win between equals: half a point


def test_the_expectation_is_ml_agents_logistic_one():
    assert expected(1200.0, 1200.0) == 0.5
    assert expected(1600.0, 1200.0) == pytest.approx(10 / 11, rel=1e-15)     # 400 points: 10 to 1
    assert expected(1200.0, 1600.0) == pytest.approx(1 / 11, rel=1e-15)
    assert expected(1500.0, 1300.0) + expected(1300.0, 1500.0) == pytest.approx(1.0, rel=1e-15)


# ---------------------------------------------------------------- draws

def filled(selfplay: SelfPlay, count: int) -> League:
    league = selfplay.leagues[selfplay.sides[0]]
    for key in range(count):
        league.snapshot(Key(key), key)
    return league


def reference_draws(seed: int, ratio: float, members: list[int], count: int) -> list[int]:
    """The documented rule, step by step: with probability 1 - ratio a member drawn uniformly
    (random.Random(seed).random(), then randrange), else the latest."""
    rng = random.Random(seed)
    return [members[rng.randrange(len(members))] if rng.random() < 1 - ratio else members[-1] for _ in range(count)]


@pytest.mark.parametrize("ratio", [0.0, 0.3, 1.0])
def test_opponent_draws_follow_the_window_and_the_ratio_exactly(ratio):
    selfplay = SelfPlay(league_settings(league_window=4, league_latest_ratio=ratio, episodes_per_genome=3))
    league = filled(selfplay, 7)
    assert [m.number for m in league.members] == [3, 4, 5, 6]   # the last 4 snapshots
    drawn = [r.opponent.number for _ in range(400) for r in selfplay.rounds(selfplay.sides[0])]
    assert drawn == reference_draws(5, ratio, [3, 4, 5, 6], 1200)
    share = drawn.count(6) / len(drawn)
    expected_share = ratio + (1 - ratio) / 4                     # the latest is also in the window
    assert abs(share - expected_share) < 4 * math.sqrt(expected_share * (1 - expected_share) / len(drawn)) + 1e-9
    if ratio < 1:
        assert set(drawn) == {3, 4, 5, 6}                        # nothing from outside the window


def test_swapped_sides_play_each_drawn_opponent_from_both_sides():
    selfplay = SelfPlay(league_settings(league_window=3, episodes_per_genome=4, league_swap_sides=True))
    filled(selfplay, 3)
    rounds = selfplay.rounds(selfplay.sides[0])
    assert [r.swapped for r in rounds] == [False, True, False, True]
    assert rounds[0].opponent is rounds[1].opponent and rounds[2].opponent is rounds[3].opponent
    assert [rounds[0].opponent.number, rounds[2].opponent.number] == reference_draws(5, 0.5, [0, 1, 2], 2)


def test_league_settings_name_their_fix():
    with pytest.raises(ConfigError, match="league_latest_ratio = 1.5 is out of range: use a number from 0 to 1"):
        Settings.create({"env": PROBE, "behaviors": "A: population, B: league", "league_latest_ratio": "1.5"},
                        Source.FILE)
    with pytest.raises(ConfigError, match="episodes_per_genome = 3 is odd"):
        league_settings(league_swap_sides=True, episodes_per_genome=3)
    with pytest.raises(ConfigError, match="exactly one of each"):
        Settings.create({"env": PROBE, "behaviors": "A: population, B: population, C: league",
                         "league_swap_sides": True, "episodes_per_genome": 2})
    with pytest.raises(ConfigError, match="3 behaviors with the role 'league'"):
        Settings.create({"env": PROBE, "behaviors": "A: league, B: league, C: league"})
    with pytest.raises(ConfigError, match="two behaviors with the role 'league' evolve a population each"):
        Settings.create({"env": PROBE, "behaviors": "A: league, B: champion"})
    defaults = league_settings()
    assert (defaults.league_window, defaults.league_snapshot, defaults.league_latest_ratio,
            defaults.league_rating_games, defaults.league_swap_sides, defaults.team_change) == (10, 1, 0.5, 2, False, 10)


# ---------------------------------------------------------------- on the probe build

def coupled_probe(tmp_path, **neatpar):
    """The probe with two coupled behaviors: every execution earns the agent its own action's value
    plus that of the other behavior's agent in its row, so a return shows the opponent it faced.
    Genomes are constants (identity output, no links)."""
    section = {"env": PROBE, "env_args": f"--behaviors 2 --agents 4 --episode-decisions {EPISODE} --couple 1",
               "behaviors": "Probe?team=0: population, Rival?team=1: league", "max_steps": 50, "seed": 9,
               "worker_id": free_worker_id(), **neatpar}
    path = write_config(tmp_path, "probe-league.cfg", neatpar=section, pop_size=8, num_inputs=4, num_outputs=1,
                        activation_options="identity", activation_default="identity")
    return run_config.load(path)


def constant(config, value: float, key: int):
    return hand_genome(config, {0: ("identity", "sum", value, 1.0)}, [], key=key)


def test_every_genome_of_a_generation_faces_the_same_opponents(tmp_path):
    config, settings = coupled_probe(tmp_path, episodes_per_genome=3, league_window=3, league_latest_ratio=0.5)
    values = {key: key / 16 for key in range(1, 9)}            # 8 genomes on 4 agents: two turns per round
    pairs = [(key, constant(config, v, key)) for key, v in values.items()]
    opponent_values = [0.125, 0.25, 0.375]
    with UnityEvaluator.from_settings(settings) as evaluator:
        league = evaluator.selfplay.leagues["Probe?team=0"]
        league.members = [Member(constant(config, w, 100 + n), n, n, INITIAL_RATING)
                          for n, w in enumerate(opponent_values)]
        league.taken = 3
        evaluator.evaluate(pairs, config)
        returns = evaluator.episode_returns
    # Each round's return is EPISODE x (own value + the opponent's): exact in float32 for these values.
    faced = [[returns[key][r] / EPISODE - values[key] for key in values] for r in range(3)]
    drawn = [opponent_values[n] for n in reference_draws(9, 0.5, [0, 1, 2], 3)]
    assert faced == [[w] * 8 for w in drawn]
    for key, v in values.items():
        assert returns[key] == [EPISODE * (v + w) for w in drawn]


def test_the_final_round_robin_plays_every_pair_and_chooses_the_best_result(tmp_path):
    config, settings = coupled_probe(tmp_path, league_final_games=2)
    values = [0.5, -0.25, -0.5]
    with UnityEvaluator.from_settings(settings) as evaluator:
        evaluator.evaluate([(1, constant(config, 0.0, 1))], config)   # a first generation: the runner
        league = evaluator.selfplay.leagues["Probe?team=0"]
        league.members = [Member(constant(config, w, 100 + n), n, n, INITIAL_RATING) for n, w in enumerate(values)]
        evaluator.final_round_robin()
        scores = evaluator.selfplay.scores["Probe?team=0"]
        winner = evaluator.winner
    # Both sides of a coupled game end with the reward w_i + w_j; the later member of a pair is
    # the player, its result the sign, the earlier one's the rest: 1 beats 0 (0.25), 2 draws
    # with 0 (0) and loses to 1 (-0.75), twice each (once from each side).
    assert scores == {0: (0 + 0 + 0.5 + 0.5) / 4, 1: 1.0, 2: (0.5 + 0.5 + 0 + 0) / 4}
    assert winner.key == 101


def test_rating_games_rate_the_strongest_genome_from_its_own_results(tmp_path):
    config, settings = coupled_probe(tmp_path, episodes_per_genome=1, league_window=4, league_rating_games=2)
    pairs = [(1, constant(config, 0.0, 1)), (2, constant(config, 0.25, 2))]   # 2 is the strongest
    # A member's episode against the strongest ends with the reward w + 0.25: the member wins when
    # it is positive, so the strongest loses to 0.25, draws with -0.25 and beats -0.5, from both sides.
    start = [(0.25, 1250.0), (-0.25, 1200.0), (-0.5, 1100.0)]
    with UnityEvaluator.from_settings(settings) as evaluator:
        league = evaluator.selfplay.leagues["Probe?team=0"]
        league.members = [Member(constant(config, w, 100 + n), n, n, r) for n, (w, r) in enumerate(start)]
        league.taken = 3
        evaluator.evaluate(pairs, config)
        assert evaluator.episode_returns[2][0] > evaluator.episode_returns[1][0]
        row = evaluator.selfplay.row()
    r = INITIAL_RATING
    ratings = [rating for _, rating in start]
    for member, result in ((0, 0.0), (0, 0.0), (1, 0.5), (1, 0.5), (2, 1.0), (2, 1.0)):   # member by member
        change = result - 1 / (1 + 10 ** ((ratings[member] - r) / 400))
        r, ratings[member] = r + change, ratings[member] - change
    assert league.rating == pytest.approx(r, rel=1e-13)
    assert [m.rating for m in league.members[:3]] == [pytest.approx(x, rel=1e-13) for x in ratings]
    # The strongest joins the league with its rating; the stats row shows it.
    newest = league.members[-1]
    assert (newest.number, newest.genome.key, newest.rating, newest.generation) == (3, 2, league.rating, 0)
    assert row == LeagueValues(league.rating, 4)
