"""Self-play configs for the duel build (a Pong-like match with a transitive skill ladder)."""
import os

from .configs import write_config
from .paths import BUILDS
from .simulators import free_worker_id

DUEL_SHORT = "--areas 4 --points 2 --rally-steps 60"   # short duel matches: 2 rallies of at most 60 steps


def duel_cfg(folder, name="duel.cfg", generations=3, **neatpar):
    """A self-play config for the duel build: the population plays Duel?team=0 and Duel?team=1 from
    both sides against a league of 3; 8 genomes, short matches."""
    section = {"env": os.path.join(BUILDS, "duel"), "env_args": DUEL_SHORT,
               "behaviors": "Duel?team=0: population, Duel?team=1: league", "max_steps": 200,
               "episodes_per_genome": 2, "league_swap_sides": "true", "league_window": 3, "generations": generations,
               "seed": 3, "checkpoint_interval": 1, "worker_id": free_worker_id(), **neatpar}
    return write_config(folder, name, neatpar=section, pop_size=8, num_inputs=6, num_outputs=1,
                        activation_options="tanh", activation_default="tanh")
