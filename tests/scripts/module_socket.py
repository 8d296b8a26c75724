"""A live socket bound at module level; the pool itself is guarded."""
import os
import socket

import neatpar

listener = socket.socket()
listener.bind(("127.0.0.1", int(os.environ["NEATPAR_TEST_PORT"])))
listener.listen()


def fitness(genome, config):
    return 1.0


if __name__ == "__main__":
    neatpar.ParallelEvaluator(2, fitness).close()
