"""The simulator's tasks: small, honest, numpy-vectorized dynamics behind ML-Agents behaviors.

The interface a task offers the academy is in spec.py; the probe task, whose returns are known in
closed form, is in probe.py; the competitive duel for self-play in duel.py. TASKS maps the builds'
task names to their classes.
"""
from __future__ import annotations

import numpy as np

from . import render
from .camera import Camera
from .duel import Duel
from .maze import Maze
from .probe import Probe
from .game_parameters import GameParameters
from .spec import AreaTask, Behavior, StepResult, Task, integer, positive_int


class Ball3D(Task):
    """A 3DBall-like balance task: each agent tilts a platform to keep a ball on it.

    Observations (8): platform tilt about z and x, ball position relative to the platform centre
    (x, y, z) and ball velocity (x, y, z). Actions (2, continuous, clipped to [-1, 1]): change
    of tilt about z and x; an agent that does not act this step keeps its tilt. Reward +0.1 per
    academy step while the ball stays on; -1 and the end of the episode when it falls off;
    episodes are interrupted at max_steps academy steps.

    The ball's environment parameters are read as 3DBall reads them, with GetWithDefault in each
    agent's OnEpisodeBegin (an agent at a time, in row order; a sampler draws anew for each):
    `mass` (default 1: the random push on the ball is a force, its acceleration PUSH / mass),
    `scale` (default 1: the ball's size; the ball falls once its edge, 0.5 (scale - 1) beyond its
    centre, leaves the platform) and `gravity` (default 9.81, m/s^2).
    """

    HALF_SIZE = 2.5      # platform half-width
    PUSH = 0.6           # standard deviation of a random push on the ball (m/s^2), every step
    MAX_TILT = 0.45      # radians
    TILT_RATE = 0.04     # radians per step at action 1
    DT = 0.04            # seconds per step
    GRAVITY = 9.81
    DAMPING = 0.995

    OPTIONS = ("agents", "max_steps", "visual")
    READS = ("mass", "scale", "gravity")

    def __init__(self, options: dict, rng: np.random.Generator, parameters: GameParameters | None = None):
        self.parameters = parameters if parameters is not None else GameParameters()
        self.n = positive_int(options, "agents", 12, 4096)
        self.max_steps = positive_int(options, "max_steps", 1000, 10**7)
        visual = integer(options, "visual", 0, 0, 1)
        # visual = 1 adds a camera-like (4, 4, 1) observation, for clients that must refuse one.
        self.visual_shape = (4, 4, 1) if visual else None
        self.behaviors = (Behavior("Ball3D?team=0", 8, continuous=2),)
        self.rng = rng
        self.tilt = np.zeros((self.n, 2))     # about z, about x
        self.pos = np.zeros((self.n, 2))      # ball x, z on the platform
        self.vel = np.zeros((self.n, 2))
        self.steps = np.zeros(self.n, dtype=np.int64)
        self.mass, self.scale, self.gravity = np.ones(self.n), np.ones(self.n), np.full(self.n, self.GRAVITY)
        self._restart(np.arange(self.n))

    def rows(self, behavior: str) -> int:
        return self.n

    def _restart(self, rows: np.ndarray) -> None:
        k = len(rows)
        for row in rows:   # each agent's OnEpisodeBegin, in turn
            self.mass[row] = self.parameters.get_with_default("mass", 1.0)
            self.scale[row] = self.parameters.get_with_default("scale", 1.0)
            self.gravity[row] = self.parameters.get_with_default("gravity", self.GRAVITY)
        self.tilt[rows] = self.rng.uniform(-0.15, 0.15, (k, 2))
        self.pos[rows] = self.rng.uniform(-1.5, 1.5, (k, 2))
        self.vel[rows] = self.rng.uniform(-0.5, 0.5, (k, 2))
        self.steps[rows] = 0

    def restart(self, rows: dict[str, np.ndarray]) -> None:
        self._restart(rows.get(self.behaviors[0].name, np.zeros(0, np.int64)))

    def observe(self, behavior: str) -> np.ndarray:
        height = -self.pos[:, 0] * np.sin(self.tilt[:, 0]) + self.pos[:, 1] * np.sin(self.tilt[:, 1])
        climb = -self.vel[:, 0] * np.sin(self.tilt[:, 0]) + self.vel[:, 1] * np.sin(self.tilt[:, 1])
        return np.column_stack([self.tilt[:, 0], self.tilt[:, 1], self.pos[:, 0], height, self.pos[:, 1],
                                self.vel[:, 0], climb, self.vel[:, 1]]).astype(np.float32)

    def step(self, actions: dict, acting: dict, deciding: dict) -> dict[str, StepResult]:
        name = self.behaviors[0].name
        continuous, _ = actions[name]
        push = np.clip(continuous.astype(np.float64), -1.0, 1.0)
        if not acting[name].all():
            push[~acting[name]] = 0.0
        self.tilt = np.clip(self.tilt + self.TILT_RATE * push, -self.MAX_TILT, self.MAX_TILT)
        accel = self.gravity[:, None] * np.column_stack([-np.sin(self.tilt[:, 0]), np.sin(self.tilt[:, 1])])
        accel += self.rng.normal(0.0, self.PUSH, accel.shape) / self.mass[:, None]
        self.vel = (self.vel + accel * self.DT) * self.DAMPING
        self.pos = self.pos + self.vel * self.DT
        self.steps += 1
        dropped = (np.abs(self.pos) > self.HALF_SIZE - 0.5 * (self.scale[:, None] - 1.0)).any(axis=1)
        interrupted = ~dropped & (self.steps >= self.max_steps)
        reward = np.where(dropped, -1.0, 0.1).astype(np.float32)
        return {self.behaviors[0].name: StepResult(reward, np.zeros(self.n, np.float32),
                                                   dropped | interrupted, interrupted)}

    VIEW = 3.2          # the frame shows x and z from -VIEW to VIEW (m)
    BALL_RADIUS = 0.25  # as drawn (m)
    PLATFORM_COLOR, BALL_COLOR, TILT_COLOR = (70, 110, 160), (245, 150, 40), (230, 230, 230)

    def scales(self) -> tuple[render.Scale, render.Scale]:
        """The frame's pixel maps: platform x to the right, z upwards."""
        return render.Scale(-self.VIEW, self.VIEW, 0, render.SIZE), render.Scale(-self.VIEW, self.VIEW, render.SIZE, 0)

    def render(self, behavior: str, row: int) -> np.ndarray:
        """Top down: the platform, the ball at its position on it, and a line from the centre
        downhill, as long as the tilt is steep (MAX_TILT: 1.5 m)."""
        canvas = render.Canvas()
        x, z = self.scales()
        half = self.HALF_SIZE
        canvas.rect(x(-half), z(half), x(half), z(-half), self.PLATFORM_COLOR)
        downhill = np.array([-np.sin(self.tilt[row, 0]), np.sin(self.tilt[row, 1])]) / np.sin(self.MAX_TILT) * 1.5
        canvas.line(x(0), z(0), x(downhill[0]), z(downhill[1]), self.TILT_COLOR)
        canvas.disc(x(self.pos[row, 0]), z(self.pos[row, 1]), x.length(self.BALL_RADIUS), self.BALL_COLOR)
        return canvas.image


class TwoTeams(AreaTask):
    """Blue versus Purple on a small grid, one agent per team in each of `areas` arenas.

    Blue attacks towards +x, Purple towards -x; each team observes the field in its own frame
    (its attack direction is +x), so one genome can play either side. Observations (8): own
    position, ball position, opponent position (normalized), whether the ball is within reach,
    the fraction of the episode left. Actions: two discrete branches, move (stay, forward, back,
    up, down) and kick (no, yes); masks forbid moves off the field and kicks out of reach. A kick
    sends the ball three cells forward; the ball over the opponent's goal line wins: group
    reward +1 for the winners and -1 for the losers. Each agent also gets -1/max_steps per academy
    step. An agent that does not act this step stays and does not kick.
    """

    WIDTH, HEIGHT = 11, 5
    KICK = 3
    MOVES = np.array([[0, 0], [1, 0], [-1, 0], [0, 1], [0, -1]])  # in the agent's own frame

    OPTIONS = ("areas", "max_steps")

    def __init__(self, options: dict, rng: np.random.Generator):
        self.areas = positive_int(options, "areas", 4, 2048)
        self.max_steps = positive_int(options, "max_steps", 200, 10**7)
        self.behaviors = (Behavior("Blue?team=0", 8, branches=(5, 2)),
                          Behavior("Purple?team=1", 8, branches=(5, 2)))
        self.rng = rng
        self.players = np.zeros((2, self.areas, 2), dtype=np.int64)  # team, area, (x, y)
        self.ball = np.zeros((self.areas, 2), dtype=np.int64)
        self.steps = np.zeros(self.areas, dtype=np.int64)
        self._restart(np.arange(self.areas))

    def _team(self, behavior: str) -> int:
        return 0 if behavior.startswith("Blue") else 1

    def rows(self, behavior: str) -> int:
        return self.areas

    def group_ids(self, behavior: str) -> np.ndarray:
        return (2 * np.arange(self.areas) + self._team(behavior) + 1).astype(np.int32)

    def _restart(self, areas: np.ndarray) -> None:
        k = len(areas)
        mid = self.HEIGHT // 2
        self.players[0, areas] = np.column_stack([np.full(k, 2), self.rng.integers(0, self.HEIGHT, k)])
        self.players[1, areas] = np.column_stack([np.full(k, self.WIDTH - 3), self.rng.integers(0, self.HEIGHT, k)])
        self.ball[areas] = np.column_stack([np.full(k, self.WIDTH // 2), mid + self.rng.integers(-1, 2, k)])
        self.steps[areas] = 0


    def _own_frame_x(self, team: int, x: np.ndarray) -> np.ndarray:
        return x if team == 0 else self.WIDTH - 1 - x

    def _in_reach(self, team: int) -> np.ndarray:
        return (np.abs(self.players[team] - self.ball) <= 1).all(axis=1)

    def observe(self, behavior: str) -> np.ndarray:
        team = self._team(behavior)
        me, them = self.players[team], self.players[1 - team]
        sx, sy = self.WIDTH - 1, self.HEIGHT - 1
        return np.column_stack([
            self._own_frame_x(team, me[:, 0]) / sx, me[:, 1] / sy,
            self._own_frame_x(team, self.ball[:, 0]) / sx, self.ball[:, 1] / sy,
            self._own_frame_x(team, them[:, 0]) / sx, them[:, 1] / sy,
            self._in_reach(team), 1.0 - self.steps / self.max_steps,
        ]).astype(np.float32)

    def masks(self, behavior: str) -> np.ndarray:
        """(areas, 7) bool, True = forbidden: moves off the field, kicks out of reach."""
        team = self._team(behavior)
        direction = 1 if team == 0 else -1
        me = self.players[team]
        target = me[:, None, :] + self.MOVES[None, :, :] * np.array([direction, 1])
        off = ((target[..., 0] < 0) | (target[..., 0] >= self.WIDTH) |
               (target[..., 1] < 0) | (target[..., 1] >= self.HEIGHT))
        return np.column_stack([off, np.zeros(self.areas, bool), ~self._in_reach(team)])

    def step(self, actions: dict, acting: dict, deciding: dict) -> dict[str, StepResult]:
        kicks = []
        for team, behavior in enumerate(self.behaviors):
            _, discrete = actions[behavior.name]
            move, kick = discrete[:, 0].astype(np.int64), discrete[:, 1].astype(np.int64)
            if not acting[behavior.name].all():
                move[~acting[behavior.name]] = 0
                kick[~acting[behavior.name]] = 0
            allowed = ~self.masks(behavior.name)
            move = np.where(allowed[np.arange(self.areas), np.clip(move, 0, 4)], move, 0)
            kicks.append((kick == 1) & allowed[:, 6])
            direction = 1 if team == 0 else -1
            self.players[team] += self.MOVES[np.clip(move, 0, 4)] * np.array([direction, 1])
        first = self.rng.integers(0, 2, self.areas)  # who kicks first when both do
        for order in (0, 1):
            for team in (0, 1):
                kicking = kicks[team] & (first == team if order == 0 else first != team)
                kicking &= self._in_reach(team)
                direction = 1 if team == 0 else -1
                dy = np.sign(self.ball[:, 1] - self.players[team][:, 1])
                self.ball[kicking, 0] += direction * self.KICK
                self.ball[kicking, 1] = np.clip(self.ball[kicking, 1] + dy[kicking], 0, self.HEIGHT - 1)
        self.ball[:, 0] = np.clip(self.ball[:, 0], 0, self.WIDTH - 1)
        self.steps += 1
        blue_wins = self.ball[:, 0] >= self.WIDTH - 1
        purple_wins = self.ball[:, 0] <= 0
        decided = blue_wins | purple_wins
        interrupted = ~decided & (self.steps >= self.max_steps)
        done = decided | interrupted
        step_cost = np.full(self.areas, -1.0 / self.max_steps, np.float32)
        results = {}
        for team, behavior in enumerate(self.behaviors):
            won, lost = (blue_wins, purple_wins) if team == 0 else (purple_wins, blue_wins)
            group = np.where(won, 1.0, np.where(lost, -1.0, 0.0)).astype(np.float32)
            results[behavior.name] = StepResult(step_cost.copy(), group, done.copy(), interrupted.copy())
        return results

    TEAM_COLORS = ((60, 110, 230), (160, 80, 200))   # Blue, Purple
    FIELD_COLOR, BALL_COLOR, CLOCK_COLOR = (50, 120, 60), (245, 245, 245), (200, 200, 120)
    MARGIN = 8

    def cell(self, x: int, y: int) -> tuple[float, float, float]:
        """The pixel box of a field cell: its left and top edges and its side."""
        side = (render.SIZE - 2 * self.MARGIN) / self.WIDTH
        top = (render.SIZE - side * self.HEIGHT) / 2
        return self.MARGIN + x * side, top + (self.HEIGHT - 1 - y) * side, side

    def render(self, behavior: str, row: int) -> np.ndarray:
        """Top down: the field of the agent's area (Blue's goal line on the right, Purple's on the
        left), both players, the ball, a frame around the agent's own player, and below the field
        the fraction of the episode left."""
        canvas = render.Canvas()
        left, top, side = self.cell(0, self.HEIGHT - 1)
        canvas.rect(left, top, left + side * self.WIDTH, top + side * self.HEIGHT, self.FIELD_COLOR)
        for team, x in ((1, 0), (0, self.WIDTH - 1)):   # the line a team scores on, tinted its colour
            gx, gy, _ = self.cell(x, self.HEIGHT - 1)
            canvas.rect(gx, gy, gx + side, gy + side * self.HEIGHT, tuple(c // 2 for c in self.TEAM_COLORS[team]))
        for team in (0, 1):
            px, py, _ = self.cell(*self.players[team, row])
            canvas.rect(px + 3, py + 3, px + side - 3, py + side - 3, self.TEAM_COLORS[team])
        bx, by, _ = self.cell(*self.ball[row])
        canvas.disc(bx + side / 2, by + side / 2, side / 4, self.BALL_COLOR)
        mx, my, _ = self.cell(*self.players[self._team(behavior), row])
        canvas.frame(mx, my, mx + side, my + side, render.HIGHLIGHT)
        bottom = top + side * self.HEIGHT
        canvas.bar(1.0 - self.steps[row] / self.max_steps, bottom + 12, bottom + 20, self.CLOCK_COLOR, self.MARGIN)
        return canvas.image


class Hover(Task):
    """Altitude hold for a drone with an unknown payload, from noisy sensors: smooth control, the
    kind of task continuous-time networks (network = ctrnn) are made for.

    Each agent flies straight up and down under gravity, with air drag. Its target altitude drifts
    smoothly (5 m plus a sine wave of random amplitude up to 1.5 m, period 7 to 21 s, random phase)
    and its payload (mass 0.5 to 1.5 times the nominal) is new every episode and not observed: the
    thrust that holds it up must be found from how the altitude error behaves (a controller without
    memory keeps an offset). Observations (2): the altitude error (target - altitude, m) / 2,
    clipped to [-1, 1], and the vertical speed (m/s) / 3, each with Gaussian sensor noise of
    standard deviation 0.05, read anew at every academy step. Action (1, continuous, clipped to
    [-1, 1]): thrust, 0 to 2 g per nominal mass (0: the thrust that holds the nominal mass); an
    agent that does not act this step keeps its thrust. Reward per academy step: 0.1 * max(0,
    1 - |error| in m); at each decision, minus 0.5 * (change of thrust action)^2 (jerky control
    costs); -1 and the end of the episode when the drone leaves [0, 10] m. Episodes are
    interrupted at max_steps academy steps of DT = 0.02 s (Unity's default Fixed Timestep).
    """

    DT = 0.02
    GRAVITY = 9.81
    DRAG = 0.5
    NOISE = 0.05
    JERK = 0.5
    CEILING = 10.0

    OPTIONS = ("agents", "max_steps")

    def __init__(self, options: dict, rng: np.random.Generator):
        self.n = positive_int(options, "agents", 16, 4096)
        self.max_steps = positive_int(options, "max_steps", 500, 10**7)
        self.behaviors = (Behavior("Hover?team=0", 2, continuous=1),)
        self.rng = rng
        self.height, self.speed, self.thrust = np.zeros(self.n), np.zeros(self.n), np.zeros(self.n)
        self.mass, self.amplitude = np.ones(self.n), np.zeros(self.n)
        self.omega, self.phase = np.ones(self.n), np.zeros(self.n)
        self.steps = np.zeros(self.n, dtype=np.int64)
        self.reading = np.zeros((self.n, 2), np.float32)
        self._restart(np.arange(self.n))

    def rows(self, behavior: str) -> int:
        return self.n

    def target(self) -> np.ndarray:
        return 5.0 + self.amplitude * np.sin(self.omega * self.steps * self.DT + self.phase)

    def _sense(self, rows: np.ndarray) -> None:
        error = np.clip((self.target()[rows] - self.height[rows]) / 2.0, -1.0, 1.0)
        noise = self.rng.normal(0.0, self.NOISE, (len(rows), 2))
        self.reading[rows] = (np.column_stack([error, self.speed[rows] / 3.0]) + noise).astype(np.float32)

    def _restart(self, rows: np.ndarray) -> None:
        k = len(rows)
        self.height[rows] = self.rng.uniform(4.0, 6.0, k)
        self.speed[rows], self.thrust[rows], self.steps[rows] = 0.0, 0.0, 0
        self.mass[rows] = self.rng.uniform(0.5, 1.5, k)
        self.amplitude[rows] = self.rng.uniform(0.0, 1.5, k)
        self.omega[rows] = self.rng.uniform(0.3, 0.9, k)
        self.phase[rows] = self.rng.uniform(0.0, 2 * np.pi, k)
        self._sense(rows)

    def restart(self, rows: dict[str, np.ndarray]) -> None:
        self._restart(rows.get(self.behaviors[0].name, np.zeros(0, np.int64)))

    def observe(self, behavior: str) -> np.ndarray:
        return self.reading

    def step(self, actions: dict, acting: dict, deciding: dict) -> dict[str, StepResult]:
        name = self.behaviors[0].name
        continuous, _ = actions[name]
        action = np.clip(continuous[:, 0].astype(np.float64), -1.0, 1.0)
        jerk = np.where(deciding[name], self.JERK * (action - self.thrust) ** 2, 0.0)
        self.thrust = np.where(acting[name], action, self.thrust)
        accel = (self.thrust + 1.0) * self.GRAVITY / self.mass - self.GRAVITY - self.DRAG * self.speed
        self.speed = self.speed + accel * self.DT
        self.height = self.height + self.speed * self.DT
        self.steps += 1
        crashed = (self.height < 0.0) | (self.height > self.CEILING)
        interrupted = ~crashed & (self.steps >= self.max_steps)
        tracking = 0.1 * np.maximum(0.0, 1.0 - np.abs(self.target() - self.height))
        reward = np.where(crashed, -1.0, tracking - jerk).astype(np.float32)
        self._sense(np.arange(self.n))
        return {name: StepResult(reward, np.zeros(self.n, np.float32), crashed | interrupted, interrupted)}

    DRONE_COLOR, TARGET_COLOR, FLAME_COLOR = (220, 220, 230), (90, 200, 110), (250, 140, 40)

    def altitude(self) -> render.Scale:
        """The frame's height axis: 0 m near the bottom, the ceiling near the top."""
        return render.Scale(0.0, self.CEILING, render.SIZE - 16, 16)

    def render(self, behavior: str, row: int) -> np.ndarray:
        """From the side: ground and ceiling, the target altitude, the drone at its altitude and
        below it a flame as long as its thrust (0 to 2 g per nominal mass: 0 to 40 pixels)."""
        canvas = render.Canvas()
        y = self.altitude()
        canvas.rect(0, y(0.0), render.SIZE, y(0.0) + 4, render.LINE)
        canvas.rect(0, y(self.CEILING) - 4, render.SIZE, y(self.CEILING), render.LINE)
        target = y(self.target()[row])
        canvas.rect(16, target - 1, render.SIZE - 16, target + 1, self.TARGET_COLOR)
        height, middle = y(self.height[row]), render.SIZE / 2
        canvas.rect(middle - 8, height, middle + 8, height + 20 * (self.thrust[row] + 1.0), self.FLAME_COLOR)
        canvas.rect(middle - 24, height - 5, middle + 24, height + 5, self.DRONE_COLOR)
        return canvas.image


TASKS = {"ball": Ball3D, "teams": TwoTeams, "probe": Probe, "duel": Duel, "hover": Hover, "camera": Camera, "maze": Maze}
