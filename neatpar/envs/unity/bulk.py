"""The two per-step conversions of the ML-Agents wire, in bulk: the game's reply (the bytes of a
UnityMessageProto) read into mlagents-envs' DecisionSteps and TerminalSteps, and the step input
written from the action arrays, both in C (`_wire.c`) instead of one protobuf object per agent.

The results equal mlagents-envs 0.28's own (`UnityEnvironment._update_behavior_specs`,
`_update_state` with `rpc_utils.steps_from_proto`, `_generate_step_input`): same values, dtypes,
shapes, agent order and errors. Visual (rank 3) observations are decoded from the agents'
ObservationProtos by pixels.py (as mlagents-envs' _process_maybe_compressed_observation, PNGs in
C), in mlagents-envs' order among the other observations' checks. What the C reader does not cover
is read by mlagents-envs' own code, and `DecodedOutput.fallbacks` says which behaviors and why:
- a behavior with more than 256 observations;
- a behavior whose agents do not match its spec (fewer observations, another number of values),
  where mlagents-envs raises or reshapes its own way;
- bytes outside the form protobuf writers give these messages (an unknown field, a field given
  twice, an unpacked repeated scalar, malformed or non-UTF-8 data): the behavior, or the whole
  message when the irregularity is outside the agent lists, is parsed by protobuf first.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Mapping, NamedTuple, Optional

import numpy as np
from mlagents_envs.base_env import ActionTuple, BehaviorSpec, DecisionSteps, TerminalSteps
from mlagents_envs.communicator_objects.unity_message_pb2 import UnityMessageProto
from mlagents_envs.communicator_objects.unity_output_pb2 import UnityOutputProto
from mlagents_envs.communicator_objects.unity_rl_output_pb2 import UnityRLOutputProto
from mlagents_envs.rpc_utils import (
    _generate_split_indices,
    _raise_on_nan_and_inf,
    behavior_spec_from_proto,
    steps_from_proto,
)

from . import _wire, pixels

Steps = tuple[DecisionSteps, TerminalSteps]
STATUS_OK = 200
# The checks steps_from_proto makes on its float arrays, in its order (see _wire.fill).
_REWARD_SOURCES = ("rewards", "rewards", "group_rewards", "group_rewards")


@dataclass(frozen=True)
class DecodedOutput:
    """What UnityEnvironment takes from one reply of the game.

    status: the header's status; anything but 200 means the game stopped, and nothing else is read.
    new_specs: the specs the reply announces, to apply in order (`specs.update(new_specs)`).
    states: (DecisionSteps, TerminalSteps) of every behavior of the updated specs, in their order.
    side_channel: the side-channel bytes for SideChannelManager.process_side_channel_message.
    fallbacks: the behaviors read by mlagents-envs' own steps_from_proto, with the reason.
    """
    status: int
    new_specs: dict[str, BehaviorSpec] = field(default_factory=dict)
    states: dict[str, Steps] = field(default_factory=dict)
    side_channel: bytes = b""
    fallbacks: dict[str, str] = field(default_factory=dict)


def decode_output(data: bytes, specs: Mapping[str, BehaviorSpec]) -> DecodedOutput:
    """Read the game's reply (UnityMessageProto bytes, as gRPC delivers them) for behaviors `specs`."""
    index = _wire.index(data)
    if isinstance(index, str):
        return _decode_parsed(UnityMessageProto.FromString(data), specs, f"message: {index}")
    status, has_initialization, side_channel, entries = index
    if status != STATUS_OK:
        return DecodedOutput(status)
    ranges = {name: (start, end) for name, start, end in entries}
    new_specs: dict[str, BehaviorSpec] = {}
    if has_initialization:
        # Rare (a behavior's first message): protobuf reads the brain parameters, and like
        # mlagents-envs' lookups it adds an (empty) agent list for each announced behavior.
        output = UnityMessageProto.FromString(data).unity_output
        new_specs = announced_specs(output)
        ranges = {name: ranges.get(name, (0, 0)) for name in output.rl_output.agentInfos}
    states, fallbacks = {}, {}
    for name, spec in {**specs, **new_specs}.items():
        if name not in ranges:
            states[name] = (DecisionSteps.empty(spec), TerminalSteps.empty(spec))
            continue
        states[name], reason = steps_from_bytes(data, *ranges[name], spec)
        if reason is not None:
            fallbacks[name] = reason
    return DecodedOutput(status, new_specs, states, side_channel, fallbacks)


def announced_specs(output: UnityOutputProto) -> dict[str, BehaviorSpec]:
    """The behavior specs a parsed reply announces: UnityEnvironment._update_behavior_specs's rule
    (each brain parameter with at least one agent, specs from its first agent's observations)."""
    specs = {}
    for brain in output.rl_initialization_output.brain_parameters:
        agents = output.rl_output.agentInfos[brain.brain_name]
        if agents.value:
            specs[brain.brain_name] = behavior_spec_from_proto(brain, agents.value[0])
    return specs


def _decode_parsed(message: UnityMessageProto, specs: Mapping[str, BehaviorSpec], reason: str) -> DecodedOutput:
    """The whole reply read by mlagents-envs' own code (for bytes the C reader leaves alone)."""
    if message.header.status != STATUS_OK:
        return DecodedOutput(message.header.status)
    output = message.unity_output
    new_specs = announced_specs(output)
    agent_infos = output.rl_output.agentInfos
    states, fallbacks = {}, {}
    for name, spec in {**specs, **new_specs}.items():
        if name in agent_infos:
            states[name] = steps_from_proto(agent_infos[name].value, spec)
            fallbacks[name] = reason
        else:
            states[name] = (DecisionSteps.empty(spec), TerminalSteps.empty(spec))
    return DecodedOutput(message.header.status, new_specs, states, output.rl_output.side_channel, fallbacks)


def bulk_refusal(spec: BehaviorSpec) -> Optional[str]:
    """Why the C reader leaves a behavior with this spec to mlagents-envs, or None."""
    if len(spec.observation_specs) > _wire.MAX_OBSERVATIONS:
        return f"{len(spec.observation_specs)} observations (the bulk reader takes {_wire.MAX_OBSERVATIONS})"
    return None


def _is_visual(observation) -> bool:
    return len(observation.shape) == 3  # steps_from_proto's rule


def steps_from_bytes(data: bytes, start: int, end: int, spec: BehaviorSpec) -> tuple[Steps, Optional[str]]:
    """steps_from_proto for the ListAgentInfoProto in data[start:end]; also the reason when it was
    mlagents-envs' own code that read it (else None). The C reader leaves visual observations out
    (size -1): pixels.py decodes them."""
    sizes = tuple(-1 if _is_visual(o) else math.prod(o.shape) for o in spec.observation_specs)
    reason = bulk_refusal(spec)
    counts = _wire.count(data, start, end, sizes) if reason is None else reason
    if isinstance(counts, str):
        agents = UnityRLOutputProto.ListAgentInfoProto.FromString(bytes(data[start:end])).value
        return steps_from_proto(agents, spec), counts
    return _read_agents(data, start, end, spec, sizes, *counts), None


class _Arrays(NamedTuple):
    """The arrays of one side (decision or terminal) of a behavior's steps, in _wire.fill's order."""
    reward: np.ndarray
    agent_id: np.ndarray
    group_id: np.ndarray
    group_reward: np.ndarray
    flags: np.ndarray  # decision: the action mask (agents x mask size); terminal: interrupted
    obs: list[np.ndarray]

    @classmethod
    def empty(cls, agents: int, flag_shape: tuple, shapes: list[tuple]) -> "_Arrays":
        return cls(np.empty(agents, np.float32), np.empty(agents, np.int32), np.empty(agents, np.int32),
                   np.empty(agents, np.float32), np.empty(flag_shape, np.bool_),
                   [np.empty((agents,) + shape, np.float32) for shape in shapes])

    def buffers(self) -> list[np.ndarray]:
        return [self.reward, self.agent_id, self.group_id, self.group_reward, self.flags, *self.obs]


def _read_agents(data, start: int, end: int, spec: BehaviorSpec, sizes: tuple, decision: int,
                 terminal: int) -> Steps:
    shapes = [(0,) if size < 0 else tuple(o.shape) for o, size in zip(spec.observation_specs, sizes)]
    branches = spec.action_spec.discrete_branches
    # steps_from_proto makes masks for discrete actions whenever some agent requests a decision.
    masked = spec.action_spec.discrete_size > 0 and decision > 0
    mask_size = sum(branches) if masked else 0
    d = _Arrays.empty(decision, (decision, mask_size), shapes)
    t = _Arrays.empty(terminal, (terminal,), shapes)
    unsafe = set(_wire.fill(data, start, end, sizes, mask_size, d.buffers(), t.buffers()))
    _check_in_order(data, start, end, spec, sizes, unsafe, d, t)
    mask = np.split(d.flags, _generate_split_indices(branches), axis=1) if masked else None
    return (DecisionSteps(d.obs, d.reward, d.agent_id, mask, d.group_id.tolist(), d.group_reward),
            TerminalSteps(t.obs, t.reward, t.flags, t.agent_id, t.group_id.tolist(), t.group_reward))


def _check_in_order(data, start: int, end: int, spec: BehaviorSpec, sizes: tuple, unsafe: set,
                    d: _Arrays, t: _Arrays) -> None:
    """steps_from_proto's checks and visual decodes in its order (observation by observation,
    decision agents then terminal ones; then rewards and group rewards): the first to raise is
    the error mlagents-envs would raise. Visual observations are decoded into d.obs and t.obs."""
    if not unsafe and min(sizes, default=0) >= 0:
        return
    checked = [a for pair in zip(d.obs, t.obs) for a in pair] + [d.reward, t.reward, d.group_reward, t.group_reward]
    sources = ["observations"] * (2 * len(sizes)) + list(_REWARD_SOURCES)
    sides = None
    for position in range(len(checked)):
        index = position // 2
        if position < 2 * len(sizes) and sizes[index] < 0:
            if sides is None:  # the agents' protos, once, only for behaviors with visual observations
                agents = UnityRLOutputProto.ListAgentInfoProto.FromString(bytes(data[start:end])).value
                sides = ([a for a in agents if not a.done], [a for a in agents if a.done])
            target = d.obs if position % 2 == 0 else t.obs
            target[index] = pixels.visual_observations(index, spec.observation_specs[index], sides[position % 2])
        elif position in unsafe:
            _raise_on_nan_and_inf(checked[position], sources[position])


# ------------------------------------------------------------------ encode


def encode_step(actions: Mapping[str, ActionTuple], agent_counts: Mapping[str, int],
                side_channel: bytes = b"") -> bytes:
    """The bytes of the UnityMessageProto mlagents-envs sends for env.step(): header status 200,
    the STEP command and, for each behavior with agents, one AgentActionProto per agent from the
    first agent_counts[name] rows of its actions (as `_generate_step_input` builds them, which
    UnityEnvironment wraps with status 200). Behaviors are written in the order of protobuf's
    deterministic serialization; the default one orders them by a per-process hash, and the game
    reads either the same."""
    entries = []
    for name, action in actions.items():
        if name not in agent_counts:
            raise ValueError(f"actions for behavior {name!r}, which has no agent count: pass the number of "
                             f"agents that requested a decision for every behavior in agent_counts")
        n = agent_counts[name]
        if n == 0:
            continue
        continuous = _action_rows(action.continuous, np.float32, n, name, "continuous")
        discrete = _action_rows(action.discrete, np.int32, n, name, "discrete")
        entries.append((name, n, continuous, continuous.shape[1], discrete, discrete.shape[1]))
    entries.sort(key=lambda entry: _deterministic_order(entry[0]))
    return _wire.write_step(entries, side_channel)


def _action_rows(values: Optional[np.ndarray], dtype, n: int, name: str, kind: str) -> np.ndarray:
    """The first n rows of an action array, C-contiguous; None is no actions of this kind."""
    if values is None:
        return np.zeros((n, 0), dtype)
    if not isinstance(values, np.ndarray) or values.dtype != dtype or values.ndim != 2 or len(values) < n:
        shape = getattr(values, "shape", None)
        raise ValueError(f"{kind} actions of behavior {name!r} must be a 2-D {np.dtype(dtype).name} array with "
                         f"{n} rows (got {type(values).__name__} {getattr(values, 'dtype', '')} {shape}); "
                         f"build them with mlagents_envs.base_env.ActionTuple")
    return np.ascontiguousarray(values[:n])


def _deterministic_order(name: str) -> tuple:
    """Sort key of protobuf's (upb's) deterministic map order: byte order, where a name that is a
    prefix of another comes after it."""
    return (*name.encode(), 256)
