"""Evaluate slow genomes until interrupted; writes the pool's worker PIDs to argv[1] first."""
import sys
import time

import neatpar


class Genome:
    def __init__(self, key):
        self.key, self.fitness = key, None


def slow(genome, config):
    time.sleep(60)
    return 1.0


if __name__ == "__main__":
    with neatpar.ParallelEvaluator(2, slow) as evaluator:
        with open(sys.argv[1], "w") as f:
            f.write(" ".join(map(str, evaluator.pool.pids)))
        try:
            evaluator.evaluate([(k, Genome(k)) for k in range(8)], None)
        except KeyboardInterrupt:
            print("KeyboardInterrupt re-raised", flush=True)
            raise
