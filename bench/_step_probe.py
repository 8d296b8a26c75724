"""Run inside one environment (fast or stock): times env.step() of the ball simulator and the
simulator's own compute per step (from its log); prints one JSON line. Used by bench_wire.py."""
import json
import os
import re
import statistics
import sys
import tempfile
import time

import numpy as np
from mlagents_envs.base_env import ActionTuple
from mlagents_envs.environment import UnityEnvironment

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main(agents: int, steps: int, worker_id: int) -> None:
    logs = tempfile.mkdtemp(prefix="neatpar-bench-")
    env = UnityEnvironment(os.path.join(ROOT, "unity_builds", "ball"), worker_id=worker_id, no_graphics=True,
                           additional_args=["--agents", str(agents), "--max-steps", "100000"], log_folder=logs)
    try:
        env.reset()
        name = list(env.behavior_specs)[0]
        times = []
        for step in range(steps + 20):
            decision, _ = env.get_steps(name)
            env.set_actions(name, ActionTuple(continuous=np.zeros((len(decision), 2), np.float32)))
            start = time.perf_counter()
            env.step()
            if step >= 20:
                times.append(time.perf_counter() - start)
    finally:
        env.close()
    log = open(os.path.join(logs, f"Player-{worker_id}.log")).read()
    compute = [float(x) for x in re.findall(r"compute_ms ([0-9.]+)", log)][-steps:]
    from google.protobuf.internal import api_implementation
    print(json.dumps({"agents": agents, "step_ms": statistics.median(times) * 1e3,
                      "sim_ms": statistics.median(compute), "backend": api_implementation.Type()}))


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]))
