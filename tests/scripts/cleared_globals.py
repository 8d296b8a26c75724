"""Main-module globals seen from a worker: live handles and named globals are placeholders, and
touching one stops the run with ClearedGlobalError, failure_fitness or not (no genome is to blame)."""
import json
import os
import sys

import neatpar

LOG = open(os.devnull, "w")  # a live handle at module level (harmless here, cleared in workers)
TABLE = {"weights": [1, 2, 3]}  # named in clear_globals below
PLAIN = 41


class Genome:
    def __init__(self, key):
        self.key, self.fitness = key, None


def touch_log(genome, config):
    LOG.write("x")
    return 1.0


def touch_table(genome, config):
    return float(len(TABLE["weights"]))


def touch_plain(genome, config):
    return float(PLAIN + 1)


if __name__ == "__main__":
    out = {}
    for fn in (touch_log, touch_table, touch_plain):
        for failure_fitness in (None, 0.0):
            genomes = [(k, Genome(k)) for k in range(4)]
            with neatpar.ParallelEvaluator(1, fn, clear_globals=["TABLE"], failure_fitness=failure_fitness) as ev:
                try:
                    ev.evaluate(genomes, None)
                    result = genomes[0][1].fitness
                except neatpar.ClearedGlobalError as exc:
                    result = f"{type(exc).__name__}: {exc}"
            out[f"{fn.__name__} failure_fitness={failure_fitness}"] = result
    out["parent_log_open"] = not LOG.closed
    json.dump(out, sys.stdout)
