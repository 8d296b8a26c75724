"""What a generation cost and saw (neatpar/run/stats.py): parts that env hosts return in any order
add up to the same values, and the game's statistics are aggregated as ML-Agents' StatsReporter
does (the runs that record them: test_cli_recorder.py)."""
import math
import random

import numpy as np
import pytest

from neatpar.envs.base import Aggregation, GameStat
from neatpar.run.stats import GameStats, GenerationStats


def random_parts(rng: random.Random, keys: int = 3, parts: int = 4) -> list[GameStats]:
    out = []
    for part in range(parts):
        stats = GameStats()
        stats.record({f"k{k}": [GameStat(float(np.float32(rng.uniform(-1e3, 1e3))), Aggregation(k % 4))
                                for _ in range(rng.randint(1, 6))] for k in range(keys)}, part)
        out.append(stats)
    return out


@pytest.mark.parametrize("seed", range(50))
def test_merged_parts_give_the_same_values_in_any_order(seed):
    """Env hosts return parts in any order: sums and means are exactly rounded (order-free), and
    MOST_RECENT keeps the latest value of the lowest part that has one."""
    rng = random.Random(seed)
    parts = random_parts(rng, keys=4)
    summaries = []
    for _ in range(5):
        rng.shuffle(parts)
        total = GenerationStats()
        for part in parts:
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
