"""Benchmark: neatpar.ParallelEvaluator vs neat-python 2.0's ParallelEvaluator (fork and spawn)
and serial evaluation, measured in one run on real first-generation XOR genomes.

(a) per-genome overhead with a trivial fitness, population 150, 2 workers;
(b) a CPU-bound fitness of about 10 ms per genome, 2 workers, speed-up over serial.
Prints a Markdown table of times and ratios. Usage: python bench/bench_evaluator.py [--reps N]
"""
import argparse
import multiprocessing
import os
import statistics
import time

import neat
import neat.parallel

import neatpar
from neatpar.processes import cpu_count

CONFIG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "configs", "xor.cfg")


def trivial(genome, config):
    return 1.0


def cpu_10ms(genome, config):
    end = time.perf_counter() + 0.010
    while time.perf_counter() < end:
        pass
    return 1.0


def serial_evaluate(fitness):
    def evaluate(genomes, config):
        for _, genome in genomes:
            genome.fitness = fitness(genome, config)
    return evaluate


def timed(evaluate, genomes, config, reps):
    evaluate(genomes, config)  # warm-up: worker start-up and first imports are not per-genome costs
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        evaluate(genomes, config)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def neat_python_pool(method, fitness):
    # neat-python draws a tqdm bar on every evaluate(); neatpar draws none off a terminal. Compare
    # the evaluators, not the bars.
    neat.parallel.tqdm = lambda iterable, total=None: iterable
    before = multiprocessing.get_start_method()
    multiprocessing.set_start_method(method, force=True)
    try:
        return neat.ParallelEvaluator(2, fitness)
    finally:
        multiprocessing.set_start_method(before, force=True)


def measure(fitness, genomes, config, reps):
    rows = {"serial": timed(serial_evaluate(fitness), genomes, config, reps)}
    for method in [m for m in ("fork", "spawn") if m in multiprocessing.get_all_start_methods()]:  # no fork on Windows
        pe = neat_python_pool(method, fitness)
        rows[f"neat-python ParallelEvaluator ({method})"] = timed(pe.evaluate, genomes, config, reps)
        pe.close()
    with neatpar.ParallelEvaluator(2, fitness) as pe:
        rows["neatpar.ParallelEvaluator (spawn)"] = timed(pe.evaluate, genomes, config, reps)
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=15)
    args = parser.parse_args()
    config = neat.Config(neat.DefaultGenome, neat.DefaultReproduction, neat.DefaultSpeciesSet,
                         neat.DefaultStagnation, CONFIG)
    genomes = list(neat.Population(config, seed=1).population.items())
    n = len(genomes)
    print(f"population {n}, 2 workers, median of {args.reps} generations, {cpu_count()} cores\n")

    trivial_rows = measure(trivial, genomes, config, args.reps)
    ours = trivial_rows["neatpar.ParallelEvaluator (spawn)"]
    print("(a) trivial fitness: time per generation and per genome")
    print("| evaluator | per generation | per genome | neatpar / this |")
    print("|---|---|---|---|")
    for name, t in trivial_rows.items():
        ratio = "-" if name == "serial" else f"{ours / t:.3f}"
        print(f"| {name} | {t * 1e3:.1f} ms | {t / n * 1e6:.0f} us | {ratio} |")

    cpu_rows = measure(cpu_10ms, genomes, config, max(2, args.reps // 5))
    serial = cpu_rows["serial"]
    print("\n(b) CPU-bound fitness (~10 ms per genome): speed-up over serial")
    print("| evaluator | per generation | speed-up vs serial |")
    print("|---|---|---|")
    for name, t in cpu_rows.items():
        print(f"| {name} | {t:.3f} s | {serial / t:.2f}x |")


if __name__ == "__main__":
    main()
