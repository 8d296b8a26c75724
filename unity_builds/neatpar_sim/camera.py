"""A task that can only be solved from pixels: reach the target that a top-down camera shows.

Each agent moves on a square arena (x, y in [0, 1]) to a target placed at random. Its only
observation is an egocentric top-down camera image (a CameraSensor, as ML-Agents 2.x sends it): the
agent at the centre, the view spanning 2 x 2 arena units so that the whole arena stays in view
wherever the agent stands, rows from the top (+y) down. The floor is black, everything outside the
arena dark blue, and the target a red blob of radius max(REACH, 1.5 pixels) fading out to its edge
(on black, so that the red channel alone says where the target is: a network that weighs each red
pixel by its offset from the centre steers straight to it). Nothing else tells where the target
is: no vector observation.

Actions: two continuous values, the move along x and y (x SPEED per decision, clipped to [-1, 1]);
with `--discrete 1` one branch of five (stay, right, left, up, down) at full speed. The agent stays
inside the arena; one that does not act stands still. Rewards: 0.5 x (distance before - distance
after) / the episode's first distance at every step (moving towards the target pays, away from it
costs), and on reaching it (distance < REACH) 0.5 x (1 - steps taken / max_steps), which ends the
episode. A return is at most about 1; one of 0.75 or more reaches the target straight and early:
the task counts as solved when a controller's mean return is at least SOLVED. Episodes are
interrupted at `--max-steps` (40) academy steps.

Sensor options: `--size S` (16): an S x S image; `--gray 1`: a grayscale camera (1 channel: the
PNG is still the RGB render, which mlagents-envs averages, as Unity sends it); `--compression 0`:
float32 values instead of PNG (RGB v / 255; grayscale (r + g + b) / 3 / 255, as ObservationWriter
computes them); `--grid C`: a grid-sensor-like observation of C channels instead of the camera, one
value per cell and channel (channel 0 the target, 1 outside the arena, 2 the floor, the others
tags that never occur), sent as ceil(C / 3) RGB PNGs with the channel mapping 0, 1, ..., C-1 and
-1 for the padding (or as float32 values with `--compression 0`); `--channels-first 1`: the shape
as com.unity.ml-agents 3.x sends it, (channels, height, width), uncompressed values in that order
(mlagents-envs 0.28 reads those, but not such a sensor's PNGs). Every random draw (start and target
positions) comes from the player's seeded generator.
"""
from __future__ import annotations

import numpy as np

from . import render
from .spec import Behavior, OptionError, StepResult, Task, VisualSensor, integer, positive_int

NAME = "Camera?team=0"
SOLVED = 0.75


class Camera(Task):
    """The camera task of the module docstring."""

    SPEED = 0.1          # arena units per decision at action 1
    REACH = 0.1          # the target is reached closer than this
    VIEW = 1.0           # the image spans VIEW arena units on each side of the agent
    MIN_START = 0.3      # a target starts at least this far from its agent
    FLOOR = (0, 0, 0)
    OUTSIDE = (0, 0, 60)
    TARGET = (250, 70, 70)
    MOVES = np.array([[0, 0], [1, 0], [-1, 0], [0, 1], [0, -1]], np.float64)  # stay, right, left, up, down

    OPTIONS = ("agents", "max_steps", "size", "gray", "compression", "grid", "discrete", "channels_first")

    def __init__(self, options: dict, rng: np.random.Generator):
        self.n = positive_int(options, "agents", 16, 4096)
        self.max_steps = positive_int(options, "max_steps", 40, 10**7)
        self.size = integer(options, "size", 16, 4, 256)
        self.gray = integer(options, "gray", 0, 0, 1)
        self.png = integer(options, "compression", 1, 0, 1) == 1
        self.grid = integer(options, "grid", 0, 0, 30)
        self.discrete = integer(options, "discrete", 0, 0, 1)
        channels_first = integer(options, "channels_first", 0, 0, 1) == 1
        if self.grid and self.gray:
            raise OptionError("grid and gray exclude each other: a grid sensor has its own channels")
        channels = self.grid or (1 if self.gray else 3)
        mapping = ()
        if self.grid and self.png:
            mapping = tuple(range(channels)) + (-1,) * (-channels % 3)
        shape = (channels, self.size, self.size) if channels_first else (self.size, self.size, channels)
        sensor = VisualSensor(shape, self.png, mapping, channels_first)
        actions = {"branches": (5,)} if self.discrete else {"continuous": 2}
        self.behaviors = (Behavior(NAME, 0, sensors=(sensor,), **actions),)
        self.rng = rng
        self.agent = np.zeros((self.n, 2))
        self.target = np.zeros((self.n, 2))
        self.start = np.ones(self.n)       # the episode's first distance
        self.steps = np.zeros(self.n, np.int64)
        self._offsets = ((np.arange(self.size) + 0.5) / self.size * 2 * self.VIEW - self.VIEW)[None, :]
        self._blob = max(self.REACH, 1.5 * 2 * self.VIEW / self.size)
        self._restart(np.arange(self.n))

    def rows(self, behavior: str) -> int:
        return self.n

    def observe(self, behavior: str) -> np.ndarray:
        return np.zeros((self.n, 0), np.float32)

    def _restart(self, rows: np.ndarray) -> None:
        self.agent[rows] = self.rng.uniform(0.05, 0.95, (len(rows), 2))
        self.target[rows] = self.rng.uniform(0.05, 0.95, (len(rows), 2))
        near = rows[np.hypot(*(self.target[rows] - self.agent[rows]).T) < self.MIN_START]
        while len(near):
            self.target[near] = self.rng.uniform(0.05, 0.95, (len(near), 2))
            near = near[np.hypot(*(self.target[near] - self.agent[near]).T) < self.MIN_START]
        self.start[rows] = np.hypot(*(self.target[rows] - self.agent[rows]).T)
        self.steps[rows] = 0

    def restart(self, rows: dict[str, np.ndarray]) -> None:
        self._restart(rows.get(NAME, np.zeros(0, np.int64)))

    # ------------------------------------------------------------ the sensor

    def _scene(self) -> tuple[np.ndarray, np.ndarray]:
        """Per row and pixel: whether it shows the arena's floor, and the target's intensity (0 to 1)."""
        x = (self.agent[:, 0, None] + self._offsets).astype(np.float32)   # each column's x
        y = (self.agent[:, 1, None] - self._offsets).astype(np.float32)   # each row's y, from the top
        inside = ((y >= 0) & (y <= 1))[:, :, None] & ((x >= 0) & (x <= 1))[:, None, :]
        across = (x - self.target[:, 0, None].astype(np.float32)) ** 2
        down = (y - self.target[:, 1, None].astype(np.float32)) ** 2
        distance = np.sqrt(down[:, :, None] + across[:, None, :])
        return inside, np.clip(np.float32(1) - distance / np.float32(self._blob), 0, 1)

    def frames(self, behavior: str) -> list[np.ndarray]:
        inside, intensity = self._scene()
        if self.grid:
            cells = np.zeros(inside.shape + (self.grid,), np.float32)
            cells[..., 0] = intensity > 0
            if self.grid > 1:
                cells[..., 1] = ~inside
            if self.grid > 2:
                cells[..., 2] = inside & (intensity == 0)
            return [(cells * 255).astype(np.uint8) if self.png else cells]
        pixels = np.array([self.OUTSIDE, self.FLOOR], np.uint8)[inside.view(np.uint8)]
        blob = np.nonzero(intensity > 0)
        under = pixels[blob].astype(np.float32)
        pixels[blob] = np.rint(under + (np.array(self.TARGET, np.float32) - under) * intensity[blob][:, None])
        if self.png:
            return [pixels]
        if self.gray:  # ObservationWriter: (r + g + b) / 3f / 255.0f
            total = pixels.astype(np.int32).sum(axis=-1, keepdims=True).astype(np.float32)
            return [total / np.float32(3) / np.float32(255)]
        return [pixels.astype(np.float32) / np.float32(255)]

    # ------------------------------------------------------------ a clip's picture

    def render(self, behavior: str, row: int) -> np.ndarray:
        """The whole arena from above (not the agent's own camera): the floor, the target as a
        disc of radius REACH in its colour, the agent as a white disc; +y upwards."""
        canvas = render.Canvas(color=self.OUTSIDE)
        across, up = render.Scale(0.0, 1.0, 16, render.SIZE - 16), render.Scale(0.0, 1.0, render.SIZE - 16, 16)
        canvas.rect(across(0.0), up(0.0), across(1.0), up(1.0), self.FLOOR)
        canvas.disc(across(self.target[row, 0]), up(self.target[row, 1]), across.length(self.REACH), self.TARGET)
        canvas.disc(across(self.agent[row, 0]), up(self.agent[row, 1]), 5, (240, 240, 240))
        return canvas.image

    # ------------------------------------------------------------ one academy step

    def step(self, actions: dict, acting: dict, deciding: dict) -> dict[str, StepResult]:
        continuous, discrete = actions[NAME]
        if self.discrete:
            move = self.MOVES[np.clip(discrete[:, 0].astype(np.int64), 0, 4)]
        else:
            move = np.clip(continuous.astype(np.float64), -1.0, 1.0)
        move = np.where(acting[NAME][:, None], move, 0.0)
        before = np.hypot(*(self.target - self.agent).T)
        self.agent = np.clip(self.agent + self.SPEED * move, 0.0, 1.0)
        after = np.hypot(*(self.target - self.agent).T)
        self.steps += 1
        reached = after < self.REACH
        interrupted = ~reached & (self.steps >= self.max_steps)
        reward = 0.5 * (before - after) / self.start + np.where(reached, 0.5 * (1 - self.steps / self.max_steps), 0.0)
        return {NAME: StepResult(reward.astype(np.float32), np.zeros(self.n, np.float32), reached | interrupted,
                                 interrupted)}

