"""Benchmark: the NEAT generation step (everything of a generation but the fitness function:
reproduce, speciate and the reporters' bookkeeping inside Population.run), neat-python's classes
against neatpar.Genome / Reproduction / SpeciesSet, same seed, on ball.cfg's sections adapted to
each shape; and a whole generation of XOR at population 10,000 scored with the population kernel.

The shapes: three runs alternate generation by generation in one process, each on its own random
stream: neat-python's classes, and neatpar's twice. One neatpar run is never read between
generations (the "neatpar" column); in the other, and in neat-python's run, a fitness pass reads
every gene of every genome after each generation, as a fitness function that builds networks from
the genes does (`read_every_gene`: every attribute of every node and connection gene, through
`nodes.items()` and `connections.items()`). "step + gene reads" adds that pass to the step; "step
after a read pass" is the read run's step alone, against the step of the run never read. The
whole state (the identity tests' snapshot: every gene bit for bit and in order, species,
innovation numbers, counters, random state, reporter output) of the read run is compared with
neat-python's after every generation; the unread run's state less its genes after every
generation, and with its genes at the end. A difference aborts the benchmark.

XOR: configs/xor.cfg at population 10,000, each generation's genomes compiled by
`FeedForwardPopulation.create` and scored on the four cases in one kernel call (the fitness
function, examples/xor_kernel.py's), with neat-python's classes and neatpar's in lockstep; the
share of a generation outside that fitness function is the step's. Then, in a plain run of the XOR
script (neatpar's classes, StdOutReporter with species detail), the parts of that step that no
implementation of the classes removes: Population.run's own loops, the reporter and
DefaultStagnation (each timed in the run), the Mersenne Twister words the step drew (counted from
the generator's states, then drawn again in C alone) and 10,000 bare genome objects made and freed;
their share of a generation is the least any step can have.

Step time per generation = Population.run(f, 1) minus the time spent in the fitness function (for
the shapes, a cheap deterministic one that rewards size and reads no gene object, so genomes grow
and species form); the median over the measured generations, after `growth` unmeasured ones. Times
are the process's CPU time (all its threads), so that other work on a shared machine stays out of
the measurement; on a quiet machine the wall time of a step is at most its CPU time (speciation's
distances run on several threads, everything else on one). Each run's step and read pass run with
the objects made before them frozen out of the cyclic collector (gc.freeze), so that no run pays
for the objects of the runs beside it in the process.
Usage: python bench/bench_neat_step.py [--quick] [--shapes 336x3,336x9,pop1000,recurrent300,pop3000,xor10000]
                                       [--no-scaling]
"""
import argparse
import configparser
import contextlib
import dataclasses
import gc
import io
import os
import random
import statistics
import sys
import tempfile
import time

import neat
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests"))  # the identity tests' snapshots and configs
from support import evolution as es  # noqa: E402
from support.paths import CONFIGS  # noqa: E402

from neatpar.nn import FeedForwardPopulation  # noqa: E402

from neatpar.processes import cpu_count  # noqa: E402

ALL_FUNCTIONS = dict(activation_options=" ".join(es.ACTIVATIONS), activation_default="random",
                     activation_mutate_rate=0.2, aggregation_options=" ".join(es.AGGREGATIONS),
                     aggregation_default="random", aggregation_mutate_rate=0.2)
XOR = "xor10000"


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
    """The step's shapes; --quick runs fewer generations (and grows pop1000 for 5, not 30)."""
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


def xor_shape(quick: bool) -> Shape:
    """XOR at population 10,000 (configs/xor.cfg, no fitness threshold reached)."""
    return shape("XOR, pop 10,000, FeedForwardPopulation", 2 if quick else 5, 2 if quick else 5)


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
    reference_ms: float  # neat-python: the step
    reference_read_ms: float  # neat-python: the step and the read pass
    unread_ms: float  # neatpar, genes never read between generations: the step
    read_ms: float  # neatpar, the step and the read pass
    after_read_ms: float  # neatpar: the step alone, in the run read every generation
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
    """One generation of `run`, less its fitness function's time."""
    with alone():
        before = run.fitness.seconds
        started = time.process_time()
        run.step()
        return time.process_time() - started - (run.fitness.seconds - before)


@contextlib.contextmanager
def alone():
    """The block with every object made before it out of the cyclic collector's sight (collected,
    then frozen): no run pays for the objects of the runs beside it in the process."""
    gc.collect()
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def read_every_gene(genome) -> float:
    """What a fitness function that builds a network reads of a genome, and more: every attribute of
    every node and connection gene, in the dicts' order."""
    total = 0.0
    for key, node in genome.nodes.items():
        total += node.bias + node.response + node.time_constant
        node.key, node.activation, node.aggregation  # noqa: B018 (the read is what is timed)
    for key, connection in genome.connections.items():
        if connection.enabled:
            total += connection.weight
        connection.key, connection.innovation  # noqa: B018
    return total


def read_seconds(run: es.Run) -> float:
    """The read pass over every genome of the run's population."""
    with alone():
        started = time.process_time()
        for genome in run.population.population.values():
            read_every_gene(genome)
        return time.process_time() - started


def measure(item: Shape, neatpar_impl: es.Implementation, folder: str) -> Result:
    """The three runs in lockstep, compared after every generation; the median step times."""
    path = es.write_config(os.path.join(folder, "neat.cfg"), **dict(item.options))
    reference, unread, read = (es.Run.new(impl, path, 1, Timed(es.growth_fitness))
                               for impl in (es.NEAT_PYTHON, neatpar_impl, neatpar_impl))
    compare(reference, unread, read, item, "at the start")
    times: dict[str, list] = {name: [] for name in ("reference", "reference read", "unread", "read", "after read")}
    for generation in range(1, item.growth + item.measured + 1):
        reference_step, unread_step, read_step = (step_seconds(run) for run in (reference, unread, read))
        reference_read, read_read = read_seconds(reference), read_seconds(read)
        if generation > item.growth:
            for name, seconds in (("reference", reference_step), ("reference read", reference_step + reference_read),
                                  ("unread", unread_step), ("read", read_step + read_read),
                                  ("after read", read_step)):
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
                  medians["after read"], item.measured, len(reference.population.species.species),
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
            f"{r.reference_read_ms:,.1f} | {r.read_ms:,.1f} | {r.reference_read_ms / r.read_ms:,.1f}x | "
            f"{r.after_read_ms:,.1f} | {r.after_read_ms / r.unread_ms:.2f} | yes |")


HEADER = ("| {} | generations measured | species | nodes / connections per genome | neat-python ms | neatpar ms "
          "| ratio | neat-python ms, step + gene reads | neatpar ms, step + gene reads | ratio "
          "| neatpar ms, step after a read pass | against the step after none | identical |\n"
          "|---|---|---|---|---|---|---|---|---|---|---|---|---|")

# ---------------------------------------------------------------- XOR at population 10,000 with the kernel

CASES = np.array([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]])
TARGETS = np.array([0.0, 1.0, 1.0, 0.0])


class KernelXor:
    """examples/xor_kernel.py's fitness callback (one kernel call per generation), with the time
    spent in it and in its compile (FeedForwardPopulation.create) added up."""

    def __init__(self):
        self.seconds = self.compile_seconds = 0.0

    def __call__(self, genomes, config):
        started = time.process_time()
        population = FeedForwardPopulation.create(genomes, config)
        self.compile_seconds += time.process_time() - started
        index = np.repeat(np.arange(len(genomes)), len(CASES))
        outputs = population.activate(np.tile(CASES, (len(genomes), 1)), index)
        errors = ((outputs[:, 0] - np.tile(TARGETS, len(genomes))) ** 2).reshape(len(genomes), -1)
        for (_, genome), error in zip(genomes, errors.sum(axis=1)):
            genome.fitness = 4.0 - float(error)
        self.seconds += time.process_time() - started


@dataclasses.dataclass
class Generation:
    """Median milliseconds per generation of one run."""
    total_ms: float
    fitness_ms: float
    compile_ms: float

    @property
    def step_ms(self) -> float:
        return self.total_ms - self.fitness_ms


def xor_config(folder: str, pop_size: int = 10_000) -> str:
    """configs/xor.cfg at `pop_size`, with a fitness threshold no generation reaches."""
    parser = configparser.ConfigParser()
    parser.read(os.path.join(CONFIGS, "xor.cfg"))
    parser["NEAT"]["pop_size"] = str(pop_size)
    parser["NEAT"]["fitness_threshold"] = "10.0"
    path = os.path.join(folder, "xor.cfg")
    with open(path, "w") as f:
        parser.write(f)
    return path


def measure_xor(item: Shape, neatpar_impl: es.Implementation, folder: str) -> tuple[Generation, Generation]:
    """neat-python's classes and neatpar's in lockstep on the kernel's XOR, compared after every generation."""
    path = xor_config(folder)
    runs = [es.Run.new(impl, path, 7, KernelXor(), population_fitness=True) for impl in (es.NEAT_PYTHON, neatpar_impl)]
    times: list[dict] = [{"total": [], "fitness": [], "compile": []} for _ in runs]
    for generation in range(1, item.growth + item.measured + 1):
        for run, kept in zip(runs, times):
            with alone():
                fitness, compiled = run.fitness.seconds, run.fitness.compile_seconds
                started = time.process_time()
                run.step()
                total = time.process_time() - started
            if generation > item.growth:
                kept["total"].append(total)
                kept["fitness"].append(run.fitness.seconds - fitness)
                kept["compile"].append(run.fitness.compile_seconds - compiled)
        identical(runs[0].snapshot(genes=False), runs[1].snapshot(genes=False), item, f"after generation {generation}")
        if runs[0].outcome is not None:
            raise SystemExit(f"{item.label}: the run ended after generation {generation} ({runs[0].outcome})")
    identical(runs[0].snapshot(), runs[1].snapshot(), item, "at the end, genes included")
    return tuple(Generation(*(1e3 * statistics.median(kept[name]) for name in ("total", "fitness", "compile")))
                 for kept in times)


class Clock:
    """An object whose method calls are timed (CPU seconds, added up), otherwise unchanged: a
    reporter, or the stagnation, of the run whose fixed costs are measured."""

    def __init__(self, inner):
        self._inner, self.seconds = inner, 0.0

    def __getattr__(self, name):
        attribute = getattr(self._inner, name)
        if not callable(attribute):
            return attribute

        def timed(*args, **kwargs):
            started = time.process_time()
            try:
                return attribute(*args, **kwargs)
            finally:
                self.seconds += time.process_time() - started
        return timed


@dataclasses.dataclass
class Floor:
    """Median milliseconds per generation of what a step costs whatever neatpar's classes do, in a
    plain run of the XOR script (neatpar's classes, StdOutReporter with species detail)."""
    generation_ms: float
    fitness_ms: float
    run_loops_ms: float      # Population.run's own loops over the population
    reporters_ms: float      # StdOutReporter(True)
    stagnation_ms: float     # neat.DefaultStagnation.update
    words: int               # Mersenne Twister words the step drew
    draws_ms: float          # those words drawn in C (numpy's MT19937), nothing else
    objects_ms: float        # the population's genome objects (key and fitness) made, the old ones freed

    @property
    def total_ms(self) -> float:
        return self.run_loops_ms + self.reporters_ms + self.stagnation_ms + self.draws_ms + self.objects_ms


def words_drawn(before: tuple, after: tuple) -> int:
    """How many 32-bit words `random` drew between two of its states (found by drawing them again
    from `before` a block at a time, the state compared whenever its position matches `after`'s)."""
    replay = random.Random()
    replay.setstate(before)
    target, position = after[1][:624], after[1][624]
    words = 0
    while True:
        state = replay.getstate()[1]
        if state[624] == position and state[:624] == target:
            return words
        block = (position - state[624]) % 624 or 624
        replay.getrandbits(32 * block)
        words += block


def run_loops_seconds(population: neat.Population, fitness) -> float:
    """Population.run's own work on the population around the fitness function: the list handed to
    it, the best genome, the fitness criterion (neat-python's lines, run on the next generation
    once `fitness` has scored it; Population.run scores it again)."""
    fitness(list(population.population.items()), population.config)
    started = time.process_time()
    list(population.population.items())
    best = None
    for g in population.population.values():
        if g.fitness is None:
            raise RuntimeError(f"Fitness not assigned to genome {g.key}")
        if best is None or g.fitness > best.fitness:
            best = g
    population.fitness_criterion(g.fitness for g in population.population.values())
    return time.process_time() - started


class Bare:
    """A genome object at its least: a key and a fitness."""


def objects_seconds(keys: list) -> float:
    """Making one object per genome with its key and fitness into a dict, and freeing the last
    generation's: what neat-python's population of genome objects costs at the least."""
    def generation():
        made = {}
        for key in keys:
            genome = Bare()
            genome.key, genome.fitness = key, None
            made[key] = genome
        return made
    kept = generation()
    started = time.process_time()
    kept = generation()  # noqa: F841 (the old generation is freed here, as in Population.run)
    return time.process_time() - started


def mersenne_seconds(words: int) -> float:
    """`words` 32-bit words of the Mersenne Twister drawn in C, in one call."""
    generator = np.random.MT19937(1)
    started = time.process_time()
    generator.random_raw(words)
    return time.process_time() - started


def measure_floor(item: Shape, path: str) -> Floor:
    """A plain run of the XOR script with neatpar's classes, the fixed costs of its step timed."""
    config = es.neatpar_classes().config(path)
    population = neat.Population(config, seed=7)
    stagnation = population.reproduction.stagnation = Clock(population.reproduction.stagnation)
    reporter = Clock(neat.StdOutReporter(True))
    population.add_reporter(reporter)
    fitness = KernelXor()
    kept: dict[str, list] = {name: [] for name in Floor.__dataclass_fields__}
    with contextlib.redirect_stdout(io.StringIO()):
        for generation in range(1, item.growth + item.measured + 1):
            with alone():
                before = (fitness.seconds, reporter.seconds, stagnation.seconds, random.getstate())
                started = time.process_time()
                population.run(fitness, 1)
                total = time.process_time() - started
                words = words_drawn(before[3], random.getstate())
            if generation > item.growth:
                for name, value in (("generation_ms", total), ("fitness_ms", fitness.seconds - before[0]),
                                    ("reporters_ms", reporter.seconds - before[1]),
                                    ("stagnation_ms", stagnation.seconds - before[2]), ("words", words),
                                    ("draws_ms", mersenne_seconds(words)),
                                    ("objects_ms", objects_seconds(list(population.population))),
                                    ("run_loops_ms", run_loops_seconds(population, fitness))):
                    kept[name].append(value)
    return Floor(**{name: statistics.median(values) * (1 if name == "words" else 1e3)
                    for name, values in kept.items()})


FLOOR_HEADER = ("| part of the step | ms |\n|---|---|")


def floor_rows(f: Floor, share: float = 0.3) -> str:
    """The fixed costs, their share of a generation at the least, and the step a share allows."""
    allowed = share / (1 - share) * f.fitness_ms
    rows = [("Population.run's loops over the population (neat-python)", f.run_loops_ms),
            ("StdOutReporter with species detail (neat-python)", f.reporters_ms),
            ("DefaultStagnation.update (neat-python)", f.stagnation_ms),
            (f"the step's {f.words:,.0f} Mersenne Twister words ({f.words / 1e4:.0f} a genome), drawn in C "
             "and nothing else", f.draws_ms),
            ("10,000 genome objects with a key and a fitness, made and the last ones freed", f.objects_ms),
            ("**these together**", f.total_ms),
            ("the whole step of this run (its generation less its fitness function)", f.generation_ms - f.fitness_ms),
            ("its fitness function", f.fitness_ms),
            (f"the step that {share:.0%} outside the fitness function allows", allowed)]
    table = "\n".join(f"| {label} | {ms:,.2f} |" for label, ms in rows)
    lowest = f.total_ms / (f.total_ms + f.fitness_ms)
    return (f"{FLOOR_HEADER}\n{table}\n\nThese parts alone are {lowest:.0%} of a generation; the whole step is "
            f"{(f.generation_ms - f.fitness_ms) / f.generation_ms:.0%}.")


XOR_HEADER = ("| classes | generations measured | generation ms | fitness function ms (of which compile) "
              "| step ms | outside the fitness function | identical |\n|---|---|---|---|---|---|---|")


def xor_rows(item: Shape, reference: Generation, candidate: Generation) -> str:
    return "\n".join(f"| {name} | {item.measured} | {g.total_ms:,.1f} | {g.fitness_ms:,.1f} ({g.compile_ms:,.1f}) | "
                     f"{g.step_ms:,.1f} | {100 * g.step_ms / g.total_ms:.0f}% | yes |"
                     for name, g in (("neat-python's", reference), ("neatpar's", candidate)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer generations (a smoke run, not the numbers)")
    parser.add_argument("--shapes", default=",".join(list(shapes(False)) + [XOR]),
                        help="comma-separated, of " + ", ".join(list(shapes(False)) + [XOR])
                        + "; 'none' for the scaling tables only")
    parser.add_argument("--no-scaling", action="store_true", help="leave out the scaling tables")
    args = parser.parse_args()
    table = shapes(args.quick)
    chosen = [] if args.shapes == "none" else args.shapes.split(",")
    unknown = [name for name in chosen if name not in table and name != XOR]
    if unknown:
        parser.error(f"unknown shapes {unknown}; choose from {', '.join(list(table) + [XOR])}")
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

        steps = [name for name in chosen if name != XOR]
        if steps:
            print("\n" + HEADER.format("shape"), flush=True)
            for name in steps:
                print(row(table[name].label, result(table[name])), flush=True)
        if XOR in chosen:
            item = xor_shape(args.quick)
            print(f"\n{item.label}: a generation, CPU ms (seed 7)\n" + XOR_HEADER, flush=True)
            print(xor_rows(item, *measure_xor(item, neatpar_impl, folder)), flush=True)
            print(f"\n{item.label}, a plain run (no transcript): what the step costs whatever neatpar's classes do, "
                  "median CPU ms per generation\n" + floor_rows(measure_floor(item, xor_config(folder))), flush=True)
        for title, items in ({} if args.no_scaling else scaling(args.quick)).items():
            print(f"\nHow the step grows with {title}\n" + HEADER.format("shape"), flush=True)
            for item in items:
                print(row(item.label, result(item)), flush=True)


if __name__ == "__main__":
    main()
