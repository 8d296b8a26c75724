"""A Unity connection copied into pool children, and how neatpar rules it out: a module-level
Unity connection and a process pool, written twice.

THE WRONG WAY (do not use): `env = UnityEnvironment(...)` at module level and a
default (fork) multiprocessing.Pool created per step. Every forked child gets a copy of the live
connection: its gRPC threads do not survive fork (a fork taken while they run can deadlock), and a
child that runs the copy's atexit close sends the game the "quit" meant for the parent, so the
parent's game quits. Under spawn, the module-level line re-runs in every child and tries to
launch a second game on the same port.

    env = UnityEnvironment(file_name="unity_builds/ball")      # module level: copied or re-run
    def get_actions(...):
        pool = mp.Pool(processes=mp.cpu_count())                # fork, a new pool every step
        for agent in ...: pool.apply_async(get_action, (policy, obs, agent, queue))

THE NEATPAR WAY (this file): the connection is created lazily in the main process only, the pool
is neatpar's spawn pool (started once; its workers clear any live global they would see), and
networks come back through apply_async results. The parent's environment keeps stepping while
the pool starts, works and exits.

Run: python examples/unity_connection_in_pool_children.py [--steps N]
"""
import argparse
import os

import neat
import numpy as np
from mlagents_envs.base_env import ActionTuple

import neatpar

HERE = os.path.dirname(os.path.abspath(__file__))
CONFIG = os.path.join(HERE, "..", "configs", "ball.cfg")
env = None  # the wrong way's global, now created lazily by the main process only


def init_unity_env(worker_id: int = 0):
    global env
    from mlagents_envs.environment import UnityEnvironment
    env = UnityEnvironment(os.path.join(HERE, "..", "unity_builds", "ball"), worker_id=worker_id, no_graphics=True,
                           additional_args=["--agents", "8"])
    return env


def get_actions(genome, config, observations):
    """Runs in a pool worker: one genome's network over its agents' observations."""
    net = neat.nn.FeedForwardNetwork.create(genome, config)
    return [net.activate(list(o)) for o in observations]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--worker-id", type=int, default=0)
    args = parser.parse_args()
    config = neat.Config(neat.DefaultGenome, neat.DefaultReproduction, neat.DefaultSpeciesSet,
                         neat.DefaultStagnation, CONFIG)
    genomes = list(neat.Population(config, seed=1).population.values())[:8]
    init_unity_env(args.worker_id)
    env.reset()
    name = list(env.behavior_specs)[0]
    with neatpar.Pool(2) as pool:  # spawn; workers clear live globals such as `env`
        for _ in range(args.steps):
            decision, _ = env.get_steps(name)
            jobs = [pool.apply_async(get_actions, (genomes[i], config, decision.obs[0][i:i + 1]))
                    for i in range(len(decision))]
            actions = np.array([job.get(60)[0] for job in jobs], dtype=np.float32)
            env.set_actions(name, ActionTuple(continuous=np.clip(actions, -1, 1)))
            env.step()
    after = 0
    for _ in range(args.steps):  # the pool has exited; the parent's connection is intact
        decision, _ = env.get_steps(name)
        env.set_actions(name, ActionTuple(continuous=np.zeros((len(decision), 2), np.float32)))
        env.step()
        after += 1
    print(f"environment still stepping after the pool exited: {after} steps")
    env.close()


if __name__ == "__main__":
    main()
