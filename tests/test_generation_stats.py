"""What a generation cost and saw (neatpar/generation_stats.py): parts that env hosts return in any order
add up to the same values, and the game's statistics are aggregated as ML-Agents' StatsReporter
does (the runs that record them: test_recorder.py)."""
import math

from hypothesis import given, settings, strategies as st

from neatpar.environment import Aggregation, GameStat
from neatpar.generation_stats import GameStats, GenerationStats


VALUES = st.floats(-1e3, 1e3, width=32)   # what a game sends: float32
PART = st.fixed_dictionaries({f"k{k}": st.lists(VALUES, min_size=1, max_size=6) for k in range(4)})


def game_parts(drawn: list[dict]) -> list[GameStats]:
    """One GameStats per part; key k{n} aggregated as Aggregation(n % 4)."""
    out = []
    for part, series in enumerate(drawn):
        stats = GameStats()
        stats.record({key: [GameStat(value, Aggregation(int(key[1:]) % 4)) for value in values]
                      for key, values in series.items()}, part)
        out.append(stats)
    return out


@settings(max_examples=100, deadline=None)
@given(drawn=st.lists(PART, min_size=1, max_size=4), data=st.data())
def test_merged_parts_give_the_same_values_in_any_order(drawn, data):
    """Env hosts return parts in any order: sums and means are exactly rounded (order-free), and
    MOST_RECENT keeps the latest value of the lowest part that has one."""
    parts = game_parts(drawn)
    summaries = []
    for _ in range(5):
        order = data.draw(st.permutations(parts))
        total = GenerationStats()
        for part in order:
            other = GenerationStats()
            other.game = part
            total.add(other)
        summaries.append(total.game.summary())
    assert all(s == summaries[0] for s in summaries)
    by_part = sorted(parts, key=lambda p: min(s.part for s in p.series.values()))
    values = {k: [v for p in by_part for v in p.series[k].values] for k in ("k0", "k2", "k3")}
    assert summaries[0]["k0"] == math.fsum(values["k0"]) / len(values["k0"])              # AVERAGE
    assert summaries[0]["k1"] == by_part[0].series["k1"].values[-1]                         # MOST_RECENT
    assert summaries[0]["k2"] == math.fsum(values["k2"])                                    # SUM
    assert summaries[0]["k3"] == math.fsum(values["k3"]) / len(values["k3"])              # HISTOGRAM


def test_a_series_that_changes_aggregation_takes_the_latest_as_ml_agents_does():
    stats = GameStats()
    stats.record({"k": [GameStat(1.0, Aggregation.AVERAGE), GameStat(3.0, Aggregation.SUM)]})
    assert stats.summary() == {"k": 4.0}
    assert stats.histograms() == {}
