"""Run inside one environment (fast or stock): times env.step() of the ball simulator and the
simulator's own compute per step (from its log); prints one JSON line. Used by bench_wire.py.

usage: _step_probe.py AGENTS STEPS WORKER_ID [plain|bulk|mlagents]
plain: mlagents-envs' UnityEnvironment as it comes (the only mode of the stock stack); bulk and
mlagents: neatpar's bridge (its communicator) with the bulk step codec or mlagents-envs' own.
"""
import json
import os
import re
import statistics
import sys
import tempfile
import time

import numpy as np
from mlagents_envs.base_env import ActionTuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BALL = os.path.join(ROOT, "unity_builds", "ball")
WARM_UP = 20


def open_environment(build: str, mode: str, args: list, worker_id: int, logs: str):
    """The environment of `build` (a path) to time and a function that closes it."""
    if mode == "plain":
        from mlagents_envs.environment import UnityEnvironment
        env = UnityEnvironment(build, worker_id=worker_id, no_graphics=True, additional_args=args, log_folder=logs)
        return env, env.close
    from neatpar.envs.unity.bridge import SimulatorBridge
    bridge = SimulatorBridge(build, args=args, log_folder=logs, worker_id=worker_id, bulk=mode == "bulk")
    return bridge.env, bridge.close


def simulator_ms(logs: str, worker_id: int, steps: int) -> float:
    """The median of the simulator's own compute over its last `steps` steps, from its log."""
    log = open(os.path.join(logs, f"Player-{worker_id}.log")).read()
    return statistics.median([float(x) for x in re.findall(r"compute_ms ([0-9.]+)", log)][-steps:])


def protobuf_backend() -> str:
    """Which protobuf implementation this process runs."""
    from google.protobuf.internal import api_implementation
    return api_implementation.Type()


def main(agents: int, steps: int, worker_id: int, mode: str) -> None:
    logs = tempfile.mkdtemp(prefix="neatpar-bench-")
    env, close = open_environment(BALL, mode, ["--agents", str(agents), "--max-steps", "100000"], worker_id, logs)
    try:
        env.reset()
        name = list(env.behavior_specs)[0]
        times = []
        for step in range(steps + WARM_UP):
            decision, _ = env.get_steps(name)
            env.set_actions(name, ActionTuple(continuous=np.zeros((len(decision), 2), np.float32)))
            start = time.perf_counter()
            env.step()
            if step >= WARM_UP:
                times.append(time.perf_counter() - start)
        worker_id = getattr(env, "_worker_id", worker_id)
    finally:
        close()
    print(json.dumps({"agents": agents, "mode": mode, "step_ms": statistics.median(times) * 1e3,
                      "sim_ms": simulator_ms(logs, worker_id, steps), "backend": protobuf_backend()}))


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] if len(sys.argv) > 4 else "plain")
