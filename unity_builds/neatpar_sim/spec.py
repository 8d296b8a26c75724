"""What a task declares to the academy (behaviors, per-step results) and the checks of its options.

Options arrive as integers, or as tuples of integers for a comma-separated list (one value per
behavior, in the task's behavior order); the EnvironmentParameters side channel can also set one
behavior's value with the key `option.INDEX`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np


class OptionError(ValueError):
    """A task or academy option with a bad value."""


class MaskedActionError(ValueError):
    """Python sent an agent a discrete action that the mask it was sent forbids (strict_masks)."""


@dataclass(frozen=True)
class VisualSensor:
    """A visual observation as Unity's camera, render-texture and grid sensors send it: ML-Agents
    2.x's shape (height, width, channels), or with `channels_first` 3.x's (channels, height,
    width); PNG (SensorCompressionType.PNG: RGB PNGs, three channels each, one after the other, with
    `mapping` as the compressed channel mapping when given) or float32 values in the shape's order."""
    shape: tuple[int, int, int]
    png: bool = True
    mapping: tuple[int, ...] = ()
    channels_first: bool = False


@dataclass(frozen=True)
class Behavior:
    """One behavior's name and its BrainParameters: observation width (0: no vector observation),
    action spec, and its visual sensors (their frames come from Task.frames)."""
    name: str
    observations: int
    continuous: int = 0
    branches: tuple[int, ...] = ()
    sensors: tuple[VisualSensor, ...] = ()


@dataclass
class StepResult:
    """Per agent row of one behavior, after one academy step's actions."""
    reward: np.ndarray        # float32, added to the agent's reward (Agent.AddReward)
    group_reward: np.ndarray  # float32, added to its group reward
    done: np.ndarray          # bool: the task ended the episode (EndEpisode / EpisodeInterrupted)
    interrupted: np.ndarray   # bool: of those, ended as interrupted
    destroyed: np.ndarray | None = None  # bool: the agent was destroyed (replaced by a new agent)


class Task:
    """A task owns the state of every agent row of its behaviors. The academy (academy.py) asks it
    for observations, masks and group ids, hands it each academy step's actions with the rows that
    act and those whose action is a decision's, and restarts rows whose episodes ended. Every
    random draw comes from the generator the player seeds with Python's seed."""

    behaviors: tuple[Behavior, ...] = ()
    visual_shape: tuple[int, ...] | None = None
    # The environment parameters the task reads with GetWithDefault (game_parameters.py); a task
    # that reads any takes them as its constructor's `parameters`.
    READS: tuple[str, ...] = ()

    def rows(self, behavior: str) -> int:
        """Agent rows of the behavior (the number of its agents once all are enabled)."""
        raise NotImplementedError

    def observe(self, behavior: str) -> np.ndarray:
        """(rows, width) float32 observations of every row."""
        raise NotImplementedError

    def frames(self, behavior: str) -> list[np.ndarray]:
        """One array per visual sensor of the behavior, with a row per agent row: for a PNG sensor
        the (rows, height, width, n) uint8 pixels its PNGs hold (a grayscale camera: its RGB render,
        n = 3; a grid sensor: its channels), otherwise its (rows, height, width, channels) float32
        values."""
        return []

    def group_ids(self, behavior: str) -> np.ndarray:
        return np.zeros(self.rows(behavior), np.int32)

    def masks(self, behavior: str) -> np.ndarray | None:
        """(rows, sum of branch sizes) bool, True = forbidden; None when nothing is masked."""
        return None

    def step(self, actions: dict, acting: dict, deciding: dict) -> dict[str, StepResult]:
        """One academy step: `actions[name]` = (continuous, discrete) of every row, applied where
        `acting[name]`; `deciding[name]` marks rows whose action is a decision's (not a repeat)."""
        raise NotImplementedError

    def restart(self, rows: dict[str, np.ndarray]) -> None:
        """Start a new episode on these rows (ascending), one call per academy step."""
        raise NotImplementedError

    def spawned(self, rows: dict[str, np.ndarray]) -> None:
        """New agents took these rows (after a destroy): by default they start like a new episode."""
        self.restart(rows)

    def spawn_after(self, behavior: str) -> int:
        """Academy steps after each reset before the behavior's agents are enabled."""
        return 0

    def timing(self) -> dict | None:
        """Decision timing the task fixes itself ({behavior: (period, offset, actions_between)}), or None."""
        return None

    def render(self, behavior: str, row: int) -> np.ndarray | None:
        """A frame of the agent in `row` of `behavior` (or of the area it plays in): a render.SIZE
        square RGB uint8 image drawn from the task's state as it is now; None for a task that
        draws nothing (the default)."""
        return None


def renders(task_class: type) -> bool:
    """Whether a task class draws frames (overrides Task.render)."""
    return task_class.render is not Task.render


class AreaTask(Task):
    """A task played in `areas` areas with one agent of each behavior in each (an agent's row is
    its area's number): an area restarts as a whole when any of its agents starts a new episode."""

    areas: int

    def restart(self, rows: dict[str, np.ndarray]) -> None:
        ended = np.zeros(self.areas, bool)
        for areas in rows.values():
            ended[areas] = True
        self._restart(np.flatnonzero(ended))

    def _restart(self, areas: np.ndarray) -> None:
        """Start a new episode in these areas (ascending)."""
        raise NotImplementedError


def _plain(value):
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _is_int(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def integer(options: dict, key: str, default: int, low: int, high: int) -> int:
    """A single-valued integer option within [low, high]."""
    value = _plain(options.get(key, default))
    if isinstance(value, tuple):
        raise OptionError(f"{key} takes one value, got {','.join(map(str, value))}")
    if not _is_int(value) or not low <= value <= high:
        raise OptionError(f"{key} must be an integer from {low} to {high}, got {value!r}")
    return int(value)


def positive_int(options: dict, key: str, default: int, limit: int) -> int:
    return integer(options, key, default, 1, limit)


def per_behavior(options: dict, key: str, default: int, names: Sequence[str], low: int, high: int) -> tuple[int, ...]:
    """One integer per behavior: a single value applies to all, a list gives one value per behavior,
    and `key.INDEX` (from the side channel) sets one behavior's value."""
    value = _plain(options.get(key, default))
    if isinstance(value, tuple):
        if len(value) != len(names):
            raise OptionError(f"{key} needs one value per behavior ({len(names)}: {', '.join(names)}), "
                              f"got {len(value)}: {','.join(map(str, value))}")
        values = [_plain(v) for v in value]
    else:
        values = [value] * len(names)
    for index in range(len(names)):
        values[index] = _plain(options.get(f"{key}.{index}", values[index]))
    for name, item in zip(names, values):
        if not _is_int(item) or not low <= item <= high:
            where = f" for {name}" if len(names) > 1 else ""
            raise OptionError(f"{key} must be an integer from {low} to {high}{where}, got {item!r}")
    return tuple(int(v) for v in values)


def unknown_options(options: dict, singles: Sequence[str], per_behavior_keys: Sequence[str]) -> list[str]:
    """Keys of `options` that are neither an option nor `OPTION.INDEX` of a per-behavior option."""
    unknown = []
    for name in options:
        base, dot, index = name.partition(".")
        if name in singles or name in per_behavior_keys:
            continue
        if dot and base in per_behavior_keys and index.isdigit():
            continue
        unknown.append(name)
    return unknown
