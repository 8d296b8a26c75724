"""Benchmark: one simulation step's network evaluation for 16/64/256 agents, each driven by its
own realistic evolved genome, measured in one run:

- neatpar.nn.FeedForwardPopulation.activate (the population kernel),
- serial neat-python: FeedForwardNetwork.activate per agent,
- the design seed's approach: a new spawn Pool per step, one apply_async per agent.

Also: compile time of the population, and table memory per link.
Usage: python bench/bench_kernel.py [--seed-steps N]
"""
import argparse
import multiprocessing
import os
import pickle
import statistics
import sys
import time

import neat
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from realistic_genomes import realistic  # noqa: E402

from neatpar.processes import cpu_count  # noqa: E402
from neatpar.nn import FeedForwardPopulation  # noqa: E402


def get_action(network, obs, agent):
    return agent, network.activate(obs)


def seed_design_step(nets, obs):
    """The design seed: a pool per step, one task per agent, every network pickled each time."""
    pool = multiprocessing.get_context("spawn").Pool(processes=cpu_count())
    results = [pool.apply_async(get_action, (net, list(o), a)) for a, (net, o) in enumerate(zip(nets, obs))]
    pool.close()
    pool.join()
    return [r.get() for r in results]


def median_time(fn, reps):
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed-steps", type=int, default=3, help="steps of the (slow) seed design")
    args = parser.parse_args()
    config, genomes = realistic(256, seed=1)
    rng = np.random.default_rng(0)
    print("| agents | nodes (median) | links (median) | kernel | serial neat-python | seed design | vs serial | vs seed |")
    print("|---|---|---|---|---|---|---|---|")
    for agents in (16, 64, 256):
        subset = genomes[:agents]
        population = FeedForwardPopulation.create(subset, config)
        nets = [neat.nn.FeedForwardNetwork.create(g, config) for g in subset]
        obs = rng.normal(size=(agents, 8))
        obs_lists = obs.tolist()
        kernel = median_time(lambda: population.activate(obs), 2000)
        serial = median_time(lambda: [n.activate(o) for n, o in zip(nets, obs_lists)], 200)
        seed = median_time(lambda: seed_design_step(nets, obs), args.seed_steps)
        print(f"| {agents} | {int(np.median(population.tables.node_counts))} | "
              f"{int(np.median(population.tables.link_counts))} | {kernel * 1e3:.3f} ms | "
              f"{serial * 1e3:.2f} ms | {seed * 1e3:.0f} ms | {serial / kernel:.0f}x | {seed / kernel:.0f}x |")
        ref = np.array([n.activate(o) for n, o in zip(nets, obs_lists)])
        assert np.array_equal(population.activate(obs), ref), "kernel and neat-python disagree"

    compile_time = median_time(lambda: FeedForwardPopulation.create(genomes, config), 20)
    created = median_time(lambda: [neat.nn.FeedForwardNetwork.create(g, config) for g in genomes], 5)
    population = FeedForwardPopulation.create(genomes, config)
    t = population.tables
    table_bytes = sum(a.nbytes for a in (t.genome_start, t.node_slot, t.node_act, t.node_agg, t.node_bias,
                                         t.node_resp, t.link_start, t.link_src, t.link_w))
    links = int(t.link_w.size)
    print(f"\ncompile 256 genomes: {compile_time * 1e3:.1f} ms "
          f"(neat-python FeedForwardNetwork.create for the same: {created * 1e3:.1f} ms)")
    print(f"tables: {table_bytes} bytes for {links} links and {t.node_slot.size} nodes "
          f"({table_bytes / links:.1f} bytes per link); pickled: {len(pickle.dumps(population))} bytes")


if __name__ == "__main__":
    main()
