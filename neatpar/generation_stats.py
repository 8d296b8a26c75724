"""What a generation (or a part of one, played by an env host) cost and saw: counts, the scored
episodes of each population behavior, and the statistics the game recorded about itself. Parts
add up into their generation (`GenerationStats.add`)."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Mapping, NamedTuple

from .environment import Aggregation, GameStat


class LeagueValues(NamedTuple):
    """A self-play run's stats values after a generation: the rating of the population's best (the
    learner whose generation it was), and the size of its league."""
    elo: float
    league_size: int


class WinnerValues(NamedTuple):
    """The run's winner after a generation, when it is chosen on fresh episodes: its training
    fitness, its score on fresh episodes, and the seconds the generation spent on them."""
    winner_fitness: float
    winner_fresh: float
    fresh_seconds: float


class EpisodeEnd(NamedTuple):
    """How a genome's scored episode ended: the reward (and group reward) of its last report, and
    whether a step limit cut it (the game's max_step_reached, or max_steps) rather than the game
    ending it. Self-play reads game outcomes from it (episodes/league.py)."""
    final_reward: float
    interrupted: bool


@dataclass
class ScoredEpisodes:
    """The scored episodes that one population behavior's agents played: each return, and each
    length in the agent's decisions."""
    returns: list[float] = field(default_factory=list)
    lengths: list[int] = field(default_factory=list)

    def extend(self, other: "ScoredEpisodes") -> None:
        self.returns.extend(other.returns)
        self.lengths.extend(other.lengths)


@dataclass
class GameSeries:
    """One game statistic's values in a generation (or part), as the game recorded them. `part`
    is the part they came from: where parts are merged, MOST_RECENT keeps the first part's
    values, as ML-Agents keeps the first environment's."""
    aggregation: Aggregation
    values: list[float] = field(default_factory=list)
    part: int = 0

    def summary(self) -> float:
        """The generation's value, aggregated as ML-Agents does (HISTOGRAM: the mean); sums and
        means are exactly rounded (math.fsum), so they do not depend on the order of the values."""
        if self.aggregation is Aggregation.MOST_RECENT:
            return self.values[-1]
        total = math.fsum(self.values)
        return total if self.aggregation is Aggregation.SUM else total / len(self.values)


@dataclass
class GameStats:
    """What the game recorded about itself during a generation (or part), key by key."""
    series: dict[str, GameSeries] = field(default_factory=dict)

    def record(self, reported: Mapping[str, list[GameStat]], part: int = 0) -> None:
        """Values the environment reported (take_game_stats) while playing part `part`; a key's
        aggregation is the one its latest value came with, as in ML-Agents' StatsReporter."""
        for key, stats in reported.items():
            if not stats:
                continue
            series = self.series.setdefault(key, GameSeries(stats[-1].aggregation, part=part))
            series.aggregation = stats[-1].aggregation
            series.values.extend(s.value for s in stats)

    def add(self, other: "GameStats") -> None:
        """Another part's values: MOST_RECENT keeps the series of the lower part, the other
        aggregations take every value."""
        for key, theirs in other.series.items():
            ours = self.series.get(key)
            if ours is None or (theirs.aggregation is Aggregation.MOST_RECENT and theirs.part < ours.part):
                self.series[key] = GameSeries(theirs.aggregation, list(theirs.values), theirs.part)
            elif theirs.aggregation is not Aggregation.MOST_RECENT:
                ours.aggregation = theirs.aggregation
                ours.values.extend(theirs.values)
                ours.part = min(ours.part, theirs.part)

    def summary(self) -> dict[str, float]:
        """Each key's value for the generation (see GameSeries.summary), keys in sorted order."""
        return {key: self.series[key].summary() for key in sorted(self.series)}

    def histograms(self) -> dict[str, list[float]]:
        """The values of the HISTOGRAM keys."""
        return {key: list(s.values) for key, s in sorted(self.series.items())
                if s.aggregation is Aggregation.HISTOGRAM}


@dataclass
class GenerationStats:
    """What a generation (or part of one) cost and saw."""
    scored_steps: int = 0      # decisions of agents playing a scored episode: the generation's work
    agent_steps: int = 0       # every decision the networks made (scored, unscored rests, opponents, idle)
    env_steps: int = 0
    seconds: float = 0.0
    episodes: int = 0
    resets: int = 0            # environment resets the runner made to recycle agents (runner.py)
    layouts: dict = field(default_factory=dict)   # behavior -> Layout, of the behaviors that reported
    scored: dict[str, ScoredEpisodes] = field(default_factory=dict)  # population behavior -> its scored episodes
    game: GameStats = field(default_factory=GameStats)  # what the game recorded about itself (Stats channel)
    # Per genome, in the order of its episode returns: how each scored episode ended. Parts are
    # put together by genome (env hosts' scheduler), not by `add`.
    endings: list[list[EpisodeEnd]] = field(default_factory=list)
    # Per genome, in the same order: each scored episode's behaviour descriptor (float64 vectors),
    # when the run sets [neatpar] descriptor (else empty); put together by genome like `endings`.
    descriptors: list[list] = field(default_factory=list)

    @property
    def scored_steps_per_second(self) -> float:
        return self.scored_steps / self.seconds if self.seconds > 0 else 0.0

    def add(self, other: "GenerationStats") -> None:
        """Add a part's counts, episodes and game statistics (seconds are the caller's wall time)."""
        self.scored_steps += other.scored_steps
        self.agent_steps += other.agent_steps
        self.env_steps += other.env_steps
        self.episodes += other.episodes
        self.resets += other.resets
        self.layouts.update(other.layouts)
        for behavior, episodes in other.scored.items():
            self.scored.setdefault(behavior, ScoredEpisodes()).extend(episodes)
        self.game.add(other.game)
