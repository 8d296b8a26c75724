"""Self-play: a population plays a league of its own past champions, rated with ELO, as ML-Agents'
ghost trainer does it (mlagents/trainers/ghost: trainer.py, controller.py), counted in
generations instead of trainer steps.

A league belongs to one population: up to `league_window` members, each a frozen copy of the
population's strongest genome, taken every `league_snapshot` of its generations (the strongest
is the genome with the best fitness of its generation: every genome of a generation plays the
same opponents, so their fitnesses compare). Before the population's first generation the league
holds its first genome, as ML-Agents' window starts with the untrained policy. The league also
keeps the rating of its population's best (below).

A generation is played as rounds, one episode per genome in each (`episodes_per_genome` rounds),
every genome against the same opponent: drawn for the round from the opposing league, the latest
member with probability `league_latest_ratio`, else a member drawn uniformly from the whole league
(the latest included), as ML-Agents draws with `play_against_latest_model_ratio`. With
`league_swap_sides` rounds come in pairs against one opponent, the population playing its own
behavior in the first and the league's behavior in the second. Draws come from the run's own
generator (seeded from the run's seed, saved in checkpoints), never from `random`, so NEAT's own
draws are those of a run without a league.

Ratings (ELO): every member has one, and so has the population's best, the learner in ML-Agents'
terms: its rating is carried from generation to generation, as ML-Agents carries its learning
policy's, and a snapshot joins the league with it. Ratings start at 1200. After a generation's
rounds, its strongest genome plays `league_rating_games` rating games against every member of the
opposing league (in symmetric games half of them from each side), in fresh episodes: the games
that chose it as the strongest would flatter its rating (the best of many noisy results is lucky
as well as good), and the population's average genome, much weaker than its best, would drag a
rating of the whole population down while its champions improve. After each rating game, in
order (member by member, oldest first), with the learner's result S (1 a win, 0.5 a draw, 0 a
loss) and its expected result E = 10^(R/400) / (10^(R/400) + 10^(R_m/400)), the learner's rating
R moves by S - E and the member's R_m by E - S: ML-Agents' update, whose K factor is 1. A game's
result is the sign of the final reward (reward and group reward) of the episode of the agent
whose result it is: > 0 a win, < 0 a loss, 0 a draw; an episode that a step limit ended (the
game's max_step_reached, or max_steps) is a draw. Rating games count in no stats but the run's
time.

With two league behaviors (asymmetric games) each behavior has its own population and league; the
populations take turns every `team_change` generations, the learning one playing the other's
league (ML-Agents' team_change).
"""
from __future__ import annotations

import copy
import math
import random
from dataclasses import dataclass, field
from typing import Any, Callable, NamedTuple, Sequence

from ..config.behaviors import Role
from ..config.settings_model import Settings
from ..errors import ConfigError
from ..generation_stats import EpisodeEnd, GenerationStats, LeagueValues
from .generation_plan import Match, standard_match

INITIAL_RATING = 1200.0   # ML-Agents' initial_elo
RATING_SCALE = 400.0      # the logistic expectation's 10^(R/400)


@dataclass
class Member:
    """A league member: a frozen copy of its population's strongest genome of a generation, that
    generation (of the population), its place in the order of snapshots, and its rating."""
    genome: Any
    generation: int
    number: int
    rating: float


class Game(NamedTuple):
    """One rated game: the member the population played (its number) and the population's result:
    1.0 a win, 0.5 a draw, 0.0 a loss."""
    member: int
    result: float


def result_of(end: EpisodeEnd) -> float:
    """A game's result for the population, from how its agent's episode ended (see the module
    docstring)."""
    if end.interrupted or end.final_reward == 0:
        return 0.5
    return 1.0 if end.final_reward > 0 else 0.0


def expected(rating: float, opponent: float) -> float:
    """The expected result of a player of `rating` against one of `opponent` (ML-Agents' formula)."""
    mine, theirs = math.pow(10.0, rating / RATING_SCALE), math.pow(10.0, opponent / RATING_SCALE)
    return mine / (mine + theirs)


@dataclass
class League:
    """One population's past champions and its learner's rating (see the module docstring)."""
    window: int
    members: list[Member] = field(default_factory=list)
    rating: float = INITIAL_RATING   # the learner's: the population's best
    generations: int = 0             # generations of the population played so far
    taken: int = 0                   # snapshots taken so far

    def snapshot(self, genome, generation: int) -> Member:
        """A frozen copy of `genome` joins with the population's rating; the oldest member leaves
        when the league is full."""
        member = Member(copy.deepcopy(genome), generation, self.taken, self.rating)
        self.taken += 1
        self.members.append(member)
        del self.members[:-self.window]
        return member

    def member(self, number: int) -> Member:
        return next(m for m in self.members if m.number == number)

    def draw(self, rng: random.Random, latest_ratio: float) -> Member:
        """An opponent: the latest member with probability `latest_ratio`, else one drawn
        uniformly from the league, as ML-Agents' _swap_snapshots draws."""
        if rng.random() < 1.0 - latest_ratio:
            return self.members[rng.randrange(len(self.members))]
        return self.members[-1]

    def best(self) -> Member:
        """The member with the best rating (the newest of equals)."""
        return max(reversed(self.members), key=lambda m: m.rating)


def rate(learner: League, opponents: League, games: Sequence[Game]) -> None:
    """ELO updates for `games` (the learner's results), in order: the learner's rating and each
    opponent member's."""
    for game in games:
        member = opponents.member(game.member)
        change = game.result - expected(learner.rating, member.rating)
        learner.rating += change
        member.rating -= change


class Round(NamedTuple):
    """One round of a generation: the opponent, and whether the sides are swapped."""
    opponent: Member
    swapped: bool = False


class Pairing(NamedTuple):
    """A pairing of a final round-robin: members of one side (the players) against one member of
    the same or the other side."""
    side: str
    players: list[Member]
    opponent_side: str
    opponent: Member


class Half(NamedTuple):
    """The games of a player against one opponent from one side: the behaviors the opponent plays."""
    behaviors: list[str]
    games: int


@dataclass
class Played:
    """A generation played in rounds: each genome's episode returns (round order) and the stats of
    all rounds together."""
    returns: list[list[float]]
    stats: GenerationStats
    rounds: int


Evaluate = Callable[[list, Match, "GenerationStats | None"], tuple]
"""An EpisodeRunner's or HostScheduler's evaluate for one Match: `evaluate(genomes, match, so_far)`
returns (returns, stats); `so_far` holds the generation's counts before the match (for progress),
None for rating games."""


class SelfPlay:
    """The leagues of a run (one per population, keyed by the behavior it evolves on), the
    generator of its draws, and which population learns when (see the module docstring)."""

    def __init__(self, settings: Settings):
        self.settings = settings
        leagues, populations = list(settings.with_role(Role.LEAGUE)), list(settings.population_behaviors)
        # Symmetric: the population behaviors share one league, whose members play the league
        # behaviors. Asymmetric: each of two league behaviors is a population of its own.
        self.sides = populations[:1] if populations else leagues
        self.own = {side: populations for side in self.sides} if populations else {b: [b] for b in leagues}
        self.theirs = {side: leagues for side in self.sides} if populations else \
            {b: [o for o in leagues if o != b] for b in leagues}
        self.swappable = len(populations) == 1 and len(leagues) == 1
        self.leagues = {side: League(settings.league_window) for side in self.sides}
        self.rng = random.Random(settings.seed)
        self.last_side = self.sides[0]   # the side of the generation recorded last
        self.scores: dict[str, dict[int, float]] = {}   # side -> member number -> final round-robin result

    def state(self) -> dict:
        """What a checkpoint keeps: the leagues (members, ratings) and the generator's state."""
        return {"leagues": copy.deepcopy(self.leagues), "rng": self.rng.getstate(), "last_side": self.last_side}

    def restore(self, state: dict, source: str) -> None:
        """Continue from a checkpoint's state; its leagues must be this run's (`source` names it)."""
        if sorted(state["leagues"]) != sorted(self.leagues):
            raise ConfigError(f"{source} holds the leagues of {', '.join(sorted(state['leagues']))}; the config's "
                              f"league sides are {', '.join(sorted(self.leagues))}: resume with the run's own config")
        self.leagues = copy.deepcopy(state["leagues"])
        for league in self.leagues.values():   # a resume may change the window
            league.window = self.settings.league_window
            del league.members[:-league.window]
        self.rng.setstate(state["rng"])
        self.last_side = state["last_side"]

    @property
    def asymmetric(self) -> bool:
        return len(self.sides) == 2

    def learner(self, generation: int) -> str:
        """The side whose population evolves in the run's `generation`."""
        if not self.asymmetric:
            return self.sides[0]
        return self.sides[(generation // self.settings.team_change) % 2]

    def opponent_of(self, side: str) -> str:
        """The side whose league `side`'s population plays."""
        return side if not self.asymmetric else self.theirs[side][0]

    def start(self, side: str, first_genome) -> None:
        """A new run: the side's league begins with its population's first genome."""
        league = self.leagues[side]
        if not league.members:
            league.snapshot(first_genome, -1)

    def rounds(self, side: str) -> list[Round]:
        """The next generation's rounds for the population of `side`, drawn from the opposing league."""
        league = self.leagues[self.opponent_of(side)]
        episodes, ratio = self.settings.episodes_per_genome, self.settings.league_latest_ratio
        if self.settings.league_swap_sides:
            return [Round(opponent, swapped) for opponent in (league.draw(self.rng, ratio) for _ in range(episodes // 2))
                    for swapped in (False, True)]
        return [Round(league.draw(self.rng, ratio)) for _ in range(episodes)]

    def _match(self, behaviors: list[str], genome, episodes: int, number: int, champion, files: dict) -> Match:
        """`genome` on `behaviors`, the champion and file behaviors as the roles say; the genomes
        under evaluation play the rest."""
        opponents = dict(standard_match(self.settings, champion, files).opponents)
        opponents.update((b, genome) for b in behaviors)
        return Match(opponents, episodes, number)

    def play(self, evaluate: Evaluate, genomes: list, side: str, champion, files: dict) -> Played:
        """One generation of `genomes` (the population of `side`): each round's Match through
        `evaluate`, one episode per genome, results put together by genome."""
        rounds = self.rounds(side)
        played = Played([[] for _ in genomes], GenerationStats(endings=[[] for _ in genomes]), len(rounds))
        for number, round_ in enumerate(rounds):
            behaviors = self.own[side] if round_.swapped else self.theirs[side]
            so_far = GenerationStats(scored_steps=played.stats.scored_steps, episodes=played.stats.episodes)
            returns, stats = evaluate(genomes, self._match(behaviors, round_.opponent.genome, 1, number, champion,
                                                           files), so_far)
            for mine, theirs in zip(played.returns, returns):
                mine.extend(theirs)
            for mine, theirs in zip(played.stats.endings, stats.endings):
                mine.extend(theirs)
            seconds = played.stats.seconds + stats.seconds
            played.stats.add(stats)
            played.stats.seconds = seconds
        return played

    def _versus(self, evaluate: Evaluate, players: list, opponent, side: str, games: int, first_round: int,
                champion, files: dict) -> list[list[float]]:
        """Each player's results (its own view) in `games` games against `opponent`, which plays
        `side`'s own behaviors and the players the opposing ones (the players are the genomes under
        evaluation); in symmetric games the second half of the games swaps sides."""
        halves = [Half(self.own[side], games - games // 2)]
        if self.swappable and games > 1:
            halves.append(Half(self.theirs[side], games // 2))
        results: list[list[float]] = [[] for _ in players]
        for number, half in enumerate(halves, first_round):
            _, stats = evaluate(list(players), self._match(half.behaviors, opponent, half.games, number, champion,
                                                           files), None)
            for mine, ends in zip(results, stats.endings):
                mine.extend(result_of(end) for end in ends)
        return results

    def rating_games(self, evaluate: Evaluate, strongest, side: str, first_round: int, champion,
                     files: dict) -> list[Game]:
        """The strongest genome's rating games against every member of the opposing league, as its
        results, member by member."""
        members = self.leagues[self.opponent_of(side)].members
        results = self._versus(evaluate, [m.genome for m in members], strongest, side,
                               self.settings.league_rating_games, first_round, champion, files)
        return [Game(m.number, 1.0 - r) for m, rs in zip(members, results) for r in rs]

    def final(self, evaluate: Evaluate, champion, files: dict) -> None:
        """The end of a run: a round-robin of `league_final_games` games for every pair of members
        of a league (asymmetric games: every member of one league against every member of the
        other), whose mean results choose the winners (`winner`)."""
        games = self.settings.league_final_games
        results: dict[str, dict[int, list[float]]] = {side: {} for side in self.sides}
        if self.asymmetric:
            first, second = self.sides
            pairings = [Pairing(first, self.leagues[first].members, second, o) for o in self.leagues[second].members]
        else:
            members = self.leagues[self.sides[0]].members
            pairings = [Pairing(self.sides[0], members[j + 1:], self.sides[0], o) for j, o in enumerate(members[:-1])]
        for number, pairing in enumerate(pairings):
            outcomes = self._versus(evaluate, [m.genome for m in pairing.players], pairing.opponent.genome,
                                    pairing.opponent_side, games, 2 * number, champion, files)
            for member, mine in zip(pairing.players, outcomes):
                results[pairing.side].setdefault(member.number, []).extend(mine)
                results[pairing.opponent_side].setdefault(pairing.opponent.number, []).extend(1.0 - r for r in mine)
        self.scores = {side: {n: math.fsum(r) / len(r) for n, r in found.items()} for side, found in results.items()}

    def record(self, side: str, games: Sequence[Game], strongest) -> None:
        """After a generation of `side`'s population: ratings from the strongest genome's rating
        games, and its snapshot when one is due."""
        league = self.leagues[side]
        rate(league, self.leagues[self.opponent_of(side)], games)
        league.generations += 1
        if league.generations % self.settings.league_snapshot == 0:
            league.snapshot(strongest, league.generations - 1)
        self.last_side = side

    def row(self) -> LeagueValues:
        """The stats values after a generation (see LeagueValues)."""
        league = self.leagues[self.last_side]
        return LeagueValues(league.rating, len(league.members))

    def has_members(self) -> bool:
        """Whether every league has a member (each side has a winner)."""
        return all(league.members for league in self.leagues.values())

    def winner(self, side: str) -> Member:
        """The winner of a league run for `side`: its league's member with the best result in the
        final round-robin (`final`), else (without one) the best-rated member; of equals the better
        rated, then the newest."""
        league = self.leagues[side]
        scores = self.scores.get(side, {})
        if not scores:
            return league.best()
        return max(reversed(league.members), key=lambda m: (scores.get(m.number, -1.0), m.rating))

    def describe(self) -> dict:
        """The leagues as a plain record (league.json): per side its learner's rating, each member's
        number, generation, genome key, rating and final round-robin result, and the winner's number."""
        return {side: {"rating": league.rating, "generations": league.generations,
                       "winner": self.winner(side).number,
                       "members": [{"number": m.number, "generation": m.generation, "genome": m.genome.key,
                                    "rating": m.rating, "final": self.scores.get(side, {}).get(m.number)}
                                   for m in league.members]}
                for side, league in self.leagues.items()}
