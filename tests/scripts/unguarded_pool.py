"""A script with no `if __name__ == "__main__":` guard: spawn re-runs it in every worker."""
import neatpar


def fitness(genome, config):
    return 1.0


evaluator = neatpar.ParallelEvaluator(2, fitness)
evaluator.close()
print("unreachable in a correct run")
