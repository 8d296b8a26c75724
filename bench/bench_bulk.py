"""Benchmark: the Python side of a step, mlagents-envs' conversion against the bulk path
(neatpar.envs.unity.bulk: decode + encode), next to the cost of a real simulator step.

For each agent count, the ball simulator is stepped by two environments, each with its own
simulator: the stock UnityEnvironment, and the same with its step's conversions replaced by the
bulk path (`BulkEnvironment.step`). Both talk to the game through one communicator that hands the
raw gRPC bytes between gRPC's thread and the main thread (as neatpar's does), noting when each
message passes. In the stock run, both conversions are also timed after each step on the reply
just received and the step's actions. Per step, medians:
- simulator: the build's own compute (from its -logFile); Python side: the rest of env.step();
- mlagents conversion: protobuf parse (gRPC's deserializer), _update_behavior_specs and
  _update_state, then _generate_step_input, the status-200 wrapping and serialization;
- bulk: decode_output + encode_step on the same bytes and actions;
- where the bulk step's Python side goes: before sending (actions, encode), the hand-over to
  gRPC's thread, the gRPC round trip beyond the simulator's compute (transport and the game's
  gRPC client), the hand-over back, after receiving (decode, bookkeeping).
Usage: python bench/bench_bulk.py [--steps N]
"""
import argparse
import os
import queue
import re
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

import grpc
import numpy as np
from mlagents_envs.base_env import ActionTuple
from mlagents_envs.communicator import Communicator
from mlagents_envs.communicator_objects.unity_message_pb2 import UnityMessageProto
from mlagents_envs.environment import UnityEnvironment
from mlagents_envs.exception import UnityCommunicatorStoppedException
from mlagents_envs.side_channel.side_channel_manager import SideChannelManager

from neatpar.envs.unity import bulk

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BEHAVIOR = "Ball3D?team=0"
AGENTS = (1, 16, 64, 256, 1024)
WARM_UP = 20


class RawCommunicator(Communicator):
    """mlagents-envs' Communicator on a gRPC server that passes the raw message bytes between
    gRPC's thread and the main thread through queues. Keeps the game's latest reply and when the
    latest exchange's messages passed: reply queued (sent), reply handed to gRPC (out), next
    request from gRPC (arrived), request taken by the main thread (taken)."""

    def __init__(self, worker_id, base_port, timeout_wait):
        super().__init__(worker_id, base_port)
        self.timeout_wait = timeout_wait
        self.reply, self.marks = b"", {}
        self.requests, self.replies = queue.Queue(), queue.Queue()
        handler = grpc.unary_unary_rpc_method_handler(self._exchange)
        self.server = grpc.server(ThreadPoolExecutor(max_workers=2))
        self.server.add_generic_rpc_handlers([grpc.method_handlers_generic_handler(
            "communicator_objects.UnityToExternalProto", {"Exchange": handler, "Initialize": handler})])
        self.server.add_insecure_port(f"127.0.0.1:{base_port + worker_id}")
        self.server.start()

    def _exchange(self, request, context):
        self.marks["arrived"] = time.perf_counter()
        self.requests.put(request)
        reply = self.replies.get()
        self.marks["out"] = time.perf_counter()
        return reply

    def _receive(self):
        self.reply = self.requests.get(timeout=self.timeout_wait)
        self.marks["taken"] = time.perf_counter()
        return UnityMessageProto.FromString(self.reply)

    def _send(self, inputs, status=200):
        message = UnityMessageProto()
        message.header.status = status
        if inputs is not None:
            message.unity_input.CopyFrom(inputs)
        data = message.SerializeToString()
        self.marks["sent"] = time.perf_counter()
        self.replies.put(data)

    def initialize(self, inputs, poll_callback=None):
        first = self._receive().unity_output
        self._send(inputs)
        self._receive()
        return first

    def exchange(self, inputs, poll_callback=None):
        self._send(inputs)
        output = self._receive()
        return output.unity_output if output.header.status == 200 else None

    def exchange_bytes(self, data: bytes) -> bytes:
        """Sends a message's bytes, returns the game's reply's bytes."""
        self.marks["sent"] = time.perf_counter()
        self.replies.put(data)
        self.reply = self.requests.get(timeout=self.timeout_wait)
        self.marks["taken"] = time.perf_counter()
        return self.reply

    def close(self):
        self._send(None, status=400)
        self.server.stop(1.0)


class RawEnvironment(UnityEnvironment):
    @staticmethod
    def _get_communicator(worker_id, base_port, timeout_wait):
        return RawCommunicator(worker_id, base_port, timeout_wait)


class BulkEnvironment(RawEnvironment):
    """UnityEnvironment.step with the bulk conversions in place of mlagents-envs' own."""

    def step(self) -> None:
        if self._is_first_message:
            return self.reset()
        for name, spec in self._env_specs.items():
            if name not in self._env_actions:
                n = len(self._env_state[name][0]) if name in self._env_state else 0
                self._env_actions[name] = spec.action_spec.empty_action(n)
        counts = {name: len(self._env_state[name][0]) for name in self._env_actions}
        side_channel = bytes(self._side_channel_manager.generate_side_channel_messages())
        data = self._communicator.exchange_bytes(bulk.encode_step(self._env_actions, counts, side_channel))
        decoded = bulk.decode_output(data, self._env_specs)
        if decoded.status != 200:
            raise UnityCommunicatorStoppedException("Communicator has exited.")
        self._env_specs.update(decoded.new_specs)
        self._env_state.update(decoded.states)
        self._side_channel_manager.process_side_channel_message(decoded.side_channel)
        self._env_actions.clear()


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
    """The bulk path's: decode the reply, encode the input."""
    def convert(data, action):
        decoded = bulk.decode_output(data, specs)
        counts = {name: len(steps[0]) for name, steps in decoded.states.items()}
        return bulk.encode_step({BEHAVIOR: action}, counts, b"")
    return convert


def run_simulator(environment, agents: int, steps: int, worker_id: int, conversions: bool) -> dict:
    """Steps the ball build with `environment` (a class); per-step medians (ms) of the step, its
    parts and (with `conversions`) both conversions timed on its replies; and the reply size."""
    with tempfile.TemporaryDirectory(prefix="neatpar-bench-bulk-") as logs:
        times, size = step_simulator(environment, agents, steps, worker_id, conversions, logs)
        with open(os.path.join(logs, f"Player-{worker_id}.log")) as f:
            compute = [float(x) for x in re.findall(r"compute_ms ([0-9.]+)", f.read())][-steps:]
    medians = {name: statistics.median(values[WARM_UP:]) * 1e3 for name, values in times.items() if values}
    return {**medians, "simulator": statistics.median(compute), "bytes": size}


def step_simulator(environment, agents: int, steps: int, worker_id: int, conversions: bool, logs: str):
    """The per-step times of run_simulator, and the last reply's size."""
    env = environment(os.path.join(ROOT, "unity_builds", "ball"), worker_id=worker_id, no_graphics=True,
                      additional_args=["--agents", str(agents), "--max-steps", "100000"], log_folder=logs)
    rng = np.random.default_rng(0)
    times = {key: [] for key in ("step", "before sending", "hand-over out", "round trip", "hand-over back",
                                 "after receiving", "mlagents", "bulk")}
    try:
        env.reset()
        specs = dict(env.behavior_specs)
        converters = {"mlagents": mlagents_conversion(specs), "bulk": bulk_conversion(specs)} if conversions else {}
        marks = env._communicator.marks
        for _ in range(steps + WARM_UP):
            n = len(env.get_steps(BEHAVIOR)[0])
            action = ActionTuple(continuous=rng.uniform(-1, 1, (n, 2)).astype(np.float32))
            env.set_actions(BEHAVIOR, action)
            start = time.perf_counter()
            env.step()
            end = time.perf_counter()
            for key, (first, last) in {"step": (start, end), "before sending": (start, marks["sent"]),
                                       "hand-over out": (marks["sent"], marks["out"]),
                                       "round trip": (marks["out"], marks["arrived"]),
                                       "hand-over back": (marks["arrived"], marks["taken"]),
                                       "after receiving": (marks["taken"], end)}.items():
                times[key].append(last - first)
            for name, convert in converters.items():
                started = time.perf_counter()
                convert(env._communicator.reply, action)
                times[name].append(time.perf_counter() - started)
        return times, len(env._communicator.reply)
    finally:
        env.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200)
    args = parser.parse_args()
    rng = np.random.default_rng()
    bulk_runs = {}
    print("Python side of a step of the ball simulator (medians, ms per step)\n")
    print("| agents | reply bytes | mlagents conversion | bulk decode + encode | conversion ratio "
          "| stock: simulator | stock: Python side | bulk: simulator | bulk: Python side | Python-side ratio "
          "| bulk: Python side / simulator |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for agents in AGENTS:
        stock = run_simulator(RawEnvironment, agents, args.steps, int(rng.integers(2000, 4000)), True)
        fast = bulk_runs[agents] = run_simulator(BulkEnvironment, agents, args.steps, int(rng.integers(4000, 6000)),
                                                 False)
        stock_side, fast_side = stock["step"] - stock["simulator"], fast["step"] - fast["simulator"]
        print(f"| {agents} | {stock['bytes']:,} | {stock['mlagents']:.3f} | {stock['bulk']:.3f} | "
              f"{stock['mlagents'] / stock['bulk']:.0f}x | {stock['simulator']:.2f} | {stock_side:.2f} | "
              f"{fast['simulator']:.2f} | {fast_side:.2f} | {stock_side / fast_side:.1f}x | "
              f"{fast_side / fast['simulator']:.2f} |")
        sys.stdout.flush()
    print("\nWhere the bulk step's Python side goes (medians, ms per step)\n")
    print("| agents | before sending (actions, encode) | hand-over to gRPC | gRPC round trip beyond the simulator "
          "| hand-over back | after receiving (decode, bookkeeping) |")
    print("|---|---|---|---|---|---|")
    for agents, run in bulk_runs.items():
        print(f"| {agents} | {run['before sending']:.3f} | {run['hand-over out']:.3f} | "
              f"{run['round trip'] - run['simulator']:.2f} | {run['hand-over back']:.3f} | "
              f"{run['after receiving']:.3f} |")


if __name__ == "__main__":
    main()
