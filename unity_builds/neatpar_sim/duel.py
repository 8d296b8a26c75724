"""A competitive task for self-play: a Pong-like duel of two paddles, one pair in each of `areas`
arenas, with a skill ladder that runs from following the ball to anticipating its bounces and
aiming returns.

The field is x in [0, 1], y in [-1, 1]; team 0's paddle guards x = 0, team 1's x = 1. An
episode is a match of `points` rallies (4): each serve starts from the centre, paddles in the
middle, towards team 0 and team 1 in turn (so each side receives half the serves); a paddle that
meets the ball (|ball y - paddle y| <= HALF) returns it faster (x speed times SPEEDUP, up to
MAX_SPEED) and at an angle set by where it hit the paddle, as in Pong; the side that misses loses
the point. A rally still going after `rally_steps` academy steps (300) is replayed as no point.
At the match's end each agent gets the reward (points won - points lost) / points (Agent.SetReward,
as Tennis rewards): its sign is the match's result, its size the margin. A match still going after
`max_steps` academy steps (2000) is interrupted, without a reward.

Each team observes the field in its own frame (its paddle at x = 0, attacking +x), so one genome
can play either side. Observations (6): own paddle y, ball x (0 at the own paddle), ball y, ball
x speed towards the opponent and y speed (both x 10), opponent paddle y. Actions: one continuous
value, the paddle's velocity (x PADDLE_SPEED per step, clipped to [-1, 1]); an agent that does not
act stands still.

`--asymmetric 1` makes team 1 a different behavior, "Keeper?team=1": it observes 5 values (no
opponent) and moves with one discrete branch (stay, up, down) at full speed; team 0 stays
"Duel?team=0". Without it both teams are one behavior, "Duel", with team ids 0 and 1, as
SoccerTwos' are.

`--heuristic L` (1 to 5) plays team 1 with a hand-written policy inside the game, as a Unity agent
with Behavior Type "Heuristic Only" does: its behavior is not reported to Python. The levels
(HEURISTICS) climb the game's skill ladder: idle (stays in the middle), lazy (follows the ball
slowly), follow (follows the ball at full speed), predict (waits where the ball will arrive, bounces
included) and aim (predicts, and hits with the paddle's edge to send the ball away from the
opponent).
"""
from __future__ import annotations

import numpy as np

from . import render
from .spec import AreaTask, Behavior, StepResult, integer, positive_int


class Duel(AreaTask):
    HALF = 0.2            # paddle half-length
    PADDLE_SPEED = 0.04   # per academy step at action 1
    SERVE_SPEED = 0.03    # x speed of a serve, per step
    SPEEDUP = 1.15        # x speed factor of every return
    MAX_SPEED = 0.18
    ANGLE = 1.5           # y speed of a return at the paddle's edge, relative to the x speed

    OPTIONS = ("areas", "max_steps", "asymmetric", "heuristic", "points", "rally_steps")

    def __init__(self, options: dict, rng: np.random.Generator):
        self.areas = positive_int(options, "areas", 8, 4096)
        self.max_steps = positive_int(options, "max_steps", 2000, 10**7)
        self.points = positive_int(options, "points", 4, 1000)
        self.rally_steps = positive_int(options, "rally_steps", 300, 10**7)
        self.asymmetric = bool(integer(options, "asymmetric", 0, 0, 1))
        self.heuristic = integer(options, "heuristic", 0, 0, len(HEURISTICS))
        second = Behavior("Keeper?team=1", 5, branches=(3,)) if self.asymmetric else \
            Behavior("Duel?team=1", 6, continuous=1)
        self.teams = (Behavior("Duel?team=0", 6, continuous=1), second)
        self.behaviors = self.teams[:1] if self.heuristic else self.teams
        self.rng = rng
        self.paddle = np.zeros((2, self.areas))     # team, area: y
        self.ball = np.zeros((self.areas, 2))       # x, y
        self.velocity = np.zeros((self.areas, 2))
        self.steps = np.zeros(self.areas, dtype=np.int64)        # of the match
        self.rally = np.zeros(self.areas, dtype=np.int64)        # steps of the current rally
        self.played = np.zeros(self.areas, dtype=np.int64)       # rallies played in the match
        self.won = np.zeros((2, self.areas), dtype=np.int64)     # team, area: points
        self._restart(np.arange(self.areas))

    def rows(self, behavior: str) -> int:
        return self.areas

    def group_ids(self, behavior: str) -> np.ndarray:
        return (2 * np.arange(self.areas) + self._team(behavior) + 1).astype(np.int32)

    def _team(self, behavior: str) -> int:
        return 0 if behavior == self.teams[0].name else 1

    def _restart(self, areas: np.ndarray) -> None:
        self.steps[areas] = self.played[areas] = self.won[:, areas] = 0
        self._serve(areas)

    def _serve(self, areas: np.ndarray) -> None:
        """The next rally: paddles in the middle, the ball from the centre towards the receiver."""
        k = len(areas)
        self.paddle[:, areas] = 0.0
        self.ball[areas] = np.column_stack([np.full(k, 0.5), self.rng.uniform(-0.5, 0.5, k)])
        direction = np.where(self.played[areas] % 2 == 0, -1.0, 1.0)   # towards team 0, then team 1
        self.velocity[areas] = np.column_stack([direction * self.SERVE_SPEED,
                                                self.rng.uniform(-self.SERVE_SPEED, self.SERVE_SPEED, k)])
        self.rally[areas] = 0


    def observe(self, behavior: str) -> np.ndarray:
        team = self._team(behavior)
        columns = self._view(team)
        if self.asymmetric and team == 1:
            columns = columns[:5]
        return np.column_stack(columns).astype(np.float32)

    def _view(self, team: int) -> list[np.ndarray]:
        """The six observations of `team` in its own frame (float64)."""
        x = self.ball[:, 0] if team == 0 else 1.0 - self.ball[:, 0]
        vx = self.velocity[:, 0] if team == 0 else -self.velocity[:, 0]
        return [self.paddle[team], x, self.ball[:, 1], 10.0 * vx, 10.0 * self.velocity[:, 1], self.paddle[1 - team]]

    def _moves(self, team: int, actions: dict, acting: dict) -> np.ndarray:
        if team == 1 and self.heuristic:
            return HEURISTICS[self.heuristic - 1](*self._view(1))
        behavior = self.teams[team]
        continuous, discrete = actions[behavior.name]
        if behavior.branches:
            move = np.array([0.0, 1.0, -1.0])[np.clip(discrete[:, 0].astype(np.int64), 0, 2)]
        else:
            move = np.clip(continuous[:, 0].astype(np.float64), -1.0, 1.0)
        return np.where(acting[behavior.name], move, 0.0)

    def step(self, actions: dict, acting: dict, deciding: dict) -> dict[str, StepResult]:
        for team in (0, 1):
            moved = self.paddle[team] + self.PADDLE_SPEED * self._moves(team, actions, acting)
            self.paddle[team] = np.clip(moved, -1.0 + self.HALF, 1.0 - self.HALF)
        self.ball += self.velocity
        wall = np.abs(self.ball[:, 1]) > 1.0
        self.ball[wall, 1] = np.sign(self.ball[wall, 1]) * 2.0 - self.ball[wall, 1]
        self.velocity[wall, 1] *= -1.0
        lost = np.zeros((2, self.areas), bool)
        for team, line in ((0, self.ball[:, 0] <= 0.0), (1, self.ball[:, 0] >= 1.0)):
            offset = self.ball[:, 1] - self.paddle[team]
            hit = line & (np.abs(offset) <= self.HALF)
            lost[team] = line & ~hit
            speed = np.minimum(np.abs(self.velocity[hit, 0]) * self.SPEEDUP, self.MAX_SPEED)
            self.velocity[hit, 0] = speed if team == 0 else -speed
            self.velocity[hit, 1] = self.ANGLE * speed * offset[hit] / self.HALF
            self.ball[hit, 0] = -self.ball[hit, 0] if team == 0 else 2.0 - self.ball[hit, 0]
        self.steps += 1
        self.rally += 1
        self.won += lost[::-1]
        over = lost[0] | lost[1] | (self.rally >= self.rally_steps)   # a point, or a replay
        self.played += over
        finished = self.played >= self.points
        interrupted = ~finished & (self.steps >= self.max_steps)
        done = finished | interrupted
        self._serve(np.flatnonzero(over & ~done))
        margin = (self.won[0] - self.won[1]) / self.points
        results = {}
        for team, behavior in enumerate(self.behaviors):  # a heuristic team reports nothing
            reward = np.where(finished, margin if team == 0 else -margin, 0.0).astype(np.float32)
            results[behavior.name] = StepResult(reward, np.zeros(self.areas, np.float32), done.copy(),
                                                interrupted.copy())
        return results

    TEAM_COLORS = ((60, 110, 230), (220, 80, 70))
    BALL_COLOR = (245, 245, 245)
    PADDLE_WIDTH = 8   # pixels, behind each team's line

    def scales(self) -> tuple[render.Scale, render.Scale]:
        """The frame's pixel maps: x (team 0's line at 0) to the right, y upwards."""
        margin = 16 + self.PADDLE_WIDTH
        return (render.Scale(0.0, 1.0, margin, render.SIZE - margin),
                render.Scale(-1.0, 1.0, render.SIZE - margin, margin))

    def render(self, behavior: str, row: int) -> np.ndarray:
        """Top down: the walls, both paddles behind their lines (the agent's own in the highlight
        colour), the ball, and each team's points of the match as dots above its half."""
        canvas = render.Canvas()
        x, y = self.scales()
        canvas.rect(x(0.0), y(1.0) - 3, x(1.0), y(1.0), render.LINE)
        canvas.rect(x(0.0), y(-1.0), x(1.0), y(-1.0) + 3, render.LINE)
        mine = self._team(behavior)
        for team, line, behind in ((0, x(0.0), -self.PADDLE_WIDTH), (1, x(1.0), self.PADDLE_WIDTH)):
            color = render.HIGHLIGHT if team == mine else self.TEAM_COLORS[team]
            paddle = self.paddle[team, row]
            canvas.rect(line, y(paddle + self.HALF), line + behind, y(paddle - self.HALF), color)
            for point in range(int(self.won[team, row])):
                side = 1 if team == 0 else -1
                canvas.disc(render.SIZE / 2 - side * (16 + 12 * point), 8, 4, self.TEAM_COLORS[team])
        canvas.disc(x(self.ball[row, 0]), y(self.ball[row, 1]), 5, self.BALL_COLOR)
        return canvas.image


# ---------------------------------------------------------------- hand-written opponents
# Each takes a team's view (own y, ball x, ball y, 10 x ball speeds, opponent y) and gives its
# paddle's velocity in [-1, 1].

def _towards(target: np.ndarray, own: np.ndarray, gain: float = 10.0) -> np.ndarray:
    return np.clip(gain * (target - own), -1.0, 1.0)


def _folded(y: np.ndarray) -> np.ndarray:
    """Where a ball that travelled to `y` without walls is, with the walls at -1 and 1."""
    y = np.mod(y + 1.0, 4.0) - 1.0
    return np.where(y > 1.0, 2.0 - y, y)


def _arrival(x, y, vx, vy) -> np.ndarray:
    """The ball's y when it next reaches the own line (coming) or the opponent's (going)."""
    vx, vy = vx / 10.0, vy / 10.0
    coming = vx < 0
    steps = np.where(coming, x, 1.0 - x) / np.maximum(np.abs(vx), 1e-9)
    return _folded(y + vy * steps)


def idle(own, x, y, vx, vy, opponent):
    return -np.clip(10.0 * own, -1.0, 1.0)   # back to the middle


def lazy(own, x, y, vx, vy, opponent):
    return _towards(y, own, gain=3.0)


def follow(own, x, y, vx, vy, opponent):
    return _towards(y, own)


def predict(own, x, y, vx, vy, opponent, edge: float = 0.0):
    target = _arrival(x, y, vx, vy)
    coming = vx < 0
    target = np.where(coming, target + edge * np.where(opponent > 0, 1.0, -1.0), target)
    return _towards(target, own)


def aim(own, x, y, vx, vy, opponent):
    return predict(own, x, y, vx, vy, opponent, edge=0.12)


HEURISTICS = (idle, lazy, follow, predict, aim)
