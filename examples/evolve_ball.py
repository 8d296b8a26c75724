"""An ordinary neat-python script that evaluates genomes on a simulator through neatpar.

Equivalent to `neatpar evolve --config configs/ball.cfg`, written the neat-python way: the
evaluator is the fitness callback; the simulator connection lives in this process only and is
created by the first evaluate(). With --envs N, N simulators run at once, each created by and
owned by its own env host process. Run: python examples/evolve_ball.py [--envs N]
"""
import argparse
import os

import neat

import neatpar

HERE = os.path.dirname(os.path.abspath(__file__))
CONFIG = os.path.join(HERE, "..", "configs", "ball.cfg")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--envs", type=int, default=1, help="simulators (env hosts) to run at once")
    args = parser.parse_args()
    config = neat.Config(neatpar.Genome, neatpar.Reproduction, neatpar.SpeciesSet,  # neat-python's, faster
                         neat.DefaultStagnation, CONFIG)
    population = neat.Population(config, seed=1)
    population.add_reporter(neat.StdOutReporter(False))
    # The [neatpar] section of the same file says which build, which behaviors, how many steps.
    with neatpar.UnityEvaluator.from_config(CONFIG, envs=args.envs) as evaluator:
        population.run(evaluator.evaluate, 5)
        champion = evaluator.champion
        print(f"\nbest genome {champion.key}: fitness {champion.fitness:.2f}")
        print("its returns on 3 fresh episodes:", evaluator.play(champion, config, episodes=3))


if __name__ == "__main__":
    main()
