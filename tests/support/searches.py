"""Searches on the deceptive maze: a small copy of a shipped maze config, and the maze's episodes
driven in process (the task object, no Unity protocol) for the descriptors to compare with."""
import os
import re

import numpy as np

from neatpar.nn import FeedForwardPopulation
from neatpar_sim.maze import Maze
from .paths import BUILDS, ROOT

NAME = "Maze?team=0"


def maze_cfg(folder, config="maze-map-elites.cfg", pop=16, steps=30, generations=2, **neatpar) -> str:
    """configs/CONFIG with a population of `pop`, episodes of `steps` decisions, `generations`
    and other [neatpar] keys over the file's, written into `folder`; its path."""
    text = open(os.path.join(ROOT, "configs", config)).read()
    keys = {"env": os.path.join(BUILDS, "maze"), "env_args": f"--agents {pop} --max-steps {steps}",
            "max_steps": steps, "generations": generations, "checkpoint_interval": 1, **neatpar}
    text = re.sub(r"(?m)^pop_size\s*=.*$", f"pop_size = {pop}", text)
    for key, value in keys.items():
        line = f"{key} = {value}"
        text, found = re.subn(rf"(?m)^{key}\s*=.*$", line, text)
        if not found:
            text += line + "\n"
    path = os.path.join(str(folder), config)
    with open(path, "w") as f:
        f.write(text)
    return path


def maze_descriptors(genomes, config, steps: int, agents: int | None = None) -> dict:
    """Each genome's (fitness, final position, mean position over its decisions), its robot driven
    in process for `steps` steps (the build's episode)."""
    n = len(genomes)
    task = Maze({"agents": agents or n, "max_steps": steps}, None)
    kernel = FeedForwardPopulation.create(genomes, config)
    playing, fitness = np.ones(n, bool), np.zeros(n)
    final, total, decisions = np.zeros((n, 2)), np.zeros((n, 2)), np.zeros(n)
    observations = task.observe(NAME)[:n]
    while playing.any():
        total[playing] += observations[playing, 10:12]
        decisions[playing] += 1
        actions = kernel.activate(observations).astype(np.float32)
        result = task.step({NAME: (actions, None)}, {NAME: playing.copy()}, {NAME: playing.copy()})[NAME]
        observations = task.observe(NAME)[:n]
        ended = playing & result.done[:n]
        fitness[ended] = result.reward[:n][ended]
        final[ended] = observations[ended, 10:12]
        playing &= ~ended
    return {key: (float(fitness[i]), final[i], total[i] / decisions[i]) for i, (key, _) in enumerate(genomes)}
