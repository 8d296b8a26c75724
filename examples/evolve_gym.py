"""An ordinary neat-python script that evolves controllers for a Gymnasium environment through neatpar.

The evaluator is the fitness callback: each generation, `agents` copies of the environment play the
genomes' episodes at once (a copy whose episode ends takes the next genome), the networks of all
copies run in one call of the population kernel, and with --envs N, N env hosts each play their
own copies. Equivalent to `neatpar evolve --config configs/cartpole.cfg` (or lunarlander.cfg).
Needs the gym extra: pip install 'neatpar[gym]'.
Run: python examples/evolve_gym.py [--config configs/lunarlander.cfg] [--generations 30] [--envs 2]
"""
import argparse
import os

import neat

import neatpar

HERE = os.path.dirname(os.path.abspath(__file__))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default=os.path.join(HERE, "..", "configs", "cartpole.cfg"),
                        help="a neat-python config with a [neatpar] section naming a gymnasium: env")
    parser.add_argument("--generations", type=int, default=20)
    parser.add_argument("--envs", type=int, default=1, help="env hosts (processes), each with its own copies")
    args = parser.parse_args()
    config = neat.Config(neatpar.Genome, neatpar.Reproduction, neatpar.SpeciesSet,  # neat-python's, faster
                         neat.DefaultStagnation, args.config)
    population = neat.Population(config, seed=1)
    population.add_reporter(neat.StdOutReporter(False))
    # The [neatpar] section of the same file names the environment, the copies and the episode length.
    with neatpar.EnvEvaluator.from_config(args.config, envs=args.envs) as evaluator:
        population.run(evaluator.evaluate, args.generations)
        champion = evaluator.champion
        print(f"\nbest genome {champion.key}: fitness {champion.fitness:.2f}")
        print("its returns on 5 fresh episodes:", [round(r, 1) for r in evaluator.play(champion, config, episodes=5)])


if __name__ == "__main__":
    main()
