"""Evaluate slow genomes until interrupted; writes the pool's worker PIDs to argv[1] first, and
each worker marks argv[1] + ".busy" when it starts a genome."""
import os
import sys
import time

import neatpar


class Genome:
    def __init__(self, key):
        self.key, self.fitness = key, None


def slow(genome, config):
    open(os.environ["NEATPAR_TEST_BUSY"], "a").close()
    time.sleep(60)
    return 1.0


if __name__ == "__main__":
    os.environ["NEATPAR_TEST_BUSY"] = sys.argv[1] + ".busy"  # inherited by the spawn workers
    with neatpar.ParallelEvaluator(2, slow) as evaluator:
        with open(sys.argv[1], "w") as f:
            f.write(" ".join(map(str, evaluator.pids)))
        try:
            evaluator.evaluate([(k, Genome(k)) for k in range(8)], None)
        except KeyboardInterrupt:
            print("KeyboardInterrupt re-raised", flush=True)
            raise
