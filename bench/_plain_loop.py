"""Run on the stock stack (mlagents-envs 0.28.0, protobuf 3.20.3, neat-python): the loop a user
writes without neatpar, and the design seed's per-step pool. Prints one JSON line.

usage: _plain_loop.py plain|seed CONFIG GENOMES_PICKLE AGENTS MAX_STEPS WORKER_ID LOG_FOLDER
"""
import json
import multiprocessing
import os
import pickle
import re
import sys
import time

import neat
import numpy as np
from mlagents_envs.base_env import ActionTuple
from mlagents_envs.environment import UnityEnvironment

from neatpar.processes import cpu_count

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def get_action(network, obs, agent):
    return agent, network.activate(obs)


def seed_design_actions(nets, obs):
    """The design seed: a new pool per step, one apply_async per agent (networks pickled)."""
    pool = multiprocessing.get_context("spawn").Pool(processes=cpu_count())
    results = [pool.apply_async(get_action, (net, list(o), a)) for a, (net, o) in enumerate(zip(nets, obs))]
    pool.close()
    pool.join()
    out = dict(r.get() for r in results)
    return np.array([out[a] for a in range(len(nets))])


def main(mode, config_path, genomes_path, agents, max_steps, worker_id, logs):
    config = neat.Config(neat.DefaultGenome, neat.DefaultReproduction, neat.DefaultSpeciesSet,
                         neat.DefaultStagnation, config_path)
    with open(genomes_path, "rb") as f:
        genomes = pickle.load(f)[:agents]
    env = UnityEnvironment(os.path.join(ROOT, "unity_builds", "ball"), worker_id=worker_id, no_graphics=True,
                           additional_args=["--agents", str(agents), "--max-steps", str(max_steps)],
                           log_folder=logs)
    try:
        started = time.perf_counter()
        env.reset()
        name = list(env.behavior_specs)[0]
        nets = [neat.nn.FeedForwardNetwork.create(g, config) for g in genomes]
        finished = set()
        agent_steps = steps = 0
        limit = max_steps if mode == "plain" else 3
        while len(finished) < agents and steps < limit:
            decision, terminal = env.get_steps(name)
            finished.update(int(a) for a in terminal.agent_id)
            obs = decision.obs[0]
            if mode == "plain":
                actions = np.array([nets[int(a)].activate(list(o)) for a, o in zip(decision.agent_id, obs)])
            else:
                actions = seed_design_actions([nets[int(a)] for a in decision.agent_id], obs)
            env.set_actions(name, ActionTuple(continuous=np.clip(actions, -1, 1).astype(np.float32)))
            env.step()
            agent_steps += len(decision)
            steps += 1
        elapsed = time.perf_counter() - started
    finally:
        env.close()
    log = open(os.path.join(logs, f"Player-{worker_id}.log")).read()
    compute = [float(x) for x in re.findall(r"compute_ms ([0-9.]+)", log)][1:]  # after the handshake
    print(json.dumps({"agent_steps": agent_steps, "seconds": elapsed, "steps": steps,
                      "sim_seconds": sum(compute) / 1e3}))


if __name__ == "__main__":
    a = sys.argv[1:]
    main(a[0], a[1], a[2], int(a[3]), int(a[4]), int(a[5]), a[6])
