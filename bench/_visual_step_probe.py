"""Run inside one environment (fast or stock): times env.step() plus get_steps() on the camera
simulator and the simulator's own compute per step (from its log); prints one JSON line. Used by
bench_visual.py.

usage: _visual_step_probe.py AGENTS STEPS WORKER_ID plain|bulk|mlagents [SIMULATOR ARGS...]
plain: mlagents-envs' UnityEnvironment as it comes (the only mode of the stock stack); bulk and
mlagents: neatpar's bridge (its communicator) with the bulk step codec or mlagents-envs' own.
"""
import json
import os
import statistics
import sys
import tempfile
import time

import numpy as np
from mlagents_envs.base_env import ActionTuple

from _step_probe import open_environment, protobuf_backend, simulator_ms

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CAMERA = os.path.join(ROOT, "unity_builds", "camera")
WARM_UP = 5


def main(agents: int, steps: int, worker_id: int, mode: str, extra: list) -> None:
    logs = tempfile.mkdtemp(prefix="neatpar-bench-")
    env, close = open_environment(CAMERA, mode, ["--agents", str(agents), "--max-steps", "100000"] + extra, worker_id, logs)
    rng = np.random.default_rng(0)
    try:
        env.reset()
        name = list(env.behavior_specs)[0]
        times = []
        decision, _ = env.get_steps(name)
        shape = decision.obs[0].shape
        for step in range(steps + WARM_UP):
            env.set_actions(name, ActionTuple(continuous=rng.uniform(-1, 1, (len(decision), 2)).astype(np.float32)))
            start = time.perf_counter()
            env.step()
            decision, _ = env.get_steps(name)
            if step >= WARM_UP:
                times.append(time.perf_counter() - start)
        worker_id = getattr(env, "_worker_id", worker_id)
    finally:
        close()
    print(json.dumps({"agents": agents, "mode": mode, "step_ms": statistics.median(times) * 1e3,
                      "sim_ms": simulator_ms(logs, worker_id, steps), "backend": protobuf_backend(),
                      "shape": list(shape)}))


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5:])
