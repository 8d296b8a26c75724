"""A pool worker that dies or fails while starting, in one of several ways (argv[1]), with
failure_fitness argv[2] ("None" or a number). Each worker start is recorded (its re-import of
this script appends its PID to NEATPAR_TEST_DIR/starts), so a test can count them.

    import         the worker's re-import of this script exits (os._exit(3))
    replacement    only a replacement's re-import exits: a genome kills its worker once, the next
                   generation meets the replacement's failure
    unpickle-exit  unpickling the fitness function (sent by value: a lambda) exits the worker
    unpickle-name  the fitness function is defined under the __main__ guard: workers cannot find it
    initializer    the initializer exits the worker
"""
import os
import signal
import sys
import time

import neatpar
from support.fitness_fns import KillsOnLoad, exit_in_initializer, record

MODE = os.environ.get("NEATPAR_TEST_MODE", "")
MARK = os.path.join(os.environ["NEATPAR_TEST_DIR"], "a genome killed its worker")

if __name__ == "__mp_main__":  # a spawn worker re-importing this script
    record("starts")
    if MODE == "import" or (MODE == "replacement" and os.path.exists(MARK)):
        os._exit(3)

BOMB = KillsOnLoad()


class Genome:
    def __init__(self, key):
        self.key, self.fitness = key, None


def fitness(genome, config):
    if MODE == "replacement" and genome.key == 5 and not os.path.exists(MARK):
        open(MARK, "w").close()
        os.kill(os.getpid(), signal.SIGKILL)
    return float(genome.key)


if __name__ == "__main__":
    failure_fitness = None if sys.argv[2] == "None" else float(sys.argv[2])
    function, initializer = fitness, None
    if MODE == "unpickle-exit":
        function = lambda genome, config: float(BOMB is not None)  # noqa: E731 - sent by value, with BOMB
    elif MODE == "unpickle-name":
        def guarded(genome, config):
            return 1.0
        function = guarded
    elif MODE == "initializer":
        initializer = exit_in_initializer
    with neatpar.ParallelEvaluator(2, function, initializer=initializer, failure_fitness=failure_fitness,
                                   chunksize=2) as evaluator:
        for generation in range(2):
            evaluator.evaluate([(k, Genome(k)) for k in range(12)], None)
            time.sleep(2.0 if MODE == "replacement" else 0.0)  # the replacement has failed by then
    print("evaluated")
