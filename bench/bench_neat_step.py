"""Benchmark: the NEAT generation step (everything of a generation but the fitness function:
reproduce, speciate and the reporters' bookkeeping inside Population.run), neat-python's classes
against neatpar.Genome / Reproduction / SpeciesSet, same seed, on ball.cfg's sections adapted to
each shape.

Three runs alternate generation by generation in one process, each on its own random stream:
neat-python's classes, and neatpar's twice. neatpar's genomes hold their genes as C records until
code first reads genome.nodes / genome.connections (neatpar's own evaluator compiles from the
records and never does); so one neatpar run is never read between generations (the "neatpar"
column), the other has every new genome's gene dicts read after each generation, as a fitness
function that builds networks from the genes does (that first read is timed and added: the second
column; the same read of neat-python's dicts is added to its side). The whole state (the identity
tests' snapshot: every gene bit for bit and in order, species, innovation numbers, counters, random
state, reporter output) of the read run is compared with neat-python's after every generation; the
unread run's state less its genes after every generation, and with its genes at the end. A
difference aborts the benchmark.

Step time per generation = Population.run(f, 1) minus the time spent in the fitness function (a
cheap deterministic one that rewards size and reads no gene object, so genomes grow and species
form); the median over the measured generations, after `growth` unmeasured ones. Times are the
process's CPU time (all its threads), so that other work on a shared machine stays out of the
measurement; on a quiet machine the wall time of a step is at most its CPU time (speciation's
distances run on several threads, everything else on one).
Usage: python bench/bench_neat_step.py [--quick] [--shapes 336x3,336x9,pop1000,recurrent300,pop3000]
                                       [--no-scaling]
"""
import argparse
import dataclasses
import gc
import os
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests"))  # the identity tests' snapshots and configs
from support import evolution as es  # noqa: E402

from neatpar.processes import cpu_count  # noqa: E402

ALL_FUNCTIONS = dict(activation_options=" ".join(es.ACTIVATIONS), activation_default="random",
                     activation_mutate_rate=0.2, aggregation_options=" ".join(es.AGGREGATIONS),
                     aggregation_default="random", aggregation_mutate_rate=0.2)


@dataclasses.dataclass(frozen=True)
class Shape:
    """A config (ball.cfg's sections with `options` changed), generations run before measuring, generations measured."""
    label: str
    options: tuple
    growth: int
    measured: int


def shape(label: str, growth: int, measured: int, **options) -> Shape:
    return Shape(label, tuple(sorted(options.items())), growth, measured)


def shapes(quick: bool) -> dict[str, Shape]:
    """The issue's shapes; --quick runs fewer generations (and grows pop1000 for 5, not 30)."""
    q = quick
    return {
        "336x3": shape("pop 150, 336 inputs, 3 outputs, full_direct", 0, 2 if q else 5,
                       pop_size=150, num_inputs=336, num_outputs=3),
        "336x9": shape("pop 150, 336 inputs, 9 outputs, full_direct", 0, 1 if q else 3,
                       pop_size=150, num_inputs=336, num_outputs=9),
        "pop1000": shape("pop 1,000, 8 inputs, after 30 generations of growth" if not q else
                         "pop 1,000, 8 inputs, after 5 generations of growth", 5 if q else 30, 2 if q else 5,
                         pop_size=1000),
        "recurrent300": shape("pop 300, recurrent, every activation and aggregation mutating", 2 if q else 5,
                              3 if q else 10, pop_size=300, feed_forward=False, **ALL_FUNCTIONS),
        "pop3000": shape("pop 3,000, 8 inputs, many species", 2 if q else 4, 1 if q else 3, pop_size=3000),
    }


def scaling(quick: bool) -> dict[str, list[Shape]]:
    """How the step grows: with the population at 8 inputs, with the genome at pop 150 (ball.cfg otherwise)."""
    growth, measured = (1, 2) if quick else (5, 3)
    return {"population (8 inputs, 2 outputs)": [shape(f"pop {n:,}", growth, measured, pop_size=n, num_inputs=8)
                                                 for n in (150, 500, 1000, 3000)],
            "genome size (pop 150, 2 outputs)": [shape(f"{n} inputs", growth, measured, pop_size=150, num_inputs=n)
                                                 for n in (8, 64, 336)]}


@dataclasses.dataclass
class Result:
    """Median milliseconds per generation, and the shape at the end of the run."""
    reference_ms: float  # neat-python: the step, and the step with a read of the gene dicts
    reference_read_ms: float
    unread_ms: float  # neatpar, genes never read between generations
    read_ms: float  # neatpar, the step and the first read of the gene dicts
    generations: int
    species: int
    nodes: float
    connections: float


class Timed:
    """The fitness function, with the time spent in it added up."""

    def __init__(self, fitness):
        self.fitness, self.seconds = fitness, 0.0

    def __call__(self, genome, config):
        started = time.process_time()
        try:
            return self.fitness(genome, config)
        finally:
            self.seconds += time.process_time() - started


def step_seconds(run: es.Run) -> float:
    """One generation of `run`, less its fitness function's time (the garbage of the other runs
    collected first, so that no run pays for another's)."""
    gc.collect()
    before = run.fitness.seconds
    started = time.process_time()
    run.step()
    return time.process_time() - started - (run.fitness.seconds - before)


def read_seconds(run: es.Run) -> float:
    """The time to read every genome's gene dicts (the first read, for neatpar's new genomes)."""
    started = time.process_time()
    for genome in run.population.population.values():
        genome.nodes, genome.connections  # noqa: B018 (the read is what is timed)
    return time.process_time() - started


def measure(item: Shape, neatpar_impl: es.Implementation, folder: str) -> Result:
    """The three runs in lockstep, compared after every generation; the median step times."""
    path = es.write_config(os.path.join(folder, "neat.cfg"), **dict(item.options))
    reference, unread, read = (es.Run.new(impl, path, 1, Timed(es.growth_fitness))
                               for impl in (es.NEAT_PYTHON, neatpar_impl, neatpar_impl))
    compare(reference, unread, read, item, "at the start")
    times: dict[str, list] = {"reference": [], "reference read": [], "unread": [], "read": []}
    for generation in range(1, item.growth + item.measured + 1):
        reference_step, unread_step, read_step = (step_seconds(run) for run in (reference, unread, read))
        reference_read, read_read = read_seconds(reference), read_seconds(read)
        if generation > item.growth:
            for name, seconds in (("reference", reference_step), ("reference read", reference_step + reference_read),
                                  ("unread", unread_step), ("read", read_step + read_read)):
                times[name].append(seconds)
        compare(reference, unread, read, item, f"after generation {generation}")
        if reference.outcome is not None:
            raise SystemExit(f"{item.label}: the run ended after generation {generation} ({reference.outcome}); "
                             "the shape needs a config that runs on")
    state = reference.snapshot()
    identical(state, unread.snapshot(), item, "at the end, with the genes of the run never read before")
    genomes = list(reference.population.population.values())
    medians = {name: 1e3 * statistics.median(values) for name, values in times.items()}
    return Result(medians["reference"], medians["reference read"], medians["unread"], medians["read"],
                  item.measured, len(reference.population.species.species),
                  statistics.mean(len(g.nodes) for g in genomes), statistics.mean(len(g.connections) for g in genomes))


def compare(reference: es.Run, unread: es.Run, read: es.Run, item: Shape, when: str) -> None:
    state = reference.snapshot()
    identical(state, read.snapshot(), item, when)
    identical(es.without_genes(state), unread.snapshot(genes=False), item, f"{when} (the run never read, genes aside)")


def identical(expected: tuple, actual: tuple, item: Shape, when: str) -> None:
    try:
        es.assert_same(expected, actual, f"{item.label}, {when}", ("neat-python", "neatpar"))
    except AssertionError as difference:
        raise SystemExit(f"NOT IDENTICAL, benchmark aborted: {difference}") from None


def row(label: str, r: Result) -> str:
    return (f"| {label} | {r.generations} | {r.species} | {r.nodes:.0f} / {r.connections:,.0f} | "
            f"{r.reference_ms:,.1f} | {r.unread_ms:,.1f} | {r.reference_ms / r.unread_ms:,.1f}x | "
            f"{r.read_ms:,.1f} | {r.reference_read_ms / r.read_ms:,.1f}x | yes |")


HEADER = ("| {} | generations measured | species | nodes / connections per genome | neat-python ms | neatpar ms "
          "| ratio | neatpar ms, gene dicts read every generation | ratio | identical |\n"
          "|---|---|---|---|---|---|---|---|---|---|")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer generations (a smoke run, not the numbers)")
    parser.add_argument("--shapes", default=",".join(shapes(False)),
                        help="comma-separated, of " + ", ".join(shapes(False)) + "; 'none' for the scaling table only")
    parser.add_argument("--no-scaling", action="store_true", help="leave out the scaling table")
    args = parser.parse_args()
    table = shapes(args.quick)
    chosen = [] if args.shapes == "none" else args.shapes.split(",")
    unknown = [name for name in chosen if name not in table]
    if unknown:
        parser.error(f"unknown shapes {unknown}; choose from {', '.join(table)}")
    try:
        neatpar_impl = es.neatpar_classes()
    except AssertionError as missing:
        raise SystemExit(str(missing)) from None
    print(f"{cpu_count()} cores; the NEAT step (reproduce + speciate + reporters) per generation in ms of CPU time, the "
          "median over the generations measured; seed 1; identical = the whole state equal after every generation; "
          "species and genome size at the last generation", flush=True)
    results: dict[tuple, Result] = {}  # a shape in both tables is run once
    with tempfile.TemporaryDirectory() as folder:
        def result(item: Shape) -> Result:
            key = item.options, item.growth, item.measured
            if key not in results:
                results[key] = measure(item, neatpar_impl, folder)
            return results[key]

        if chosen:
            print("\n" + HEADER.format("shape"), flush=True)
            for name in chosen:
                print(row(table[name].label, result(table[name])), flush=True)
        for title, items in ({} if args.no_scaling else scaling(args.quick)).items():
            print(f"\nHow the step grows with {title}\n" + HEADER.format("shape"), flush=True)
            for item in items:
                print(row(item.label, result(item)), flush=True)


if __name__ == "__main__":
    main()
