"""What the episode runner needs from an environment, whatever its kind (Unity, Gymnasium).

The runner sees agents grouped by behavior. Each step it polls the environment for what every
behavior's agents report (`Batch`: who asks for a decision with which observations and rewards,
whose episode ended), hands back network outputs for the agents that asked, and steps on. A
behavior's `Layout` (its observation and action sizes) is known from its first report on; which
actions the outputs become (clipping, masks, bounds) is the environment's business.

    runner                                   environment
      reset(seed) ------------------------->  every agent starts an episode
      poll() <----------------------------  {behavior: Batch} of the behaviors that reported
      act(behavior, outputs) ------------->  outputs -> actions of the agents that asked
      step() ------------------------------>  the actions take effect
      take_game_stats() <-------------------  what the game recorded about itself meanwhile

Only while a clip is recorded, at an agent's decision:
      capture(behavior, agent) ------------>  a picture of the agent as it decides
      take_frames() <-----------------------  the pictures, in order (a game's arrive with the next step)
"""
from __future__ import annotations

import enum
import math
from dataclasses import dataclass
from typing import Any, Mapping, NamedTuple, Protocol

import numpy as np


class Sensor(NamedTuple):
    """One sensor's observation as the environment reports it: its shape (a vector's (size,); a
    camera's or grid sensor's (height, width, channels), as mlagents-envs 0.28 decodes it) and
    whether it is visual (rank 3, as ML-Agents counts them). `channels_first`: the game's visual
    shape is (channels, height, width), as com.unity.ml-agents 3.x sends uncompressed ones. A
    network sees the values flattened in C order."""
    shape: tuple[int, ...]
    visual: bool = False
    channels_first: bool = False

    @property
    def size(self) -> int:
        return math.prod(self.shape)


@dataclass(frozen=True)
class Layout:
    """What a behavior observes and does: one entry per sensor (its flattened size), continuous
    actions, the sizes of its discrete action branches, and each sensor's shape (`sensors`, in the
    same order; () when only the sizes are known: `sensor_shapes` then takes each as a vector)."""
    observation_sizes: tuple[int, ...]
    continuous: int
    branches: tuple[int, ...] = ()
    sensors: tuple[Sensor, ...] = ()

    @classmethod
    def of_sensors(cls, sensors: tuple[Sensor, ...], continuous: int, branches: tuple[int, ...] = ()) -> "Layout":
        """The Layout of these sensors (their sizes in order) and actions."""
        return cls(tuple(s.size for s in sensors), continuous, branches, tuple(sensors))

    @property
    def sensor_shapes(self) -> tuple[Sensor, ...]:
        """Each sensor's shape, in order: `sensors`, or each size as a vector sensor."""
        return self.sensors or tuple(Sensor((size,)) for size in self.observation_sizes)

    @property
    def inputs(self) -> int:
        return sum(self.observation_sizes)

    @property
    def outputs(self) -> int:
        return self.continuous + sum(self.branches)

    def describe_actions(self) -> str:
        return f"{self.continuous} continuous, discrete branches {self.branches}"


@dataclass(frozen=True)
class Batch:
    """One behavior's report for one step. Rewards are float64 sums of reward and group reward,
    earned since the agent's previous report."""
    decision_ids: np.ndarray        # int: agents that ask for a decision now
    observations: np.ndarray        # (len(decision_ids), inputs) float: their sensors in order, each flattened (C order)
    decision_rewards: np.ndarray    # float64 per deciding agent
    terminal_ids: np.ndarray        # int: agents whose episode ended (they may also ask for a decision)
    terminal_rewards: np.ndarray    # float64 per ended agent
    interrupted: np.ndarray         # bool per ended agent: cut by a step limit, not by the task
    # (len(terminal_ids), inputs) float: each ended agent's last observation, as the game sent it
    # with the terminal report (behaviour descriptors read it); None from an environment that sends none
    terminal_observations: np.ndarray | None = None


class Aggregation(enum.IntEnum):
    """How a game statistic's values within one summary period (a generation) combine: ML-Agents'
    StatsAggregationMethod, with the same numbers on the wire."""
    AVERAGE = 0      # the mean of the values
    MOST_RECENT = 1  # the latest value
    SUM = 2          # their sum
    HISTOGRAM = 3    # their mean, and their distribution


class GameStat(NamedTuple):
    """One value the game recorded about itself (Unity: `Academy.Instance.StatsRecorder.Add`)."""
    value: float
    aggregation: Aggregation


class Frames(NamedTuple):
    """Pictures an environment took of an agent: RGB uint8 images (height, width, 3) in the order
    they were asked for, and the rate (frames per second) a clip of them plays at."""
    images: list[np.ndarray]
    fps: float


class Environment(Protocol):
    """The environment side of the runner (see the module docstring)."""

    def reset(self, seed: int | None) -> None:
        """Restart every agent's episode (no terminal reports); `seed` makes the episodes repeat."""

    def set_parameters(self, values: Mapping[str, Any]) -> None:
        """Environment parameters' values (config/parameter_file.py: constants and samplers) that
        the next reset and every one after it play with."""

    def poll(self) -> Mapping[str, Batch]:
        """This step's reports, for every behavior that has reported at least once so far."""

    def layout(self, behavior: str) -> Layout:
        """The layout of a behavior that has reported."""

    def act(self, behavior: str, outputs: np.ndarray) -> None:
        """Network outputs (one row per deciding agent, in poll order) become the agents' actions."""

    def step(self) -> None:
        """Advance to the next step (agents of unlisted behaviors get neutral actions)."""

    def expect(self, episodes: int) -> None:
        """Only the first `episodes` episodes that start from the next reset until the one after it
        are scored: an environment whose agents can rest (Gymnasium copies) lets the others rest;
        one that cannot (a game) ignores it."""

    def take_game_stats(self) -> dict[str, list[GameStat]]:
        """The statistics the game recorded about itself since the previous call, by key, each
        key's values in the order they were recorded; {} when there are none or the environment
        has no way to send them. Kept across a close and a relaunch until taken."""

    def capture(self, behavior: str, agent: int) -> None:
        """Ask for a picture of the agent as it is at this decision (before its action); an
        environment that cannot give pictures raises FramesUnavailable naming the way to watch it."""

    def take_frames(self) -> Frames:
        """The pictures asked for since the previous call, once the step after the last request
        has been taken."""

    def close(self) -> None:
        """Release the environment (a later reset starts it again)."""

    def kill(self) -> None:
        """Stop at once, from a signal handler or a dying process (no clean shutdown needed)."""

    @property
    def process_pid(self) -> int | None:
        """PID of the environment's own process while one runs (a game), else None."""
