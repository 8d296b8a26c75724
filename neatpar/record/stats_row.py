"""A generation's stats row: one typed record, written as a row of stats.csv (`columns`) and as
TensorBoard values (tensorboard.py reads its fields), kept in checkpoints as a plain dict
(`to_record`, read back by `from_record`).

stats.csv's columns never move: STATS_FIELDS first, then, in the order they first appear, a
self-play run's LEAGUE_FIELDS (`elo`, `league_size`), a run's SEARCH_FIELDS when it searches on
something else than the fitness (the archive's size, additions, coverage and QD-score, novelty's
mean, max and threshold; best_fitness and mean_fitness are then the true fitness), a run's WINNER_FIELDS
once its winner has been chosen on fresh episodes (its training fitness, its fresh score, the
generation's seconds of fresh episodes), per-behavior columns `FIELD:BEHAVIOR`
(BEHAVIOR_FIELDS of each population behavior, when the population drives several), one column
`lesson/PARAMETER` per curriculum of the run's environment parameters (the index of the lesson the
generation played, from 0) and one column
`game:KEY` per key the game recorded about itself (Stats side channel); a column that first
appears in a later generation is empty in the rows before it, and so is a mean of no episodes.
"""
from __future__ import annotations

import math
import statistics
import sys
from dataclasses import dataclass, field
from typing import Any, Mapping

from ..search.results import SearchStats
from ..generation_stats import GenerationStats, LeagueValues, WinnerValues

STATS_FIELDS = ("generation", "best_fitness", "mean_fitness", "stdev_fitness", "species", "episodes",
                "scored_steps", "scored_steps_per_s", "agent_steps", "seconds",
                "mean_return", "mean_episode_length", "mean_nodes", "mean_connections")
LEAGUE_FIELDS = ("elo", "league_size")
WINNER_FIELDS = ("winner_fitness", "winner_fresh", "fresh_seconds")
SEARCH_FIELDS = ("archive_size", "archive_added", "coverage", "qd_score", "mean_novelty", "max_novelty",
                 "novelty_threshold")
BEHAVIOR_FIELDS = ("mean_return", "mean_episode_length")
BEHAVIOR_SEPARATOR = ":"   # FIELD:BEHAVIOR, a population behavior's own value
GAME_PREFIX = "game:"      # game:KEY, what the game recorded about itself
LESSON_PREFIX = "lesson/"  # lesson/PARAMETER, the lesson of a curriculum the generation played
SPECIES_SIZES = "species_sizes"  # a stored row's {species id: members}, for species.png (not a column)
EMPTY = ""                 # the cell of a value a generation does not have


@dataclass(frozen=True)
class BehaviorValues:
    """One population behavior's own means over its scored episodes (None: it played none)."""
    mean_return: float | None
    mean_episode_length: float | None


@dataclass
class StatsRow:
    """One generation's values (the fields named as stats.csv's columns). Means of returns and
    lengths are over the generation's scored episodes, exactly rounded; None when there were none."""
    generation: int
    best_fitness: float
    mean_fitness: float
    stdev_fitness: float
    species: int
    episodes: int
    scored_steps: int
    scored_steps_per_s: float
    agent_steps: int
    seconds: float
    mean_return: float | None
    mean_episode_length: float | None
    mean_nodes: float
    mean_connections: float
    league: LeagueValues | None = None
    behaviors: dict[str, BehaviorValues] = field(default_factory=dict)  # with several population behaviors
    game: dict[str, float] = field(default_factory=dict)                # the game's keys, sorted
    species_sizes: dict[int, int] = field(default_factory=dict)         # species id -> members
    search: dict[str, float | None] | None = None   # SEARCH_FIELDS' values (a search other than fitness)
    winner: WinnerValues | None = None   # the winner chosen on fresh episodes, once it has been
    lessons: dict[str, int] = field(default_factory=dict)   # curriculum parameter -> lesson index played

    @classmethod
    def of_generation(cls, generation: int, population: Mapping, species, stats: GenerationStats, seconds: float,
                      population_behaviors: list[str], league: LeagueValues | None = None,
                      search: SearchStats | None = None, fitness: Mapping[int, float] | None = None,
                      winner: WinnerValues | None = None, lessons: Mapping[str, int] | None = None) -> "StatsRow":
        """The row of a generation whose genomes (`population`, key -> genome) have their fitness,
        from its species set and the stats of its episodes; with a search other than fitness its
        statistics, and `fitness` the genomes' true fitness (genome.fitness is then what selection
        climbs); `winner` the winner chosen on fresh episodes as it stands after the generation."""
        searched = search is not None and search.search != "fitness"
        fits = [fitness[k] for k in population] if searched and fitness else [g.fitness for g in population.values()]
        sizes = [g.size() for g in population.values()]  # (nodes, enabled connections), as neat-python counts
        returns = [r for episodes in stats.scored.values() for r in episodes.returns]
        lengths = [n for episodes in stats.scored.values() for n in episodes.lengths]
        behaviors = {}
        if len(population_behaviors) > 1:
            behaviors = {b: BehaviorValues(_mean(stats.scored[b].returns), _mean(stats.scored[b].lengths))
                         for b in population_behaviors if b in stats.scored}
        return cls(generation=generation, best_fitness=max(fits), mean_fitness=statistics.fmean(fits),
                   stdev_fitness=_pstdev(fits), species=len(species.species), episodes=stats.episodes,
                   scored_steps=stats.scored_steps, scored_steps_per_s=round(stats.scored_steps_per_second, 1),
                   agent_steps=stats.agent_steps, seconds=round(seconds, 3), mean_return=_mean(returns),
                   mean_episode_length=_mean(lengths), mean_nodes=statistics.fmean(n for n, _ in sizes),
                   mean_connections=statistics.fmean(c for _, c in sizes), league=league, behaviors=behaviors,
                   game=stats.game.summary(), species_sizes={sid: len(s.members) for sid, s in species.species.items()},
                   search=_search_values(search) if searched else None, winner=winner, lessons=dict(lessons or {}))

    def columns(self) -> dict[str, Any]:
        """The row's stats.csv cells, column -> value, in the order of the columns (see the module
        docstring); an empty cell for a value of None."""
        cells = {name: _cell(getattr(self, name)) for name in STATS_FIELDS}
        if self.league is not None:
            cells.update((name, getattr(self.league, name)) for name in LEAGUE_FIELDS)
        if self.search is not None:
            cells.update((name, _cell(self.search[name])) for name in SEARCH_FIELDS)
        if self.winner is not None:
            cells.update(self.winner._asdict())
        for behavior, values in self.behaviors.items():
            cells.update((f"{name}{BEHAVIOR_SEPARATOR}{behavior}", _cell(getattr(values, name)))
                         for name in BEHAVIOR_FIELDS)
        cells.update((LESSON_PREFIX + name, lesson) for name, lesson in self.lessons.items())
        cells.update((GAME_PREFIX + key, value) for key, value in self.game.items())
        return cells

    def to_record(self) -> dict[str, Any]:
        """The row as a checkpoint keeps it: its cells and its species sizes."""
        return {**self.columns(), SPECIES_SIZES: dict(self.species_sizes)}

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> "StatsRow":
        """A row from a checkpoint's record (`to_record`) or a line of stats.csv (column -> cell).
        An empty cell of a column the row need not have (a line under a header that grew later)
        is a value the row did not have: no league, no search, no such game key (a behavior's
        empty cells are its means of no episodes, as the row writes them)."""
        base = {name: _value(record[name]) for name in STATS_FIELDS}
        league = LeagueValues(record["elo"], record["league_size"]) if _given(record, "elo") else None
        search = ({name: _value(record[name]) for name in SEARCH_FIELDS} if _given(record, SEARCH_FIELDS[0])
                  else None)
        winner = WinnerValues(*(record[name] for name in WINNER_FIELDS)) if _given(record, WINNER_FIELDS[0]) else None
        behaviors: dict[str, dict[str, float | None]] = {}
        game, lessons = {}, {}
        for column, value in record.items():
            if column.startswith(LESSON_PREFIX):
                if value != EMPTY:
                    lessons[column[len(LESSON_PREFIX):]] = int(value)
                continue
            if column.startswith(GAME_PREFIX):
                if value != EMPTY:
                    game[column[len(GAME_PREFIX):]] = value
                continue
            name, separator, behavior = column.partition(BEHAVIOR_SEPARATOR)
            if separator and name in BEHAVIOR_FIELDS:
                behaviors.setdefault(behavior, {})[name] = _value(value)
        return cls(**base, league=league, search=search, winner=winner, lessons=lessons,
                   behaviors={b: BehaviorValues(**v) for b, v in behaviors.items()},
                   game=game, species_sizes=dict(record.get(SPECIES_SIZES, {})))


def stats_columns(rows: list[StatsRow]) -> list[str]:
    """stats.csv's columns: STATS_FIELDS, then the other columns in the order they first appear."""
    columns = dict.fromkeys(STATS_FIELDS)
    for row in rows:
        columns.update(dict.fromkeys(row.columns()))
    return list(columns)


def _search_values(stats: SearchStats) -> dict[str, float | None]:
    """A search's statistics as SEARCH_FIELDS' values (None where the search has none)."""
    return {"archive_size": stats.archive_size, "archive_added": stats.archive_added, "coverage": stats.coverage,
            "qd_score": stats.qd_score, "mean_novelty": stats.mean_novelty, "max_novelty": stats.max_novelty,
            "novelty_threshold": stats.threshold}


def _mean(values: list) -> float | None:
    """The exactly rounded mean; None for no values."""
    return math.fsum(values) / len(values) if values else None


def _pstdev(values: list[float]) -> float:
    """statistics.pstdev as Python 3.11 and later give it on every Python: the exact variance's
    square root, correctly rounded. Python 3.10's pstdev rounds twice (about one population in
    eight gets a last bit of difference), which would make stats.csv differ between Pythons."""
    if not all(math.isfinite(v) for v in values):
        return statistics.pstdev(values)  # raises, as it does on every Python
    ratios = [v.as_integer_ratio() for v in values]
    scale = math.lcm(*(d for _, d in ratios))          # floats': the largest power of two
    scaled = [n * (scale // d) for n, d in ratios]    # values * scale, exactly
    count = len(scaled)
    spread = count * sum(x * x for x in scaled) - sum(scaled) ** 2
    return _sqrt_of_fraction(spread, count * count * scale * scale)


# Python 3.11's statistics._float_sqrt_of_frac: an integer square root wide enough for a double
# (2 * 53 + 3 bits), rounded to odd, then one rounding to the float.
_SQRT_BITS = 2 * sys.float_info.mant_dig + 3


def _sqrt_of_fraction(n: int, m: int) -> float:
    """The square root of n/m (n >= 0, m > 0), correctly rounded to a float."""
    q = (n.bit_length() - m.bit_length() - _SQRT_BITS) // 2
    if q >= 0:
        return float(_isqrt_of_fraction_to_odd(n, m << 2 * q) << q)
    return _isqrt_of_fraction_to_odd(n << -2 * q, m) / (1 << -q)


def _isqrt_of_fraction_to_odd(n: int, m: int) -> int:
    """The square root of n/m as an integer, rounded to odd (an inexact root gets its last bit set)."""
    root = math.isqrt(n // m)
    return root | (root * root * m != n)


def _cell(value: Any) -> Any:
    return EMPTY if value is None else value


def _given(record: Mapping[str, Any], column: str) -> bool:
    return record.get(column, EMPTY) != EMPTY


def _value(cell: Any) -> Any:
    return None if cell == EMPTY else cell

