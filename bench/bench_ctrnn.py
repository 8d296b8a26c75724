"""Benchmark: one decision of continuous-time networks for 16/64/256 agents, each driven by its own
realistic evolved genome (recurrent structure, time constants 0.05-1 s), measured in one run:

- neatpar.nn.CTRNNPopulation.activate (the population kernel: every agent's CTRNN.advance),
- neat-python: neat.ctrnn.CTRNN.advance per agent, the same advance_time and time_step.

A decision advances 0.1 s in Euler steps of 0.02 s (Unity's defaults: a DecisionRequester period
of 5 at a Fixed Timestep of 0.02 s), rounding steps of neat-python's clock included; --decision
and --step change them. Before timing, the kernel's outputs are checked bit for bit against
neat-python's over 50 decisions.
Usage: python bench/bench_ctrnn.py [--decision S] [--step S]
"""
import argparse
import os
import random
import sys

import neat
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_kernel import median_time  # noqa: E402
from realistic_genomes import realistic  # noqa: E402

from neatpar.nn import CTRNNPopulation  # noqa: E402


def with_time_constants(genomes, seed):
    """Each node gets its own time constant in [0.05, 1] s (neat-python's default is 1.0 for all)."""
    rng = random.Random(seed)
    for genome in genomes:
        for node in genome.nodes.values():
            node.time_constant = rng.uniform(0.05, 1.0)
    return genomes


def check_exact(genomes, config, times, rng):
    population = CTRNNPopulation.create(genomes, config, *times)
    nets = [neat.ctrnn.CTRNN.create(g, config) for g in genomes]
    for _ in range(50):
        obs = rng.normal(size=(len(genomes), 8))
        ref = np.array([net.advance(o, *times) for net, o in zip(nets, obs.tolist())])
        assert np.array_equal(population.activate(obs), ref), "kernel and neat-python disagree"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--decision", type=float, default=0.1, help="seconds one decision advances (advance_time)")
    parser.add_argument("--step", type=float, default=0.02, help="Euler step in seconds (time_step)")
    args = parser.parse_args()
    times = (args.decision, args.step)
    config, genomes = realistic(256, seed=1, feed_forward=False)
    genomes = with_time_constants(genomes, seed=2)
    rng = np.random.default_rng(0)
    check_exact(genomes[:64], config, times, rng)
    print(f"decision {args.decision} s in steps of {args.step} s\n")
    print("| agents | nodes (median) | links (median) | kernel | CTRNN.advance per agent | vs neat-python |")
    print("|---|---|---|---|---|---|")
    for agents in (16, 64, 256):
        subset = genomes[:agents]
        population = CTRNNPopulation.create(subset, config, *times)
        nets = [neat.ctrnn.CTRNN.create(g, config) for g in subset]
        obs = rng.normal(size=(agents, 8))
        obs_lists = obs.tolist()
        kernel = median_time(lambda: population.activate(obs), 1000)
        serial = median_time(lambda: [n.advance(o, *times) for n, o in zip(nets, obs_lists)], 30)
        print(f"| {agents} | {int(np.median(population.tables.node_counts))} | "
              f"{int(np.median(population.tables.link_counts))} | {kernel * 1e3:.3f} ms | "
              f"{serial * 1e3:.2f} ms | {serial / kernel:.0f}x |")


if __name__ == "__main__":
    main()
