"""A Unity game as the runner's Environment (environment.py), through mlagents-envs' UnityEnvironment.

The game decides when a behavior first reports (its BehaviorSpec arrives with its first agent's
first decision request or terminal step, whenever that is) and which agents report each step
(decision periods, turns, agents spawned and destroyed). Network outputs become actions with
neatpar's policy: continuous outputs clipped to [-1, 1]; for each discrete branch, the highest
output among the actions the agent's mask allows. Agents nobody drives (a behavior the config does
not name, every agent while the runner only looks at the game) get neutral actions that respect
their masks too: continuous zeros, and per discrete branch the first action the mask allows (Unity
executes whatever Python sends, so a masked action would be an illegal move in the game). A game
that dies or stops answering raises SimulatorError.
The game's own statistics (StatsRecorder.Add) arrive on the bridge's Stats side channel, the
pictures of an agent a clip is made of on its Frames side channel (frames.py).
"""
from __future__ import annotations

from typing import Mapping

import numpy as np
from mlagents_envs.base_env import ActionTuple, DimensionProperty
from mlagents_envs.exception import (
    UnityCommunicatorStoppedException,
    UnityEnvironmentException,
    UnityObservationException,
    UnityTimeOutException,
)

from ...errors import EnvironmentMismatch, FramesUnavailable, SimulatorError, one_line
from ...environment import Aggregation, Batch, Frames, GameStat, Layout, Sensor
from .bridge import SimulatorBridge
from .frames import NO_FRAMES

# What a game that dies or stops answering raises inside mlagents-envs.
_FAILURES = (UnityEnvironmentException, UnityCommunicatorStoppedException, UnityTimeOutException)


class UnityAdapter:
    """The game behind a SimulatorBridge, as an Environment (launched by the first reset)."""

    def __init__(self, bridge: SimulatorBridge):
        self.bridge = bridge
        self._masks: dict[str, list | None] = {}
        self._layouts: dict[str, Layout] = {}
        self._acted: set[str] = set()  # behaviors given actions since the last step

    def reset(self, seed: int | None) -> None:
        if seed is not None:
            self.bridge.set_parameter("seed", float(seed))
        env = self.bridge.env  # launched on first use, and again after a failure
        self._masks.clear()
        self._acted.clear()
        _failing_as_simulator_error(env.reset)

    def set_parameters(self, values: Mapping) -> None:
        """Environment parameters' values (constants or samplers) for the next reset and every launch."""
        self.bridge.set_values(values)

    def poll(self) -> Mapping[str, Batch]:
        env = self.bridge.env
        batches = {}
        for behavior in list(env.behavior_specs):
            decision, terminal = env.get_steps(behavior)
            self._masks[behavior] = decision.action_mask
            batches[behavior] = Batch(
                decision_ids=decision.agent_id, observations=_flat(decision.obs, len(decision)),
                decision_rewards=(decision.reward + decision.group_reward).astype(np.float64),
                terminal_ids=terminal.agent_id,
                terminal_rewards=(terminal.reward + terminal.group_reward).astype(np.float64),
                interrupted=terminal.interrupted, terminal_observations=_flat(terminal.obs, len(terminal)))
        return batches

    def layout(self, behavior: str) -> Layout:
        layout = self._layouts.get(behavior)
        if layout is None:
            layout = self._layouts[behavior] = layout_of(behavior, self.bridge.env.behavior_specs[behavior])
        return layout

    def act(self, behavior: str, outputs: np.ndarray) -> None:
        if len(outputs):
            actions = outputs_to_actions(self.layout(behavior), outputs, self._masks.get(behavior))
            self.bridge.env.set_actions(behavior, actions)
            self._acted.add(behavior)

    def step(self) -> None:
        env = self.bridge.env
        for behavior in list(env.behavior_specs):
            if behavior not in self._acted:
                self._act_neutral(env, behavior)
        self._acted.clear()
        _failing_as_simulator_error(env.step)

    def _act_neutral(self, env, behavior: str) -> None:
        """Neutral actions for the deciding agents of a behavior nobody drove this step, where a
        mask forbids some (without one, mlagents-envs' empty action is the same: zeros)."""
        decision, _ = env.get_steps(behavior)
        if len(decision) and decision.action_mask is not None:
            actions = env.behavior_specs[behavior].action_spec  # not its Layout: it may have a BufferSensor
            env.set_actions(behavior, neutral_actions(int(actions.continuous_size), tuple(actions.discrete_branches),
                                                      decision.action_mask, len(decision)))

    def expect(self, episodes: int) -> None:
        """A game's agents cannot rest: nothing to do."""

    def take_game_stats(self) -> dict[str, list[GameStat]]:
        """What the game sent on the Stats side channel since the last call (mlagents-envs keeps
        it in the bridge's StatsSideChannel, which outlives a relaunch of the game)."""
        return {key: [GameStat(float(value), Aggregation(method.value)) for value, method in values]
                for key, values in self.bridge.stats.get_and_reset_stats().items()}

    def capture(self, behavior: str, agent: int) -> None:
        """Ask the game for a picture of the agent; it comes with the next step's reply."""
        self._frames().request(behavior, agent)

    def take_frames(self) -> Frames:
        channel = self._frames()
        if channel.announcement is None:
            raise FramesUnavailable(NO_FRAMES)
        return Frames(channel.take(), channel.announcement.fps)

    def _frames(self):
        """The bridge's Frames channel (frames.py)."""
        if self.bridge.frames is None:
            raise FramesUnavailable("this bridge was made without its Frames channel (frames=False): make it with "
                                    "frames=True to take pictures of agents")
        return self.bridge.frames

    def close(self) -> None:
        self._layouts.clear()
        self.bridge.close()

    def kill(self) -> None:
        """Stop the game now, without the closing handshake (signal handlers, lost hosts)."""
        self.bridge.kill()

    @property
    def process_pid(self) -> int | None:
        return self.bridge.process_pid


def _failing_as_simulator_error(call) -> None:
    try:
        call()
    except _FAILURES as error:
        raise SimulatorError(one_line(error)) from error
    except UnityObservationException as error:
        # The game's observations do not read as their spec says: relaunching cannot help.
        raise EnvironmentMismatch(f"{one_line(error)}: the game's observations do not fit its behavior spec (a "
                                  f"camera of com.unity.ml-agents 3.x sends PNGs as (channels, height, width), which "
                                  f"mlagents-envs 0.28 cannot decode: set the sensor's compression to None, or use "
                                  f"com.unity.ml-agents 2.x)") from error


def _flat(observations: list, n: int) -> np.ndarray:
    """The sensors' observations of `n` agents side by side, one row per agent, each sensor's
    values (a camera's (height, width, channels)) flattened in C order."""
    flat = [o.reshape(n, int(np.prod(o.shape[1:]))) for o in observations]
    return flat[0] if len(flat) == 1 else np.concatenate(flat, axis=1)


def layout_of(behavior: str, spec) -> Layout:
    """A behavior's Layout from its BehaviorSpec: every sensor of fixed size, vector or visual (a
    camera's, render texture's or grid sensor's image), with its shape; variable-length observations
    (a BufferSensor's), which no fixed network input can take, are refused with the reason."""
    sensors = []
    for observation in spec.observation_specs:
        shape = tuple(int(d) for d in observation.shape)
        dimensions = tuple(observation.dimension_property)
        if DimensionProperty.VARIABLE_SIZE in dimensions:
            raise EnvironmentMismatch(f"behavior {behavior!r} has a variable-length observation {shape} (a "
                                      f"BufferSensor, up to {shape[0]} entities of {shape[-1]} values): neatpar's "
                                      f"networks take observations of fixed size only; remove the BufferSensor "
                                      f"or give the agent a fixed number of entity slots (a vector sensor)")
        channels_first = len(shape) == 3 and dimensions == _CHANNELS_FIRST
        sensors.append(Sensor(shape, visual=len(shape) == 3, channels_first=channels_first))
    actions = spec.action_spec
    branches = tuple(int(b) for b in actions.discrete_branches)
    return Layout.of_sensors(tuple(sensors), int(actions.continuous_size), branches)


# A visual sensor of com.unity.ml-agents 3.x: (channels, height, width).
_CHANNELS_FIRST = (DimensionProperty.NONE, DimensionProperty.TRANSLATIONAL_EQUIVARIANCE,
                   DimensionProperty.TRANSLATIONAL_EQUIVARIANCE)


def outputs_to_actions(layout: Layout, outputs: np.ndarray, mask) -> ActionTuple:
    """Continuous outputs clipped to [-1, 1]; per discrete branch, the argmax over allowed actions
    (a branch whose actions are all forbidden takes action 0)."""
    c = layout.continuous
    continuous = np.clip(outputs[:, :c], -1.0, 1.0).astype(np.float32)
    discrete = np.zeros((len(outputs), len(layout.branches)), dtype=np.int32)
    start = c
    for b, size in enumerate(layout.branches):
        scores = outputs[:, start:start + size].copy()
        if mask is not None:
            forbidden = np.asarray(mask[b], dtype=bool)
            scores[forbidden] = -np.inf
            scores[forbidden.all(axis=1)] = 0.0
        discrete[:, b] = np.argmax(scores, axis=1)
        start += size
    return ActionTuple(continuous=continuous if c else None, discrete=discrete if layout.branches else None)


def neutral_actions(continuous: int, branches: tuple[int, ...], mask, agents: int) -> ActionTuple:
    """What an agent nobody drives does: continuous zeros; per discrete branch, the first action
    its mask allows (action 0 without a mask, or when the mask forbids every action of the branch)."""
    discrete = np.zeros((agents, len(branches)), dtype=np.int32)
    if mask is not None:
        for b in range(len(branches)):
            discrete[:, b] = np.argmax(~np.asarray(mask[b], dtype=bool), axis=1)
    return ActionTuple(continuous=np.zeros((agents, continuous), np.float32) if continuous else None,
                       discrete=discrete if branches else None)
