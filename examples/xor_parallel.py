"""Evolve XOR with neat-python, evaluating genomes on neatpar's spawn-safe parallel evaluator.

The only change from neat-python's own parallel example is the import of the evaluator.
Run: python examples/xor_parallel.py [--generations N] [--workers K] [--seed S] [--backend ray [--address A]]
"""
import argparse
import os

import neat

import neatpar
from neatpar.processes import cpu_count

XOR_INPUTS = [(0.0, 0.0), (0.0, 1.0), (1.0, 0.0), (1.0, 1.0)]
XOR_OUTPUTS = [0.0, 1.0, 1.0, 0.0]
CONFIG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "configs", "xor.cfg")


def eval_genome(genome, config):
    """Fitness: 4 minus the squared error over the four XOR cases (4.0 is perfect)."""
    net = neat.nn.FeedForwardNetwork.create(genome, config)
    error = sum((net.activate(x)[0] - y) ** 2 for x, y in zip(XOR_INPUTS, XOR_OUTPUTS))
    return 4.0 - error


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--generations", type=int, default=200)
    parser.add_argument("--workers", type=int, default=cpu_count())
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--backend", choices=("local", "ray"), default="local",
                        help="ray: evaluate on a Ray cluster (pip install 'neatpar[ray]')")
    parser.add_argument("--address", help="Ray cluster address (default: a local Ray instance)")
    args = parser.parse_args()

    config = neat.Config(neatpar.Genome, neatpar.Reproduction, neatpar.SpeciesSet,  # neat-python's, faster
                         neat.DefaultStagnation, CONFIG)
    population = neat.Population(config, seed=args.seed)
    population.add_reporter(neat.StdOutReporter(False))
    with neatpar.ParallelEvaluator(args.workers, eval_genome, seed=args.seed, backend=args.backend,
                                   address=args.address) as evaluator:
        winner = population.run(evaluator.evaluate, args.generations)

    net = neat.nn.FeedForwardNetwork.create(winner, config)
    print(f"\nWinner: genome {winner.key}, fitness {winner.fitness:.4f} (4.0 is perfect)")
    for x, y in zip(XOR_INPUTS, XOR_OUTPUTS):
        print(f"  input {x} -> {net.activate(x)[0]:.3f} (expected {y})")


if __name__ == "__main__":
    main()
