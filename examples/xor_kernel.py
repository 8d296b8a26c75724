"""XOR with the population kernel inside an ordinary neat-python fitness function.

The whole population is evaluated in one vectorized call: row r of the input batch is one XOR
case for genome genome_index[r]. Run: python examples/xor_kernel.py
"""
import os

import neat
import numpy as np

import neatpar
from neatpar.nn import FeedForwardPopulation

CASES = np.array([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]])
TARGETS = np.array([0.0, 1.0, 1.0, 0.0])
CONFIG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "configs", "xor.cfg")


def eval_genomes(genomes, config):
    """neat-python's population-level fitness callback, one kernel call per generation."""
    population = FeedForwardPopulation.create(genomes, config)
    genome_index = np.repeat(np.arange(len(genomes)), len(CASES))   # 4 rows per genome
    outputs = population.activate(np.tile(CASES, (len(genomes), 1)), genome_index)
    errors = ((outputs[:, 0] - np.tile(TARGETS, len(genomes))) ** 2).reshape(len(genomes), -1)
    for (_, genome), error in zip(genomes, errors.sum(axis=1)):
        genome.fitness = 4.0 - float(error)


if __name__ == "__main__":
    config = neat.Config(neatpar.Genome, neatpar.Reproduction, neatpar.SpeciesSet,  # neat-python's, faster
                         neat.DefaultStagnation, CONFIG)
    winner = neat.Population(config, seed=7).run(eval_genomes, 300)
    print(f"winner {winner.key}: fitness {winner.fitness:.4f}")
