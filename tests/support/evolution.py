"""What the evolution identity tests (and bench/bench_neat_step.py) share: configs written from
ball.cfg's sections with any option changed, canonical snapshots of a whole run's state, the
deterministic fitness functions, and a driver that runs two implementations of neat-python's
classes side by side in one process, a generation at a time, each on its own random stream.

A snapshot is a tree of (label, value) pairs in the objects' own iteration order; values are
strings that carry the type and, for floats, every bit (float.hex). `first_difference` walks
two trees and names the first field that differs.
"""
from __future__ import annotations

import configparser
import contextlib
import copy
import dataclasses
import functools
import hashlib
import io
import math
import os
import pickle
import random
import tempfile
import traceback
import warnings
from typing import Callable

import neat
from neat.genes import DefaultConnectionGene, DefaultNodeGene
from neat.reporting import BaseReporter

from .configs import ALL_ACTIVATIONS, ALL_AGGREGATIONS
from .paths import CONFIGS

ACTIVATIONS = ALL_ACTIVATIONS.split()
AGGREGATIONS = ALL_AGGREGATIONS.split()
INITIAL_CONNECTIONS = ("unconnected", "fs_neat_nohidden", "fs_neat", "fs_neat_hidden", "full_nodirect",
                       "full", "full_direct", "partial_nodirect", "partial", "partial_direct")
SPECIES_FITNESS_FUNCS = ("min", "max", "mean", "median", "median2")

# ---------------------------------------------------------------- the classes under comparison


@dataclasses.dataclass(frozen=True)
class Implementation:
    """The genome, reproduction and species-set classes a run's neat.Config names."""
    name: str
    genome: type
    reproduction: type
    species_set: type

    def config(self, path: str) -> neat.Config:
        return neat.Config(self.genome, self.reproduction, self.species_set, neat.DefaultStagnation, path)


NEAT_PYTHON = Implementation("neat-python", neat.DefaultGenome, neat.DefaultReproduction, neat.DefaultSpeciesSet)


def neatpar_classes() -> Implementation:
    """neatpar's drop-in classes; an AssertionError naming what is missing if the package has none."""
    import neatpar
    missing = [name for name in ("Genome", "Reproduction", "SpeciesSet") if not hasattr(neatpar, name)]
    assert not missing, f"neatpar exports no {', '.join(missing)} (the drop-in classes for neat-python's defaults)"
    return Implementation("neatpar", neatpar.Genome, neatpar.Reproduction, neatpar.SpeciesSet)


# ---------------------------------------------------------------- configs


def ball_sections() -> dict[str, dict[str, str]]:
    """configs/ball.cfg's neat-python sections (its [neatpar] section left out)."""
    parser = configparser.ConfigParser()
    parser.read(os.path.join(CONFIGS, "ball.cfg"))
    return {name: dict(parser.items(name)) for name in parser.sections() if name != "neatpar"}


# Keys neat-python reads with a default, so ball.cfg leaves them out: time_constant is a node attribute.
OPTIONAL_GENOME_KEYS = tuple(f"time_constant_{item}" for item in (
    "init_mean", "init_stdev", "init_type", "replace_rate", "mutate_rate", "mutate_power", "max_value", "min_value"))


def config_text(**options) -> str:
    """ball.cfg's sections with `options` (any key of any section, by name) changed."""
    sections = ball_sections()
    owner = {key: name for name, items in sections.items() for key in items}
    owner.update({key: "DefaultGenome" for key in OPTIONAL_GENOME_KEYS})
    unknown = sorted(set(options) - set(owner))
    if unknown:
        raise KeyError(f"no config section has the keys {unknown}")
    for key, value in options.items():
        sections[owner[key]][key] = value if isinstance(value, str) else _ini(value)
    return "".join(f"[{name}]\n" + "".join(f"{k} = {v}\n" for k, v in items.items()) + "\n"
                   for name, items in sections.items())


def _ini(value) -> str:
    return str(value).lower() if isinstance(value, bool) else repr(value) if isinstance(value, float) else str(value)


def write_config(path: str, **options) -> str:
    with open(path, "w") as f:
        f.write(config_text(**options))
    return path


# ---------------------------------------------------------------- fitness functions
# Each is a deterministic function of the genome, so two identical populations get identical fitness.


def anchor(config) -> neat.DefaultGenome:
    """A fixed neat-python genome (output nodes, three input links), built without a random draw."""
    gc = config.genome_config
    genome = neat.DefaultGenome(0)
    for key in gc.output_keys:
        node = DefaultNodeGene(key)
        node.bias, node.response, node.time_constant = 0.0, 1.0, 1.0
        node.activation, node.aggregation = gc.activation_options[0], gc.aggregation_options[0]
        genome.nodes[key] = node
    for innovation, source in enumerate(gc.input_keys[:3], start=1):
        link = DefaultConnectionGene((source, gc.output_keys[0]), innovation=innovation)
        link.weight, link.enabled = 0.5, True
        genome.connections[link.key] = link
    return genome


def size_fitness(genome, config) -> float:
    """Structure through genome.size() and genome.key, weights through genome.distance to a fixed
    genome (no gene object read), quantized: many ties, many negatives."""
    nodes, enabled = genome.size()
    weights = genome.distance(anchor(config), config.genome_config)
    return float(nodes) - 0.25 * enabled + 0.5 * (genome.key % 3) + math.floor(2.0 * weights) / 2.0 - 3.0


def key_fitness(genome, config) -> float:
    """From the genome key alone: reads no gene."""
    return float(genome.key % 5) - 2.0


def tied_fitness(genome, config) -> float:
    """The same negative fitness for everyone (no species ever improves; every spawn from the zero-sum branch)."""
    return -1.0


def _cases(num_inputs: int) -> list[list[float]]:
    return [[math.sin(1.7 * i + 0.9 * c) for i in range(num_inputs)] for c in range(3)]


def network_fitness(genome, config) -> float:
    """Builds neat-python's FeedForwardNetwork (RecurrentNetwork if not feed_forward) from the gene
    objects and scores it on fixed inputs; rounded so that near-equal networks tie."""
    gc = config.genome_config
    try:
        if gc.feed_forward:
            net = neat.nn.FeedForwardNetwork.create(genome, config)
        else:
            net = neat.nn.RecurrentNetwork.create(genome, config)
        error = math.fsum((out - 0.5) ** 2 for case in _cases(gc.num_inputs) for out in net.activate(case))
    except (ArithmeticError, ValueError):  # square/cube overflow, sin(inf): a fixed, finite score
        return -1000.0
    return -1000.0 if not math.isfinite(error) else round(-min(error, 1000.0), 2)


def editing_fitness(genome, config) -> float:
    """Edits gene objects before scoring (the lowest connection's weight, output 0's bias, both
    rounded), as user code may; the next generation must inherit the edited values."""
    if genome.connections:
        gene = genome.connections[min(genome.connections)]
        gene.weight = round(gene.weight * 0.75, 1)
    node = genome.nodes[config.genome_config.output_keys[0]]
    node.bias = round(node.bias, 1)
    return network_fitness(genome, config)


def mixed_fitness(genome, config) -> float:
    """Gene objects read for even keys only: a population of genomes some of which were read."""
    return network_fitness(genome, config) if genome.key % 2 == 0 else size_fitness(genome, config)


def growth_fitness(genome, config) -> float:
    """Cheap selection pressure for benchmarks, reading no gene object: rewards size (genomes grow,
    species form), a little of the distance to a fixed genome breaks the ties."""
    nodes, enabled = genome.size()
    return nodes + 0.1 * enabled + 0.01 * genome.distance(anchor(config), config.genome_config)


FITNESS = {"size": size_fitness, "key": key_fitness, "tied": tied_fitness, "network": network_fitness,
           "editing": editing_fitness, "mixed": mixed_fitness}
# The ones that read no gene object (genome.size, genome.key, genome.distance only).
UNREAD = ("size", "key", "tied")


def evaluator(fitness: Callable) -> Callable:
    """neat-python's fitness-function shape around a per-genome function."""
    def evaluate(genomes, config):
        for _, genome in genomes:
            genome.fitness = fitness(genome, config)
    return evaluate


# ---------------------------------------------------------------- snapshots


def text(value) -> str:
    """A scalar as a string that keeps its type; floats bit for bit."""
    if isinstance(value, float):
        return "float " + value.hex()
    return f"{type(value).__name__} {value!r}"


def random_text(state) -> str:
    """random.getstate() in one line: the Mersenne Twister's position, gauss_next and a digest of it all."""
    version, words, gauss_next = state
    return f"position {words[-1]} gauss_next {text(gauss_next)} digest {hashlib.sha1(repr(state).encode()).hexdigest()}"


def _class(obj) -> str:
    return f"{type(obj).__module__}.{type(obj).__qualname__}"


def node_state(gene) -> tuple:
    return (("class", _class(gene)), ("key", text(gene.key)), ("bias", text(gene.bias)),
            ("response", text(gene.response)), ("activation", text(gene.activation)),
            ("aggregation", text(gene.aggregation)), ("time_constant", text(gene.time_constant)))


def connection_state(gene) -> tuple:
    return (("class", _class(gene)), ("key", text(gene.key)), ("innovation", text(gene.innovation)),
            ("weight", text(gene.weight)), ("enabled", text(gene.enabled)))


def genome_state(genome) -> tuple:
    """Key, fitness, size() and every gene, in the dicts' order."""
    return (("key", text(genome.key)), ("fitness", text(genome.fitness)), ("size", text(genome.size())),
            ("nodes", tuple((f"node {k!r}", node_state(g)) for k, g in genome.nodes.items())),
            ("connections", tuple((f"connection {k!r}", connection_state(g)) for k, g in genome.connections.items())))


def species_state(species, population: dict) -> tuple:
    rep = species.representative
    return (("key", text(species.key)), ("created", text(species.created)),
            ("last_improved", text(species.last_improved)),
            ("representative", text(None if rep is None else rep.key)),
            ("representative is the population's genome", text(rep is not None and population.get(rep.key) is rep)),
            ("members", tuple((f"member {i}", text(k)) for i, k in enumerate(species.members))),
            ("members are the population's genomes",
             text(all(population.get(k) is g for k, g in species.members.items()))),
            ("fitness", text(species.fitness)), ("adjusted_fitness", text(species.adjusted_fitness)),
            ("fitness_history", tuple((f"entry {i}", text(f)) for i, f in enumerate(species.fitness_history))))


def tracker_state(tracker) -> tuple:
    return (("global_counter", text(tracker.global_counter)),
            ("generation_innovations", tuple((text(k), text(v)) for k, v in tracker.generation_innovations.items())))


def counters_state(population: neat.Population) -> tuple:
    """The counters a run carries between generations (repr of itertools.count: next() would move them)."""
    gc = population.config.genome_config
    return (("genome indexer", repr(population.reproduction.genome_indexer)),
            ("node indexer", repr(getattr(gc, "node_indexer", "missing"))),
            ("species indexer", repr(population.species.indexer)),
            ("innovation tracker", tracker_state(population.reproduction.innovation_tracker)),
            ("genome config's tracker is the reproduction's",
             text(getattr(gc, "innovation_tracker", None) is population.reproduction.innovation_tracker)))


def population_state(population: neat.Population, genes: bool = True) -> tuple:
    """Everything a generation hands to the next; `genes=False` leaves out the genes (and size()),
    for runs that must not be read between generations."""
    pop, species = population.population, population.species.species
    genomes = tuple((f"genome {k!r}", genome_state(g) if genes else (("key", text(g.key)), ("fitness", text(g.fitness))))
                    for k, g in pop.items())
    best = population.best_genome
    return (("generation", text(population.generation)), ("population", genomes),
            ("species", tuple((f"species {k!r}", species_state(s, pop)) for k, s in species.items())),
            ("genome_to_species", tuple((text(k), text(v)) for k, v in population.species.genome_to_species.items())),
            ("counters", counters_state(population)),
            ("ancestors", tuple((text(k), text(v)) for k, v in population.reproduction.ancestors.items())),
            ("best genome", text(None if best is None else (best.key, best.fitness))),
            ("random", random_text(random.getstate())))


def without_genes(snapshot: tuple) -> tuple:
    """A full snapshot as `snapshot(genes=False)` gives it: each genome's key and fitness only (the
    first two entries of genome_state)."""
    return tuple((name, tuple((k, state[:2]) for k, state in value) if name == "population" else value)
                 for name, value in snapshot)


def first_difference(expected, actual, path: tuple = ()):
    """(path, expected, actual) of the first field where two snapshot trees differ, or None."""
    if isinstance(expected, tuple) and isinstance(actual, tuple):
        for i, (e, a) in enumerate(zip(expected, actual)):
            if e[0] != a[0]:
                return path + (f"entry {i}",), e[0], a[0]
            found = first_difference(e[1], a[1], path + (e[0],))
            if found:
                return found
        if len(expected) != len(actual):
            longer = expected if len(expected) > len(actual) else actual
            return (path + ("length",), f"{len(expected)} entries", f"{len(actual)} entries "
                    f"(first unmatched: {longer[min(len(expected), len(actual))][0]})")
        return None
    if isinstance(expected, tuple) or isinstance(actual, tuple):
        return path, _short(expected), _short(actual)
    return None if expected == actual else (path, expected, actual)


def _short(value) -> str:
    return f"{len(value)} entries" if isinstance(value, tuple) else value


def assert_same(expected, actual, where: str, names: tuple[str, str] = ("neat-python", "candidate"),
                context: str = "") -> None:
    """Raises an AssertionError naming the first differing field (then `context`, e.g. the config).
    Equal trees are told at once by tuple equality, which holds exactly when first_difference finds
    nothing (every entry a (name, value) pair, every leaf a string); only a difference is searched
    for field by field."""
    if expected == actual:
        return
    found = first_difference(expected, actual)
    if found:
        path, e, a = found
        raise AssertionError(f"{where}: {' > '.join(path)}: {names[0]} has {e}, {names[1]} has {a}"
                             + (f"\n  config: {context}" if context else ""))


# ---------------------------------------------------------------- runs


class Transcript(BaseReporter):
    """Records every reporter call (with the evaluated fitness of every genome) as lines."""

    def __init__(self, lines: list):
        self.lines = lines

    def start_generation(self, generation):
        self.lines.append(f"start_generation {generation}")

    def post_evaluate(self, config, population, species, best_genome):
        # kept raw (repr, at the snapshot, tells every float apart): cheap inside a timed generation
        fitness = tuple((k, g.fitness) for k, g in population.items())
        self.lines.append(("post_evaluate best", best_genome.key, "fitness", fitness))

    def post_reproduction(self, config, population, species):
        self.lines.append(f"post_reproduction {list(population)}")

    def species_stagnant(self, sid, species):
        self.lines.append(f"species_stagnant {sid} members {list(species.members)}")

    def complete_extinction(self):
        self.lines.append("complete_extinction")

    def found_solution(self, config, generation, best):
        self.lines.append(f"found_solution {generation} {best.key}")

    def end_generation(self, config, population, species_set):
        self.lines.append(f"end_generation {len(population)} genomes {len(species_set.species)} species")

    def info(self, msg):
        self.lines.append(f"info {msg}")


class Run:
    """One evolution driven a generation at a time. Its random stream is its own (swapped in for
    each turn), so two runs can alternate in one process; what its reporters print (StdOutReporter
    with species detail, Checkpointer), what goes to stderr and every warning are kept as lines,
    less the wall-clock times StdOutReporter prints. `fitness` scores one genome; with
    `population_fitness`, it is neat-python's fitness callback itself (genomes, config)."""

    def __init__(self, impl: Implementation, population_maker: Callable, fitness: Callable,
                 checkpoints: str | None = None, population_fitness: bool = False):
        self.impl, self.fitness, self.checkpoints = impl, fitness, checkpoints
        self.evaluate = fitness if population_fitness else evaluator(fitness)
        self.lines: list = []
        self.history: list = []  # every line of the run, for tests that check what happened
        self.outcome: str | None = None
        self.failure: str | None = None
        self.rng = random.getstate()
        with self.turn():
            self.population = population_maker()
        self.population.add_reporter(neat.StdOutReporter(True))
        self.population.add_reporter(Transcript(self.lines))
        if checkpoints is not None:
            self.population.add_reporter(neat.Checkpointer(1, None, checkpoints))

    @classmethod
    def new(cls, impl: Implementation, path: str, seed: int, fitness: Callable, checkpoints: str | None = None,
            population_fitness: bool = False):
        return cls(impl, lambda: neat.Population(impl.config(path), seed=seed), fitness, checkpoints,
                   population_fitness)

    @classmethod
    def restored(cls, impl: Implementation, checkpoint: str, fitness: Callable, path: str | None = None,
                 checkpoints: str | None = None):
        """A run continued from a neat-python checkpoint: with the config it saved (path None; the
        classes are the checkpoint's) or with a fresh config of `impl`'s classes read from `path`."""
        def restore():
            new_config = None if path is None else impl.config(path)
            return neat.Checkpointer.restore_checkpoint(checkpoint, new_config)
        return cls(impl, restore, fitness, checkpoints)

    @contextlib.contextmanager
    def turn(self):
        """This run's random stream, output and warnings for the block."""
        random.setstate(self.rng)
        out, err = io.StringIO(), io.StringIO()
        try:
            with warnings.catch_warnings(record=True) as caught, \
                    contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                warnings.simplefilter("always")
                yield
        finally:
            self.rng = random.getstate()
            self.lines.extend(self._printed(out.getvalue() + err.getvalue()))
            self.lines.extend(f"warning {w.category.__name__}: {w.message}" for w in caught)

    def _printed(self, output: str) -> list[str]:
        lines = [line for line in output.splitlines() if not line.startswith("Generation time:")]
        if self.checkpoints is not None:
            lines = [line.replace(self.checkpoints, "<checkpoints>") for line in lines]
        return lines

    def step(self) -> bool:
        """One generation (Population.run(f, 1)); False once the run has ended: an exception
        (CompleteExtinctionException, a configuration conflict, ...) or a fitness threshold met."""
        if self.outcome is not None:
            return False
        before = self.population.generation
        with self.turn():
            try:
                self.population.run(self.evaluate, 1)
            except Exception as error:  # part of the outcome both implementations must share
                self.outcome = f"{type(error).__name__}: {error}"
                self.failure = traceback.format_exc()
        if self.outcome is None and self.population.generation == before:
            self.outcome = "fitness threshold met"
        return self.outcome is None

    def snapshot(self, genes: bool = True) -> tuple:
        """The run's whole state (how it ended first, if it has), with the lines printed since the last snapshot."""
        with self.turn():
            state = population_state(self.population, genes)
        lines, self.lines[:] = tuple(self.lines), []
        self.history.extend(lines)
        return (("outcome", text(self.outcome)),) + state + (
            ("transcript", tuple((f"line {i}", text(line)) for i, line in enumerate(lines))),)


def assert_runs_agree(reference: Run, candidate: Run, generations: int, where: str, genes: bool = True,
                      context: str = "") -> int:
    """Steps both runs `generations` times (fewer if the reference ends) and compares their whole
    state at the start and after every generation; returns the generations run."""
    names = (reference.impl.name, candidate.impl.name)
    _compare(reference, candidate, f"{where}, at the start", names, genes, context)
    done = 0
    while done < generations:
        going = reference.step()
        candidate.step()
        done += 1
        _compare(reference, candidate, f"{where}, after generation {done}", names, genes, context)
        if not going:
            break
    return done


def _compare(reference: Run, candidate: Run, where: str, names: tuple, genes: bool, context: str) -> None:
    try:
        assert_same(reference.snapshot(genes), candidate.snapshot(genes), where, names, context)
    except AssertionError as error:
        raised = f"\n{names[1]} raised:\n{candidate.failure}" if candidate.failure else ""
        raise AssertionError(f"{error}{raised}") from None


# ---------------------------------------------------------------- deliberately broken classes
# Each differs from neat-python in one detail; the tests prove that a run comparison catches it.
# Each keeps its neat-python class's __name__ (so a config's sections read the same) and its own
# __qualname__ (so pickle finds it).


def neat_named(cls: type) -> type:
    cls.__name__ = cls.__mro__[1].__name__
    return cls


@neat_named
class OneUlpGenome(neat.DefaultGenome):
    """Moves one connection weight of genome 40 by one unit in the last place after mutating."""

    def mutate(self, config):
        super().mutate(config)
        if self.key == 40 and self.connections:
            gene = next(iter(self.connections.values()))
            gene.weight = math.nextafter(gene.weight, math.inf)


@neat_named
class ExtraDrawGenome(neat.DefaultGenome):
    """Draws one extra random number before genome 40 mutates (and changes nothing else)."""

    def mutate(self, config):
        if self.key == 40:
            random.random()
        super().mutate(config)


@neat_named
class SortedCrossoverGenome(neat.DefaultGenome):
    """The right genes, in sorted key order instead of neat-python's."""

    def configure_crossover(self, genome1, genome2, config):
        super().configure_crossover(genome1, genome2, config)
        self.connections = dict(sorted(self.connections.items()))


@neat_named
class DistanceUlpGenome(neat.DefaultGenome):
    """Genetic distance one unit in the last place larger."""

    def distance(self, other, config):
        return math.nextafter(super().distance(other, config), math.inf)


@neat_named
class KeptInnovationsReproduction(neat.DefaultReproduction):
    """Forgets to start each generation's innovation list afresh (a repeated mutation keeps its old number)."""

    def reproduce(self, config, species, pop_size, generation):
        self.innovation_tracker.reset_generation = lambda: None
        return super().reproduce(config, species, pop_size, generation)


@neat_named
class MovedMemberSpeciesSet(neat.DefaultSpeciesSet):
    """Moves the last genome of the largest species to the front of its member list."""

    def speciate(self, config, population, generation):
        super().speciate(config, population, generation)
        biggest = max(self.species.values(), key=lambda s: len(s.members))
        if len(biggest.members) > 1:
            last = list(biggest.members)[-1]
            biggest.members = {last: biggest.members[last], **biggest.members}


def broken(name: str, genome: type = neat.DefaultGenome, reproduction: type = neat.DefaultReproduction,
           species_set: type = neat.DefaultSpeciesSet) -> Implementation:
    """neat-python's classes with one replaced."""
    return Implementation(name, genome, reproduction, species_set)


def copies(genome):
    """The genome through pickle and through copy.deepcopy."""
    return pickle.loads(pickle.dumps(genome, protocol=pickle.HIGHEST_PROTOCOL)), copy.deepcopy(genome)


def genes_of(genome) -> tuple:
    """A genome's key, fitness and genes, exactly (floats as hex), whatever its class."""
    from neatpar.evolution.gene_arrays import gene_dicts
    nodes, connections = gene_dicts(genome)
    return (genome.key, genome.fitness,
            [(k, n.bias.hex(), n.response.hex(), n.activation, n.aggregation) for k, n in nodes.items()],
            [(k, c.innovation, c.weight.hex(), c.enabled) for k, c in connections.items()])


@functools.lru_cache(maxsize=None)
def grown(feed_forward: bool, pop_size: int) -> neat.Population:
    """A population of neatpar's classes in several species after four generations (built once per
    arguments; copy what a test changes)."""
    path = write_config(tempfile.mkdtemp() + "/neat.cfg", pop_size=pop_size, num_inputs=3, num_outputs=2,
                        feed_forward=feed_forward, conn_add_prob=0.6, node_add_prob=0.4, compatibility_threshold=1.2)
    pop = neat.Population(neatpar_classes().config(path), seed=3)
    pop.run(lambda genomes, config: [setattr(g, "fitness", float(g.size()[1] + k % 5)) for k, g in genomes], 4)
    return pop


def as_neat_genome(genome) -> neat.DefaultGenome:
    """A neat.DefaultGenome with the genome's key, fitness and (copied) genes."""
    twin = neat.DefaultGenome(genome.key)
    twin.fitness = genome.fitness
    twin.nodes, twin.connections = copy.deepcopy((genome.nodes, genome.connections))
    return twin
