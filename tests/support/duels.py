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


def asymmetric_cfg(folder, generations=3, **neatpar):
    """Duel?team=0 (6 observations, 1 continuous action) against Keeper?team=1 (5, a branch of 3),
    each with its own population, a generation each in turn."""
    write_config(folder, "keeper.cfg", pop_size=6, num_inputs=5, num_outputs=3, activation_options="tanh",
                 activation_default="tanh")
    return duel_cfg(folder, "asymmetric.cfg", generations, env_args=DUEL_SHORT + " --asymmetric 1",
                    behaviors="Duel?team=0: league, Keeper?team=1: league", league_swap_sides="false",
                    neat_configs="Keeper?team=1: keeper.cfg", team_change=1, **neatpar)


def best_rated(side: dict) -> dict:
    """The best-rated member of a league (league.json's entry of a behavior), of equals the newest
    (the winner without a final round-robin)."""
    return max(reversed(side["members"]), key=lambda m: m["rating"])
