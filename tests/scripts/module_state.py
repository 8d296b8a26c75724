"""Module-level state under spawn: weights drawn at import, used by the fitness function. argv[1]:

    unseeded-numpy   drawn from numpy's global generator without seeding: each worker draws its own
    unseeded-random  the same with `random`
    seeded           numpy seeded first: every process draws the same values
    initializer      drawn under the __main__ guard and given to the workers with initializer/initargs

Prints one JSON line: how many fitnesses the workers computed differently from this process.
"""
import json
import random
import sys

import numpy as np

import neatpar

MODE = sys.argv[1] if len(sys.argv) > 1 else ""

if MODE == "unseeded-numpy":
    WEIGHTS = [float(x) for x in np.random.random(4)]
elif MODE == "unseeded-random":
    WEIGHTS = [random.random() for _ in range(4)]
elif MODE == "seeded":
    np.random.seed(1234)
    WEIGHTS = [float(x) for x in np.random.random(4)]
else:
    WEIGHTS = None  # set by the initializer in the workers


def install(weights):
    global WEIGHTS
    WEIGHTS = weights


class Genome:
    def __init__(self, key):
        self.key, self.fitness = key, None


def fitness(genome, config):
    return WEIGHTS[genome.key % 4] * genome.key


if __name__ == "__main__":
    initializer, initargs = None, ()
    if MODE == "initializer":
        WEIGHTS = [float(x) for x in np.random.random(4)]
        initializer, initargs = install, (WEIGHTS,)
    genomes = [(k, Genome(k)) for k in range(1, 41)]
    with neatpar.ParallelEvaluator(2, fitness, initializer=initializer, initargs=initargs) as evaluator:
        evaluator.evaluate(genomes, None)
    print(json.dumps({"differ": sum(int(g.fitness != fitness(g, None)) for _, g in genomes), "of": len(genomes)}))
