"""A deceptive maze for novelty search, after Lehman and Stanley's maze navigation ("Abandoning
Objectives", Evolutionary Computation 19(2), 2011): a round robot with range finders and a goal
radar drives through a walled arena, and the reward is how close it ends to the goal, which leads
into a dead end.

The arena is 200 x 200 units (x to the right, y up), cut into three corridors by two walls: one
from the left side at y = 67 (open at the right, x > 160) and one from the right side at y = 133
(open at the left, x < 30). The robot starts at START, bottom left, heading right; the goal is at
the top right, GOAL. The first corridor leads right and up, ever closer to the goal, into a pocket
at the second corridor's right end, right under the goal behind the second wall (a short wall
hanging from it at x = 145 closes the pocket but for its bottom): the nearest a robot gets without
turning away, a dead end the reward leads to. The way on leaves the pocket downwards and runs the
whole second corridor to the left, away from the goal (each point of it is farther from the goal
than the dead end), up through the left opening and back right along the top corridor.

Observations (12): six range finders (at -90, -45, 0, 45, 90 and 180 degrees from the heading:
the distance to the nearest wall along the ray / RANGE, 1 when none is within RANGE), four radar
slices (1 for the 90-degree slice, front, left, back or right, in which the goal lies, else 0),
and the robot's position, x and y scaled to [-1, 1] (the last two: what a descriptor
`final_observation[10:12]` reads). Actions (2, continuous, clipped to [-1, 1]): turn (MAX_TURN
radians per step, counter-clockwise for positive) and speed (MAX_SPEED units per step, backwards
for negative); a move that would bring the robot within its radius of a wall is not made (the
robot stays where it is, as in Lehman and Stanley's simulator); an agent that does not act stands
still. The episode ends when the robot comes within GOAL_RADIUS of the goal (reward 1), or is
interrupted at max_steps academy steps (reward 1 - distance to the goal / the arena's diagonal);
no reward comes before the episode's end. Nothing is drawn at random: the same actions give the
same episode.

The environment parameter `goal` (read with GetWithDefault in each robot's OnEpisodeBegin, default
1) moves the goal along PATH, the way through the maze: 0 puts it at the start, 1 at GOAL, 0.5
halfway along; its radar, reward and end follow it. The parameter `opening` (default OPENING, 30)
is where the second corridor wall ends on the left, the way up to the top corridor at x < opening:
200 takes the wall away, a smaller value makes the way round longer. A curriculum of openings
further and further left (configs/maze-curriculum.yaml) teaches a plain objective search to follow
the wall past the dead end.
"""
from __future__ import annotations

import numpy as np

from . import render
from .game_parameters import GameParameters
from .spec import Behavior, StepResult, Task, positive_int

WIDTH, HEIGHT = 200.0, 200.0
START = (20.0, 30.0)
START_HEADING = 0.0
GOAL = (180.0, 170.0)
GOAL_RADIUS = 8.0
RADIUS = 6.0             # the robot's
RANGE = 100.0            # of a range finder
MAX_SPEED = 3.0          # units per step
MAX_TURN = 0.25          # radians per step
FINDERS = np.radians([-90.0, -45.0, 0.0, 45.0, 90.0, 180.0])
DIAGONAL = float(np.hypot(WIDTH, HEIGHT))
# The way through: along the first corridor, up past the first wall's end, left along the second
# corridor below the pocket, up through the second wall's opening and right to GOAL.
PATH = np.array([START, (180.0, 30.0), (180.0, 80.0), (15.0, 80.0), (15.0, 170.0), GOAL])


def along_path(fraction: float) -> tuple[float, float]:
    """The point at `fraction` (clipped to [0, 1]) of PATH's length."""
    legs = np.hypot(*np.diff(PATH, axis=0).T)
    left = float(np.clip(fraction, 0.0, 1.0)) * legs.sum()
    for (a, b), length in zip(zip(PATH[:-1], PATH[1:]), legs):
        if left <= length:
            point = a + (b - a) * (left / length)
            return float(point[0]), float(point[1])
        left -= length
    return GOAL

# Wall segments (x0, y0, x1, y1): the arena's sides, the two corridor walls, the pocket's side.
WALLS = np.array([
    (0, 0, WIDTH, 0), (WIDTH, 0, WIDTH, HEIGHT), (WIDTH, HEIGHT, 0, HEIGHT), (0, HEIGHT, 0, 0),
    (0, 67, 160, 67),
    (30, 133, 200, 133),
    (145, 133, 145, 92),
], dtype=np.float64)
SECOND_WALL = 5          # WALLS' row of the second corridor wall, whose left end `opening` moves
OPENING = 30.0           # where it ends: the second wall's opening is at x < OPENING


def closeness(position: np.ndarray, goal: np.ndarray | None = None) -> np.ndarray:
    """1 - distance to the goal (GOAL, or each row's of (n, 2) `goal`) / the arena's diagonal, for
    (n, 2) positions."""
    goal = np.asarray(GOAL)[None, :] if goal is None else goal
    return 1.0 - np.hypot(position[:, 0] - goal[:, 0], position[:, 1] - goal[:, 1]) / DIAGONAL


def _cross(ax, ay, bx, by):
    return ax * by - ay * bx


def ranges(position: np.ndarray, heading: np.ndarray, walls: np.ndarray | None = None) -> np.ndarray:
    """(n, 6) distance along each range finder to the nearest wall (WALLS, or each row's of (n,
    walls, 4) `walls`), capped at RANGE."""
    walls = WALLS[None] if walls is None else walls
    angles = heading[:, None] + FINDERS[None, :]                    # (n, 6)
    ux, uy = np.cos(angles)[..., None], np.sin(angles)[..., None]   # (n, 6, 1)
    ax, ay = walls[:, None, :, 0], walls[:, None, :, 1]
    ex, ey = walls[:, None, :, 2] - ax, walls[:, None, :, 3] - ay   # (n or 1, 1, walls)
    px, py = position[:, 0, None, None], position[:, 1, None, None]
    denom = _cross(ux, uy, ex, ey)                                  # (n, 6, walls)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = _cross(ax - px, ay - py, ex, ey) / denom
        s = _cross(ax - px, ay - py, ux, uy) / denom
    hit = (denom != 0) & (t >= 0) & (s >= 0) & (s <= 1)
    return np.minimum(np.where(hit, t, np.inf).min(axis=2), RANGE)


def wall_distance(position: np.ndarray, walls: np.ndarray | None = None) -> np.ndarray:
    """(n,) distance from each position to the nearest wall (WALLS, or each row's of `walls`)."""
    walls = WALLS[None] if walls is None else walls
    ax, ay = walls[:, :, 0], walls[:, :, 1]
    ex, ey = walls[:, :, 2] - ax, walls[:, :, 3] - ay
    px, py = position[:, 0, None], position[:, 1, None]
    length = np.broadcast_to(ex * ex + ey * ey, np.broadcast_shapes(px.shape, ex.shape))
    dot = (px - ax) * ex + (py - ay) * ey
    # a wall of no length (opening = WIDTH) is a point: its distance is the point's
    along = np.clip(np.divide(dot, length, out=np.zeros(length.shape), where=length > 0), 0.0, 1.0)
    return np.hypot(px - (ax + along * ex), py - (ay + along * ey)).min(axis=1)


def radar(position: np.ndarray, heading: np.ndarray, goal: np.ndarray | None = None) -> np.ndarray:
    """(n, 4) one-hot slice of the goal's direction (GOAL, or each row's of `goal`): front, left,
    back, right of the heading."""
    goal = np.asarray(GOAL)[None, :] if goal is None else goal
    bearing = np.arctan2(goal[:, 1] - position[:, 1], goal[:, 0] - position[:, 0]) - heading
    slice_ = np.floor(np.mod(bearing + np.pi / 4, 2 * np.pi) / (np.pi / 2)).astype(np.int64) % 4
    return np.eye(4)[slice_]


class Maze(Task):
    """`agents` robots, each alone in its own copy of the maze (see the module docstring)."""

    OPTIONS = ("agents", "max_steps")
    READS = ("goal", "opening")

    def __init__(self, options: dict, rng: np.random.Generator, parameters: GameParameters | None = None):
        self.parameters = parameters if parameters is not None else GameParameters()
        self.n = positive_int(options, "agents", 16, 4096)
        self.max_steps = positive_int(options, "max_steps", 400, 10**7)
        self.behaviors = (Behavior("Maze?team=0", 12, continuous=2),)
        self.position = np.zeros((self.n, 2))
        self.heading = np.zeros(self.n)
        self.steps = np.zeros(self.n, dtype=np.int64)
        self.goal = np.tile(np.asarray(GOAL, np.float64), (self.n, 1))
        self.walls = np.tile(WALLS, (self.n, 1, 1))
        self._restart(np.arange(self.n))

    def rows(self, behavior: str) -> int:
        return self.n

    def _restart(self, rows: np.ndarray) -> None:
        for row in rows:   # each robot's OnEpisodeBegin, in turn
            self.goal[row] = along_path(self.parameters.get_with_default("goal", 1.0))
            self.walls[row, SECOND_WALL, 0] = np.clip(self.parameters.get_with_default("opening", OPENING), 0, WIDTH)
        self.position[rows] = START
        self.heading[rows] = START_HEADING
        self.steps[rows] = 0

    def restart(self, rows: dict[str, np.ndarray]) -> None:
        self._restart(rows.get(self.behaviors[0].name, np.zeros(0, np.int64)))

    def observe(self, behavior: str) -> np.ndarray:
        scaled = self.position / (np.array([WIDTH, HEIGHT]) / 2) - 1.0
        return np.column_stack([ranges(self.position, self.heading, self.walls) / RANGE,
                                radar(self.position, self.heading, self.goal),
                                scaled]).astype(np.float32)

    def step(self, actions: dict, acting: dict, deciding: dict) -> dict[str, StepResult]:
        name = self.behaviors[0].name
        continuous, _ = actions[name]
        action = np.clip(continuous.astype(np.float64), -1.0, 1.0)
        action[~acting[name]] = 0.0
        self.heading = np.mod(self.heading + MAX_TURN * action[:, 0], 2 * np.pi)
        speed = MAX_SPEED * action[:, 1]
        moved = self.position + np.column_stack([np.cos(self.heading), np.sin(self.heading)]) * speed[:, None]
        free = wall_distance(moved, self.walls) >= RADIUS
        self.position[free] = moved[free]
        self.steps += 1
        reached = np.hypot(self.position[:, 0] - self.goal[:, 0], self.position[:, 1] - self.goal[:, 1]) < GOAL_RADIUS
        interrupted = ~reached & (self.steps >= self.max_steps)
        done = reached | interrupted
        reward = np.where(reached, 1.0, np.where(interrupted, closeness(self.position, self.goal), 0.0))
        reward = reward.astype(np.float32)
        return {name: StepResult(reward, np.zeros(self.n, np.float32), done, interrupted)}

    GOAL_COLOR, ROBOT_COLOR = (90, 200, 110), (240, 240, 240)

    def render(self, behavior: str, row: int) -> np.ndarray:
        """The maze from above (+y upwards): its walls, the goal's disc, the robot and a line from
        its centre along its heading."""
        canvas = render.Canvas()
        across = render.Scale(0.0, WIDTH, 8, render.SIZE - 8)
        up = render.Scale(0.0, HEIGHT, render.SIZE - 8, 8)
        for x0, y0, x1, y1 in self.walls[row]:
            canvas.line(across(x0), up(y0), across(x1), up(y1), render.LINE)
        goal = self.goal[row]
        canvas.disc(across(goal[0]), up(goal[1]), across.length(GOAL_RADIUS), self.GOAL_COLOR)
        (x, y), heading = self.position[row], self.heading[row]
        canvas.disc(across(x), up(y), across.length(RADIUS), self.ROBOT_COLOR)
        tip = (x + 2 * RADIUS * np.cos(heading), y + 2 * RADIUS * np.sin(heading))
        canvas.line(across(x), up(y), across(tip[0]), up(tip[1]), render.HIGHLIGHT, width=2)
        return canvas.image
