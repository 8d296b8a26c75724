"""Seeded runs recorded once and compared on every Python and numpy (tests/test_seeded_results.py,
recorded by tests/fixtures/record_seeded.py): Python's `random` is the same Mersenne Twister on
every version, and neatpar's NEAT step draws from it as neat-python does, so a seeded run gives
the same results on Python 3.10 to 3.13 with numpy 1.23 or 2.x, as long as the floats it adds up
add up alike (see FITNESS_QUANTUM: Python 3.12 changed sum() of floats).

Two runs are recorded: XOR with the NEAT step classes in process (`xor_record`; every generation's
whole state as digests, with the fitness and species readable), and a small seeded `neatpar
evolve` of the ball build (`ball_record`: stats.csv less its timing columns, and winner.json). A
fixture is a JSON file: who recorded it (`recorded_with`), the run's parameters and its record;
`assert_matches` tells the first difference in words.
"""
from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import math
import os
import platform
import tempfile
from typing import Any, NamedTuple

import neat
import numpy as np

from . import evolution as es
from .configs import ball_cfg
from .paths import CONFIGS, ROOT, TESTS
from .runs import TIMING, evolve_ok, stats_table

FIXTURES = os.path.join(TESTS, "fixtures", "seeded")
RECORDER = "tests/fixtures/record_seeded.py"


# ---------------------------------------------------------------- who recorded a fixture


def environment() -> dict[str, str]:
    """The interpreter and libraries a record is made with (no machine paths)."""
    from importlib.metadata import version
    return {"python": platform.python_version(), "implementation": platform.python_implementation(),
            "numpy": np.__version__, "neat-python": version("neat-python"),
            "system": f"{platform.system()} {platform.machine()}"}


def describe(env: dict[str, str]) -> str:
    """'CPython 3.11.7, numpy 1.23.5 (neat-python 2.0.0, Linux x86_64)'."""
    return (f"{env['implementation']} {env['python']}, numpy {env['numpy']} "
            f"(neat-python {env['neat-python']}, {env['system']})")


# ---------------------------------------------------------------- canonical text and digests


def canonical_lines(tree, path: str = "") -> list[str]:
    """A snapshot tree (support/evolution.py: (label, value) pairs, string leaves that keep every
    float's bits) as 'label > label: value' lines, in the tree's order."""
    if not isinstance(tree, tuple):
        return [f"{path}: {tree}"]
    return [line for label, value in tree for line in canonical_lines(value, f"{path} > {label}" if path else label)]


def digest(tree, length: int = 64) -> str:
    """The sha256 of a snapshot tree's canonical text (its first `length` hex digits)."""
    text = "\n".join(canonical_lines(tree)) + "\n"
    return hashlib.sha256(text.encode()).hexdigest()[:length]


# ---------------------------------------------------------------- the XOR run


@dataclasses.dataclass(frozen=True)
class XorRun:
    """What the XOR record runs: configs/xor.cfg with its NEAT step classes, seeded."""
    config: str = "xor.cfg"
    seed: int = 7
    generations: int = 10


XOR = XorRun()


class XorCase(NamedTuple):
    """One row of XOR's truth table."""
    inputs: tuple[float, float]
    expected: float


XOR_CASES = (XorCase((0.0, 0.0), 0.0), XorCase((0.0, 1.0), 1.0), XorCase((1.0, 0.0), 1.0), XorCase((1.0, 1.0), 0.0))

# Fitness values are multiples of 2**-20 (at most 4, so 22 significant bits): any sum of a few
# thousand of them is exact. Python 3.12's sum() of floats compensates (Neumaier) where 3.11's
# adds left to right, and neat-python sums fitness values with sum() (neat.math_util.mean: the
# species' adjusted fitness, the reported average); exact sums are the same on every Python.
FITNESS_QUANTUM = 2.0 ** -20


def xor_fitness(genomes: list, config) -> dict[int, float]:
    """XOR's fitness (4 less the squared errors) of every genome, key -> fitness, from neatpar's
    population kernel (FeedForwardPopulation: neat-python's FeedForwardNetwork in C, which sums a
    node's inputs left to right on every Python; neat-python's own uses sum(), which Python 3.12
    changed), squared errors added exactly (math.fsum) and the total rounded to FITNESS_QUANTUM."""
    from neatpar.nn import FeedForwardPopulation
    population = FeedForwardPopulation.create(genomes, config)
    cases = len(XOR_CASES)
    inputs = np.array([case.inputs for case in XOR_CASES] * len(population))
    outputs = population.activate(inputs, genome_index=np.repeat(np.arange(len(population)), cases))[:, 0].tolist()
    fitness = {}
    for i, key in enumerate(population.genome_keys):
        errors = [out - case.expected for out, case in zip(outputs[i * cases:(i + 1) * cases], XOR_CASES)]
        fitness[key] = round((4.0 - math.fsum(e * e for e in errors)) / FITNESS_QUANTUM) * FITNESS_QUANTUM
    return fitness


def without_warnings(snapshot: tuple) -> tuple:
    """A Run snapshot less the warnings it caught: a new Python may warn about neat-python's code
    (a deprecation) without any result changing, and a warning is not a result."""
    def keep(entry) -> bool:
        value = entry[1]   # text(line): "str 'the line'" (or with double quotes)
        return not (value.startswith("str ") and value[5:].startswith("warning "))
    return tuple((name, tuple(e for e in value if keep(e)) if name == "transcript" else value)
                 for name, value in snapshot)


def state_record(snapshot: tuple) -> dict[str, Any]:
    """A run's state (Run.snapshot) as a record: the digest of all of it, one per part (population
    with every gene, species, counters, random state, reporter output, ...), and the species'
    members in the clear. (`python tests/fixtures/record_seeded.py --text ...` prints the whole
    canonical text, to compare two interpreters line by line when a digest differs.)"""
    parts = dict(snapshot)
    return {"parts": {name: digest(value, 16) for name, value in snapshot},
            "species": {label.split()[-1]: [int(member.split()[-1]) for _, member in dict(state)["members"]]
                        for label, state in parts["species"]},
            "digest": digest(snapshot)}


@dataclasses.dataclass(frozen=True)
class XorState:
    """The XOR run at one point: the start (generation None) or after a generation, with the
    fitness each genome was given in it (repr: every bit) and the run's whole state."""
    generation: int | None
    fitness: dict[str, str]
    snapshot: tuple


class XorRunner:
    """The seeded XOR run of an implementation's classes (support/evolution.py's Run drives it a
    generation at a time); `states` runs it."""

    def __init__(self, impl: es.Implementation, run: XorRun = XOR):
        self.run = run
        self.evaluated: dict[str, str] = {}
        path = os.path.join(CONFIGS, run.config)
        self.driver = es.Run(impl, lambda: neat.Population(impl.config(path), seed=run.seed), self.evaluate,
                             population_fitness=True)

    def evaluate(self, genomes, config) -> None:
        """Scores a generation and keeps its fitness values."""
        fitness = xor_fitness(genomes, config)
        for key, genome in genomes:
            genome.fitness = fitness[key]
        self.evaluated = {str(key): repr(value) for key, value in fitness.items()}

    def states(self):
        """The run's XorState at the start and after every generation, until the last one or the
        fitness threshold met."""
        yield XorState(None, {}, without_warnings(self.driver.snapshot()))
        for generation in range(self.run.generations):
            going = self.driver.step()
            yield XorState(generation, self.evaluated, without_warnings(self.driver.snapshot()))
            if not going:
                return

    @property
    def outcome(self) -> str:
        return self.driver.outcome or "ran on"

    def winner(self) -> dict[str, Any]:
        """The best genome ever, every gene."""
        population = self.driver.population
        return genome_record(population.best_genome, population.config)


def xor_record(impl: es.Implementation, run: XorRun = XOR) -> dict[str, Any]:
    """The seeded XOR run of `impl`'s classes: the start's state, then for every generation the
    fitness each genome was given and the state it left, how the run ended, and the winner."""
    runner = XorRunner(impl, run)
    start, *after = runner.states()
    return {"outcome": runner.outcome, "start": state_record(start.snapshot),
            "generations": [{"generation": state.generation, "fitness": state.fitness,
                             "after": state_record(state.snapshot)} for state in after],
            "winner": runner.winner()}


def genome_record(genome, config) -> dict[str, Any]:
    """A genome as winner.json keeps it (neatpar's genome file format: every float exactly)."""
    from neatpar.genome_file import genome_to_dict
    return genome_to_dict(genome, config)


# ---------------------------------------------------------------- the ball run


@dataclasses.dataclass(frozen=True)
class BallRun:
    """What the ball record runs: a small seeded `neatpar evolve` of unity_builds/ball."""
    generations: int = 3
    pop_size: int = 16
    agents: int = 8
    max_steps: int = 60
    seed: int = 11

    def write_config(self, folder: str) -> str:
        """support/configs.py's ball_cfg with this run's sizes; its path."""
        return ball_cfg(folder, generations=self.generations, interval=self.generations, pop_size=self.pop_size,
                        env_args=f"--agents {self.agents} --max-steps {self.max_steps}",
                        max_steps=self.max_steps, seed=self.seed)


BALL = BallRun()

# stats.csv's columns that differ between two runs of the same seed on the same Python: wall-clock
# time (support/runs.py's TIMING: `seconds`, `scored_steps_per_s`). Every other column is a result.
STATS_TIMING = TIMING

# winner.json holds no time and no path (format, version, key, fitness, the network's shape and
# the genes), so all of it is compared.


@contextlib.contextmanager
def simulator_on_this_python():
    """The simulator builds run the Python that starts them unless NEATPAR_PYTHON names another:
    unset for the block, so that the game's numpy is this interpreter's too."""
    saved = os.environ.pop("NEATPAR_PYTHON", None)
    try:
        yield
    finally:
        if saved is not None:
            os.environ["NEATPAR_PYTHON"] = saved


def ball_record(run: BallRun = BALL) -> dict[str, Any]:
    """The seeded ball run's stats.csv (every row, less the timing columns; cells as written) and winner.json."""
    with tempfile.TemporaryDirectory(prefix="neatpar-seeded-") as folder, simulator_on_this_python():
        out = os.path.join(folder, "run")
        evolve_ok(run.write_config(folder), out)
        rows = stats_table(os.path.join(out, "stats.csv"))
        with open(os.path.join(out, "winner.json")) as f:
            winner = json.load(f)
    return {"stats": [{column: cell for column, cell in row.items() if column not in STATS_TIMING} for row in rows],
            "winner": winner}


# ---------------------------------------------------------------- fixtures


@dataclasses.dataclass(frozen=True)
class Fixture:
    """A recorded run: who recorded it, with which parameters, and what it gave."""
    name: str
    recorded_with: dict[str, str]
    parameters: dict[str, Any]
    record: dict[str, Any]

    @property
    def path(self) -> str:
        return os.path.join(FIXTURES, f"{self.name}.json")

    def write(self) -> str:
        """Writes the fixture file; its path relative to the repository."""
        os.makedirs(FIXTURES, exist_ok=True)
        with open(self.path, "w") as f:
            json.dump({"recorded_with": self.recorded_with, "recorder": RECORDER, "parameters": self.parameters,
                       "record": self.record}, f, indent=1)
            f.write("\n")
        return os.path.relpath(self.path, ROOT)

    @classmethod
    def read(cls, name: str) -> "Fixture":
        with open(os.path.join(FIXTURES, f"{name}.json")) as f:
            data = json.load(f)
        return cls(name, data["recorded_with"], data["parameters"], data["record"])

    @classmethod
    def made_here(cls, name: str, parameters, record: dict[str, Any]) -> "Fixture":
        """A fixture of a record made with this interpreter (`parameters`: the run's frozen dataclass)."""
        return cls(name, environment(), dataclasses.asdict(parameters), record)


# ---------------------------------------------------------------- comparison


def same(expected, actual) -> bool:
    """Exact equality of two JSON records: floats by their repr (so -0.0 is not 0.0), order kept."""
    return json.dumps(expected) == json.dumps(actual)


def first_difference(expected, actual, path: tuple = ()) -> tuple[tuple, str, str] | None:
    """(path, recorded, here) of the first place two JSON records differ, in their order; None if equal."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        for key in list(expected) + [k for k in actual if k not in expected]:
            if key not in actual or key not in expected:
                return path + (key,), _shown(expected.get(key, "(absent)")), _shown(actual.get(key, "(absent)"))
            found = first_difference(expected[key], actual[key], path + (key,))
            if found:
                return found
        if list(expected) != list(actual):
            return path + ("order of keys",), _shown(list(expected)), _shown(list(actual))
        return None
    if isinstance(expected, list) and isinstance(actual, list):
        for i, (e, a) in enumerate(zip(expected, actual)):
            found = first_difference(e, a, path + (str(i),))
            if found:
                return found
        if len(expected) != len(actual):
            return path + ("length",), str(len(expected)), str(len(actual))
        return None
    return None if json.dumps(expected) == json.dumps(actual) else (path, _shown(expected), _shown(actual))


def _shown(value) -> str:
    text = json.dumps(value)
    return text if len(text) <= 200 else text[:200] + "..."


def assert_matches(recorded: Fixture, name: str, parameters, record: dict[str, Any], what: str = "") -> None:
    """Raises an AssertionError telling who recorded the fixture, who differs, and where first."""
    wanted = dataclasses.asdict(parameters)
    assert recorded.parameters == wanted, (f"{recorded.name}.json was recorded with {recorded.parameters}, the "
                                           f"test runs {wanted}: record it again (python {RECORDER} {recorded.name})")
    if same(recorded.record, record):
        return
    path, expected, actual = first_difference(recorded.record, record) or ((), "?", "?")
    hint = (f"\n  (a digest: `python {RECORDER} --text POINT` prints that state in full, to compare "
            f"two interpreters line by line)" if "parts" in path or "digest" in path else "")
    raise AssertionError(
        f"{name}{' (' + what + ')' if what else ''} differs from tests/fixtures/seeded/{recorded.name}.json\n"
        f"  recorded with {describe(recorded.recorded_with)}\n"
        f"  differs on    {describe(environment())}\n"
        f"  first difference at {' > '.join(path) or 'the top'}:\n"
        f"    recorded: {expected}\n"
        f"    here:     {actual}{hint}")
