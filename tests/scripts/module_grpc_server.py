"""A gRPC server started at module level (the shape of a module-level UnityEnvironment, whose
communicator is a gRPC server); the pool itself is guarded."""
from concurrent.futures import ThreadPoolExecutor

import grpc

import neatpar

server = grpc.server(ThreadPoolExecutor(max_workers=1))
server.add_insecure_port("127.0.0.1:0")
server.start()


def fitness(genome, config):
    return 1.0


if __name__ == "__main__":
    neatpar.ParallelEvaluator(2, fitness).close()
