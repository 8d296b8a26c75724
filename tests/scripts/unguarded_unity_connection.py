"""A Unity connection copied into pool children, under spawn: created at module level (unguarded),
so every pool worker re-runs it. neatpar must end this with a clear error, not a respawn loop."""
import os

from mlagents_envs.environment import UnityEnvironment

import neatpar

BUILDS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "unity_builds")
env = UnityEnvironment(os.path.join(BUILDS, "ball"), worker_id=int(os.environ["NEATPAR_TEST_WORKER_ID"]),
                       no_graphics=True)


def fitness(genome, config):
    return 1.0


if __name__ == "__main__":
    env.reset()
    with neatpar.ParallelEvaluator(2, fitness) as evaluator:
        pass
