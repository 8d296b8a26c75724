"""Benchmark: where the Python side of a step goes on the bulk path, and the two conversions side
by side (mlagents-envs' own against the bulk codec, neatpar.envs.unity.bulk).

For each agent count, the ball simulator is stepped through neatpar's bridge environment with the
bulk codec, its communicator noting when each message passes. After each step, both conversions
are also timed on the reply just received and the step's actions. Per step, medians:
- simulator: the build's own compute (from its -logFile); Python side: the rest of env.step();
- mlagents conversion: protobuf parse, _update_behavior_specs and _update_state, then
  _generate_step_input, the status-200 wrapping and serialization;
- bulk: decode_output + encode_step on the same bytes and actions;
- the Python side in parts: before sending (blank actions, encode), the hand-over to gRPC's thread,
  the gRPC round trip beyond the simulator's compute (transport, gRPC's own threads and the game's
  gRPC client), the hand-over back, after receiving (decode, bookkeeping).
Usage: python bench/bench_bulk.py [--steps N]
"""
import argparse
import os
import re
import statistics
import sys
import tempfile
import time

import numpy as np
from mlagents_envs.base_env import ActionTuple
from mlagents_envs.communicator_objects.unity_message_pb2 import UnityMessageProto
from mlagents_envs.environment import UnityEnvironment
from mlagents_envs.side_channel.side_channel_manager import SideChannelManager

from neatpar.envs.unity import bulk
from neatpar.envs.unity.bridge import _BridgeEnvironment
from neatpar.envs.unity.communicator import LocalCommunicator, _HandOver

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BEHAVIOR = "Ball3D?team=0"
AGENTS = (1, 16, 64, 256, 1024)
WARM_UP = 20
PARTS = ("before sending", "hand-over out", "round trip", "hand-over back", "after receiving")


class MarkingHandOver(_HandOver):
    """The hand-over, noting when the latest request arrived from gRPC and the reply left to it."""

    def __init__(self):
        super().__init__()
        self.marks = {}

    def exchange(self, request, context):
        self.marks["arrived"] = time.perf_counter()
        reply = super().exchange(request, context)
        self.marks["out"] = time.perf_counter()
        return reply


class MarkingCommunicator(LocalCommunicator):
    """neatpar's communicator, noting when the step's message was handed over (sent) and the
    reply taken by the main thread (taken), and keeping the reply."""

    hand_over_class = MarkingHandOver

    def exchange_bytes(self, message, poll_callback=None):
        self.hand_over.marks["sent"] = time.perf_counter()
        self.reply = super().exchange_bytes(message, poll_callback)
        self.hand_over.marks["taken"] = time.perf_counter()
        return self.reply


class MarkingEnvironment(_BridgeEnvironment):
    @staticmethod
    def _get_communicator(worker_id, base_port, timeout_wait):
        return MarkingCommunicator(worker_id, base_port, timeout_wait)


def mlagents_conversion(specs):
    """mlagents-envs' conversions of a step: parse and read the reply, write and serialize the input."""
    env = UnityEnvironment.__new__(UnityEnvironment)
    env._env_specs, env._env_state, env._side_channel_manager = dict(specs), {}, SideChannelManager([])

    def convert(data, action):
        message = UnityMessageProto.FromString(data)
        env._update_behavior_specs(message.unity_output)
        env._update_state(message.unity_output.rl_output)
        reply = UnityMessageProto()
        reply.header.status = 200
        reply.unity_input.CopyFrom(env._generate_step_input({BEHAVIOR: action}))
        return reply.SerializeToString()
    return convert


def bulk_conversion(specs):
    """The bulk codec's: decode the reply, encode the input."""
    def convert(data, action):
        decoded = bulk.decode_output(data, specs)
        counts = {name: len(steps[0]) for name, steps in decoded.states.items()}
        return bulk.encode_step({BEHAVIOR: action}, counts, b"")
    return convert


def run_simulator(agents: int, steps: int, worker_id: int) -> dict:
    """Per-step medians (ms) of the step, its parts, both conversions and the simulator's compute;
    and the reply's size."""
    with tempfile.TemporaryDirectory(prefix="neatpar-bench-bulk-") as logs:
        env = MarkingEnvironment(os.path.join(ROOT, "unity_builds", "ball"), worker_id=worker_id, no_graphics=True,
                                 additional_args=["--agents", str(agents), "--max-steps", "100000"], log_folder=logs)
        try:
            times, size = step_simulator(env, steps)
        finally:
            env.close()
        with open(os.path.join(logs, f"Player-{worker_id}.log")) as f:
            compute = [float(x) for x in re.findall(r"compute_ms ([0-9.]+)", f.read())][-steps:]
    medians = {name: statistics.median(values[WARM_UP:]) * 1e3 for name, values in times.items()}
    return {**medians, "simulator": statistics.median(compute), "bytes": size}


def step_simulator(env, steps: int):
    """The per-step times of run_simulator, and the last reply's size."""
    rng = np.random.default_rng(0)
    times = {key: [] for key in ("step", *PARTS, "mlagents", "bulk")}
    env.reset()
    specs = dict(env.behavior_specs)
    converters = {"mlagents": mlagents_conversion(specs), "bulk": bulk_conversion(specs)}
    communicator = env._communicator
    marks = communicator.hand_over.marks
    for _ in range(steps + WARM_UP):
        n = len(env.get_steps(BEHAVIOR)[0])
        action = ActionTuple(continuous=rng.uniform(-1, 1, (n, 2)).astype(np.float32))
        env.set_actions(BEHAVIOR, action)
        start = time.perf_counter()
        env.step()
        end = time.perf_counter()
        spans = {"step": (start, end), "before sending": (start, marks["sent"]),
                 "hand-over out": (marks["sent"], marks["out"]), "round trip": (marks["out"], marks["arrived"]),
                 "hand-over back": (marks["arrived"], marks["taken"]), "after receiving": (marks["taken"], end)}
        for key, (first, last) in spans.items():
            times[key].append(last - first)
        for name, convert in converters.items():
            started = time.perf_counter()
            convert(communicator.reply, action)
            times[name].append(time.perf_counter() - started)
    return times, len(communicator.reply)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200)
    args = parser.parse_args()
    rng = np.random.default_rng()
    runs = {agents: run_simulator(agents, args.steps, int(rng.integers(2000, 6000))) for agents in AGENTS}
    print(f"load average before the last run: {os.getloadavg()[0]:.2f}\n")
    print("Conversions of one step's messages (medians, ms per step)\n")
    print("| agents | reply bytes | mlagents conversion | bulk decode + encode | ratio |")
    print("|---|---|---|---|---|")
    for agents, run in runs.items():
        print(f"| {agents} | {run['bytes']:,} | {run['mlagents']:.3f} | {run['bulk']:.3f} | "
              f"{run['mlagents'] / run['bulk']:.0f}x |")
    print("\nWhere the bulk step's Python side goes (medians, ms per step)\n")
    print("| agents | simulator | Python side | before sending (actions, encode) | hand-over to gRPC "
          "| gRPC round trip beyond the simulator | hand-over back | after receiving (decode, bookkeeping) |")
    print("|---|---|---|---|---|---|---|---|")
    for agents, run in runs.items():
        print(f"| {agents} | {run['simulator']:.2f} | {run['step'] - run['simulator']:.2f} | "
              f"{run['before sending']:.3f} | {run['hand-over out']:.3f} | {run['round trip'] - run['simulator']:.2f} | "
              f"{run['hand-over back']:.3f} | {run['after receiving']:.3f} |")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
