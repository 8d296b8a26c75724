"""Benchmark: per-step network inference for 64/256/1024/4096 agents and two network sizes,
measured in one run:

- in process (the population kernel), and on the spawn pool with 1 and 2 workers (networks
  installed once, one apply_async per worker per step, the shared-memory exchange);
- serial neat-python (FeedForwardNetwork.activate per agent) and the design seed's approach (a new
  spawn Pool per step, one apply_async per agent; measured once per size, it takes seconds).
Agents share 256 genomes (agent r is driven by genome r % 256).
Usage: python bench/bench_inference.py [--reps N]
"""
import argparse
import os
import sys

import neat
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_kernel import median_time, seed_design_step  # noqa: E402
from realistic_genomes import realistic  # noqa: E402

from neatpar.episodes.inference import InProcessInference, PoolInference  # noqa: E402
from neatpar.nn import FeedForwardPopulation  # noqa: E402


def per_step(fn, reps):
    fn()  # warm-up: installs the networks in the pool workers
    return median_time(fn, reps)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=30)
    args = parser.parse_args()
    sizes = {"realistic (10-30 hidden)": dict(hidden=(10, 30)),
             "large (80-120 hidden)": dict(hidden=(80, 120), extra_links=(100, 200))}
    pools = {k: PoolInference(k) for k in (1, 2)}
    try:
        print("| network | agents | in process | pool, 1 worker | pool, 2 workers | serial neat-python "
              "| seed design | pool 2 / in process | in process vs serial |")
        print("|---|---|---|---|---|---|---|---|---|")
        for label, shape in sizes.items():
            config, genomes = realistic(256, seed=4, **shape)
            population = FeedForwardPopulation.create(genomes, config)
            nets = [neat.nn.FeedForwardNetwork.create(g, config) for g in genomes]
            local = InProcessInference()
            local.install(population)
            for pool in pools.values():
                pool.install(population)
            for agents in (64, 256, 1024, 4096):
                rng = np.random.default_rng(agents)
                obs = rng.normal(size=(agents, 8))
                index = np.arange(agents, dtype=np.int64) % 256
                rows = np.arange(agents, dtype=np.int64)
                reset = np.zeros(agents, bool)
                t_local = per_step(lambda: local.activate(obs, index, rows, reset), args.reps)
                t_pool = {k: per_step(lambda p=p: p.activate(obs, index, rows, reset), args.reps)
                          for k, p in pools.items()}
                lists = obs.tolist()
                t_serial = per_step(lambda: [nets[i].activate(o) for i, o in zip(index.tolist(), lists)],
                                    max(3, args.reps // 10))
                t_seed = per_step(lambda: seed_design_step([nets[i] for i in index.tolist()], obs), 1)
                print(f"| {label} | {agents} | {t_local * 1e3:.3f} ms | {t_pool[1] * 1e3:.3f} ms | "
                      f"{t_pool[2] * 1e3:.3f} ms | {t_serial * 1e3:.1f} ms | {t_seed * 1e3:.0f} ms | "
                      f"{t_pool[2] / t_local:.1f}x | {t_serial / t_local:.0f}x |", flush=True)
    finally:
        for pool in pools.values():
            pool.close()


if __name__ == "__main__":
    main()
