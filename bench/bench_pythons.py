"""Benchmark: one generation, the NEAT step and the kernel on two Pythons in one run, side by side.

The baseline is Python 3.11 with numpy 1.23.5 and neatpar installed (the environment `make
test-matrix` leaves in .venvs/py3.11-numpy1.23.5); the candidate is by default the interpreter
running this script (the suite's default Python, with numpy 2).

The script runs itself as a child (--child, which prints JSON) in each interpreter, baseline and
candidate alternating for --rounds rounds (which goes first swaps every round), so that the
machine's noise and drift hit both alike. Each child measures everything once; the table gives
each measurement's median over the rounds on each side, the candidate's speed relative to the
baseline's (above 1: the candidate is faster), and the range of the per-round ratios (a round's
baseline against the same round's candidate) as the gauge of the noise. Measured in each child:

- one generation on the ball simulator (unity_builds/ball), --agents agents (256) each driven by
  its own realistic evolved genome (made once by this process, the same on both sides), through
  EnvEvaluator with the bulk step codec, after a first generation that also starts the simulator:
  bench_evolve.py's measurement, the median of --generations (5) generations. Twice: with the
  simulator on the candidate's interpreter on both sides (a Unity game is the same program whatever
  Python drives it: what differs is neatpar's Python side, also given as the CPU time of neatpar's
  process in a generation, which other work on the machine leaves out), and with the simulator on
  each side's own interpreter (the whole stack, as `make demo` runs the stand-in builds). Each time
  also the simulator's own compute per agent-step, from its log (with the simulator on the same
  interpreter on both sides, a control that should not move);
- the NEAT step: bench_neat_step.py's CPU ms per generation (fitness function excluded) with
  neatpar's classes at population 150 with 336 inputs and 9 outputs (and that run's first
  generation, which costs about twice a later one, apart), and with neatpar's and
  neat-python's classes on the recurrent population of 300 with every activation and aggregation
  mutating (neat-python's step is pure Python: a gauge of the interpreter itself);
- the population kernel: one step of the agents' networks (FeedForwardPopulation.activate, median
  wall time as bench_kernel.py measures it), and the compile of their genomes.

"same work" says every child did the same work for a measurement: the same agent-steps and the same
fitness of every genome in every generation; the same NEAT run state bit for bit (each genome's key
and fitness, species, innovation numbers, counters, random state, reporter output; not the genes,
whose snapshot takes longer than the run), but for the species' adjusted fitness: a mean through
sum(), which Python 3.12 made compensated, so its last bits differ between 3.11 and 3.13 (with
neat-python's classes as with neatpar's); the same kernel outputs bit for bit. The reading:
"within noise" when the per-round ratios straddle 1 or the ratio of the medians is within 3% of 1,
else faster or slower.
Usage: python bench/bench_pythons.py [--baseline PYTHON] [--candidate PYTHON] [--rounds N] [--quick]
"""
from __future__ import annotations

import argparse
import dataclasses
import hashlib
import importlib.metadata
import json
import os
import pickle
import random
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from typing import NamedTuple

import numpy

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import bench_neat_step  # noqa: E402
from bench_evolve import bulk_switch, environment_variable  # noqa: E402
from bench_kernel import median_time  # noqa: E402
from realistic_genomes import load_config, realistic, write_config  # noqa: E402

from neatpar import EnvEvaluator  # noqa: E402
from neatpar.config.behaviors import BehaviorRole  # noqa: E402
from neatpar.config.settings_model import Settings  # noqa: E402
from neatpar.nn import FeedForwardPopulation  # noqa: E402
from neatpar.processes import cpu_count  # noqa: E402

es = bench_neat_step.es  # the identity tests' runs and snapshots (tests/support/evolution.py)

BASELINE = os.path.join(".venvs", "py3.11-numpy1.23.5")  # the environment `make test-matrix` makes
PROGRAMS = (os.path.join("bin", "python"), os.path.join("Scripts", "python.exe"))  # a venv's Python, POSIX or Windows
GENOME_SEED = 2        # bench_evolve.py's genomes (the kernel's use them too: made once, not twice)
NOISE = 0.03           # a ratio of medians within this of 1 reads as noise whatever the rounds say
CHILD_TIMEOUT = 900    # seconds a child may take before it is stopped


class Measure(NamedTuple):
    """How a measurement reads: its row label, unit, digits, and whether more is faster."""
    label: str
    unit: str
    digits: int
    higher_is_faster: bool


MEASURES = {
    "generation": Measure("one generation on the ball simulator, {agents} agents (simulator on the candidate's "
                          "Python on both sides)", "agent-steps/s", 0, True),
    "python_cpu": Measure("... its Python side: the CPU time of neatpar's process in a generation", "ms CPU", 1,
                          False),
    "simulator": Measure("... the simulator's compute per agent-step (the same program on both sides: a control)",
                         "us", 2, False),
    "generation_own": Measure("one generation on the ball simulator, {agents} agents (simulator on each side's "
                              "own Python)", "agent-steps/s", 0, True),
    "simulator_own": Measure("... the simulator's compute per agent-step, on each side's own Python", "us", 2, False),
    "step_336x9": Measure("NEAT step, neatpar's classes: {336x9}", "ms CPU", 1, False),
    "first_336x9": Measure("... the first generation of that run (the step from the initial population)", "ms CPU",
                           1, False),
    "step_recurrent": Measure("NEAT step, neatpar's classes: {recurrent300}", "ms CPU", 2, False),
    "step_recurrent_neat_python": Measure("NEAT step, neat-python's classes: {recurrent300}", "ms CPU", 1, False),
    "kernel": Measure("population kernel: one step of {agents} agents' networks", "ms", 3, False),
    "compile": Measure("population kernel: compiling {agents} genomes (FeedForwardPopulation.create)", "ms", 1, False),
}


class Sample(NamedTuple):
    """One child's value of one measurement, and a digest of the work behind it."""
    value: float
    work: str


class Environment(NamedTuple):
    """What a child ran on."""
    python: str
    numpy: str
    neat_python: str
    neatpar: str

    def title(self) -> str:
        """The name the table's header gives it."""
        return f"Python {self.python}, numpy {self.numpy}"


class Child(NamedTuple):
    """A child's JSON: its environment and its samples by measurement."""
    environment: Environment
    samples: dict


class Side(NamedTuple):
    """One of the two environments compared."""
    role: str
    python: str


class Row(NamedTuple):
    """One measurement over the rounds: each side's values in round order, and whether the work matched."""
    key: str
    baseline: list
    candidate: list
    same_work: bool


class Played(NamedTuple):
    """One measured generation: its wall time, this process's CPU time in it, and its agent-steps."""
    seconds: float
    cpu_seconds: float
    agent_steps: int


class Plan(NamedTuple):
    """How much each child measures (the defaults, or --quick's smoke run)."""
    agents: int
    max_steps: int
    generations: int
    kernel_reps: int
    compile_reps: int
    shapes: dict


# ---------------------------------------------------------------- the child: every measurement once


def plan(options) -> Plan:
    """The child's workload: bench_neat_step's shapes with fewer generations (a child takes 10-20 s)."""
    table = bench_neat_step.shapes(options.quick)
    quick = options.quick
    shapes = {"336x9": dataclasses.replace(table["336x9"], growth=1, measured=1 if quick else 4),
              "recurrent300": dataclasses.replace(table["recurrent300"], growth=1 if quick else 2,
                                                  measured=2 if quick else 5)}
    return Plan(options.agents, options.max_steps, options.generations, 200 if quick else 2000, 3 if quick else 20,
                shapes)


def environment() -> Environment:
    """This interpreter's Python and numpy, and the neat-python and neatpar it imports."""
    return Environment(".".join(map(str, sys.version_info[:3])), numpy.__version__,
                       importlib.metadata.version("neat-python"), importlib.metadata.version("neatpar"))


def digest(value) -> str:
    """A short digest of bytes or of a value's repr: what tells two children's work apart."""
    data = value if isinstance(value, bytes) else repr(value).encode()
    return hashlib.sha1(data).hexdigest()[:12]


def simulator_python(python: str):
    """NEATPAR_PYTHON for the simulators launched in the block: the interpreter the build runs on."""
    return environment_variable("NEATPAR_PYTHON", python)


def generation(config, genomes, work: Plan, python: str, logs: str) -> dict:
    """bench_evolve.py's generation through EnvEvaluator (simulator started and warmed up by a first
    generation, bulk codec on), the median of the generations after it; with this process's CPU time
    (the Python side: the networks run in this process), which other work on the machine leaves out,
    and the simulator's own compute per agent-step over the whole session (from its log)."""
    settings = Settings(env=os.path.join(ROOT, "unity_builds", "ball"),
                        behaviors=(BehaviorRole("Ball3D?team=0", "population"),),
                        env_args=("--agents", str(work.agents), "--max-steps", str(work.max_steps)),
                        max_steps=work.max_steps, worker_id=random.randint(2000, 4000))
    pairs = [(g.key, g) for g in genomes[:work.agents]]
    played, fitness = [], []
    with simulator_python(python), bulk_switch(True), \
            EnvEvaluator.from_settings(settings, log_folder=logs) as evaluator:
        evaluator.evaluate(pairs, config)
        session_steps = evaluator.last_stats.agent_steps
        for _ in range(work.generations):
            started = time.process_time()
            evaluator.evaluate(pairs, config)
            stats = evaluator.last_stats
            played.append(Played(stats.seconds, time.process_time() - started, stats.agent_steps))
            fitness.append([g.fitness for _, g in pairs])
        worker = evaluator.environment.bridge.worker_id
    session_steps += sum(p.agent_steps for p in played)
    work_done = digest((fitness, [p.agent_steps for p in played]))
    return {"rate": Sample(statistics.median(p.agent_steps / p.seconds for p in played), work_done),
            "cpu": Sample(1e3 * statistics.median(p.cpu_seconds for p in played), work_done),
            "simulator": Sample(1e3 * simulator_ms(logs, worker) / session_steps, work_done)}


def simulator_ms(logs: str, worker: int) -> float:
    """The simulator's compute over its session, in ms: the sum of the compute_ms its log gives each exchange."""
    with open(os.path.join(logs, f"Player-{worker}.log")) as f:
        return sum(float(ms) for ms in re.findall(r"compute_ms ([0-9.]+)", f.read()))


def neat_step(shape, impl, folder: str) -> dict:
    """bench_neat_step.py's step time, one implementation alone: the median CPU ms of the generations
    measured after `growth` ones, and the first generation's (the step from the initial population)."""
    path = es.write_config(os.path.join(folder, "neat.cfg"), **dict(shape.options))
    run = es.Run.new(impl, path, 1, bench_neat_step.Timed(es.growth_fitness))
    seconds = [bench_neat_step.step_seconds(run) for _ in range(shape.growth + shape.measured)]
    if run.outcome is not None:
        raise SystemExit(f"{shape.label}: the run ended early ({run.outcome})")
    state = digest(without(run.snapshot(genes=False), "adjusted_fitness"))
    return {"step": Sample(1e3 * statistics.median(seconds[shape.growth:]), state),
            "first": Sample(1e3 * seconds[0], state)}


def without(tree, label: str):
    """A snapshot tree ((label, value) pairs all the way down) less every entry named `label`: the
    species' adjusted fitness is a mean through Python's sum(), whose last bits changed in Python
    3.12 (compensated summation), for neat-python's classes and neatpar's alike."""
    if not isinstance(tree, tuple):
        return tree
    return tuple((name, without(value, label)) for name, value in tree if name != label)


def kernel(config, genomes, work: Plan) -> dict:
    """bench_kernel.py's step of the agents' networks, and their compile; inputs from Python's own
    generator, so that both sides feed the kernel the same numbers whatever their numpy."""
    draw = random.Random(0)
    obs = numpy.array([[draw.gauss(0.0, 1.0) for _ in range(8)] for _ in genomes])
    population = FeedForwardPopulation.create(genomes, config)
    outputs = digest(population.activate(obs).tobytes())
    return {"kernel": Sample(1e3 * median_time(lambda: population.activate(obs), work.kernel_reps), outputs),
            "compile": Sample(1e3 * median_time(lambda: FeedForwardPopulation.create(genomes, config),
                                                work.compile_reps), outputs)}


def exit_on_sigterm() -> None:
    """SIGTERM as SystemExit, so that `with` blocks unwind: a child closes its simulator, the parent stops its child."""
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))


def child(options) -> None:
    """Every measurement once in this interpreter; prints the environment and the samples as JSON."""
    exit_on_sigterm()
    work = plan(options)
    with open(options.genomes, "rb") as f:
        genomes = pickle.load(f)
    samples = {}
    with tempfile.TemporaryDirectory(prefix="neatpar-bench-") as folder:
        config_path = os.path.join(folder, "genomes.cfg")
        write_config(config_path, len(genomes))
        config = load_config(config_path)
        pinned = generation(config, genomes, work, options.simulator_python, os.path.join(folder, "pinned"))
        samples.update(generation=pinned["rate"], python_cpu=pinned["cpu"], simulator=pinned["simulator"])
        own = generation(config, genomes, work, sys.executable, os.path.join(folder, "own"))
        samples.update(generation_own=own["rate"], simulator_own=own["simulator"])
        neatpar_classes = es.neatpar_classes()
        wide = neat_step(work.shapes["336x9"], neatpar_classes, folder)
        samples.update(step_336x9=wide["step"], first_336x9=wide["first"])
        samples["step_recurrent"] = neat_step(work.shapes["recurrent300"], neatpar_classes, folder)["step"]
        samples["step_recurrent_neat_python"] = neat_step(work.shapes["recurrent300"], es.NEAT_PYTHON,
                                                          folder)["step"]
        samples.update(kernel(config, genomes, work))
    print(json.dumps({"environment": environment()._asdict(),
                      "samples": {key: sample._asdict() for key, sample in samples.items()}}))


# ---------------------------------------------------------------- the parent: rounds and the table


def run_child(side: Side, options, genomes_path: str, folder: str) -> Child:
    """One child on `side`'s interpreter, working in `folder` (nothing it writes lands in the
    checkout); stopped, with its simulator, if it fails or is interrupted."""
    command = [side.python, os.path.abspath(__file__), "--child", "--genomes", genomes_path,
               "--simulator-python", options.candidate, "--agents", str(options.agents),
               "--max-steps", str(options.max_steps), "--generations", str(options.generations)]
    process = subprocess.Popen(command + (["--quick"] if options.quick else []), cwd=folder,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        out, err = process.communicate(timeout=CHILD_TIMEOUT)
    except BaseException:
        stop(process)
        raise
    if process.returncode != 0:
        raise SystemExit(f"the {side.role} child ({side.python}) failed with status {process.returncode}:\n"
                         f"{err[-3000:]}")
    found = json.loads(out.strip().splitlines()[-1])
    return Child(Environment(**found["environment"]),
                 {key: Sample(**sample) for key, sample in found["samples"].items()})


def stop(process: subprocess.Popen) -> None:
    """Ends a child we started: SIGTERM first (it closes its simulator on the way out), then SIGKILL."""
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def load() -> str:
    """The load averages over 1, 5 and 15 minutes (what else the machine was doing), where the system tells them."""
    if not hasattr(os, "getloadavg"):
        return "unknown"
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def make_genomes(options, folder: str) -> str:
    """The agents' realistic genomes, made once here and pickled, so that both sides play the same genomes."""
    _, genomes = realistic(options.agents, seed=GENOME_SEED)
    path = os.path.join(folder, "genomes.pickle")
    with open(path, "wb") as f:
        pickle.dump(genomes, f, protocol=4)
    return path


def rounds(sides: tuple, options, genomes_path: str, folder: str) -> dict:
    """--rounds rounds of one child per side (which goes first swaps each round); each side's children in order."""
    children = {side.role: [] for side in sides}
    for number in range(options.rounds):
        for side in (sides if number % 2 == 0 else sides[::-1]):
            started = time.perf_counter()
            children[side.role].append(run_child(side, options, genomes_path, folder))
            print(f"round {number + 1}/{options.rounds}: {side.role} in {time.perf_counter() - started:.0f} s, "
                  f"load average {load()}", file=sys.stderr, flush=True)
    return children


def rows(children: dict) -> list:
    """Each measurement's values on both sides, round by round, and whether every child did the same work."""
    found = []
    for key in MEASURES:
        samples = [c.samples[key] for c in children["baseline"] + children["candidate"]]
        found.append(Row(key, [c.samples[key].value for c in children["baseline"]],
                         [c.samples[key].value for c in children["candidate"]],
                         len({s.work for s in samples}) == 1))
    return found


def speed(measure: Measure, baseline: float, candidate: float) -> float:
    """The candidate's speed relative to the baseline's: above 1, the candidate is faster."""
    return candidate / baseline if measure.higher_is_faster else baseline / candidate


def reading(ratio: float, paired: list) -> str:
    """Faster, slower or within noise (the per-round ratios straddle 1, or the medians are within NOISE)."""
    if abs(ratio - 1) < NOISE or min(paired) <= 1 <= max(paired):
        return "within noise"
    return f"{'faster' if ratio > 1 else 'slower'} ({ratio - 1:+.0%})"


def shown(measure: Measure, value: float) -> str:
    """A value with its measure's digits and unit."""
    return f"{value:,.{measure.digits}f} {measure.unit}"


def table(found: list, environments: dict, labels: dict) -> str:
    """The Markdown table: medians over the rounds, the ratio, the per-round ratios, the reading, same work."""
    lines = [f"| measurement | baseline: {environments['baseline'].title()} | candidate: "
             f"{environments['candidate'].title()} | candidate's speed / baseline's | per round | reading "
             "| same work |", "|---|---|---|---|---|---|---|"]
    for row in found:
        measure = MEASURES[row.key]
        ratio = speed(measure, statistics.median(row.baseline), statistics.median(row.candidate))
        paired = [speed(measure, b, c) for b, c in zip(row.baseline, row.candidate)]
        lines.append(f"| {measure.label.format(**labels)} | {shown(measure, statistics.median(row.baseline))} | "
                     f"{shown(measure, statistics.median(row.candidate))} | {ratio:.3f} | "
                     f"{min(paired):.2f}-{max(paired):.2f} | {reading(ratio, paired)} | "
                     f"{'yes' if row.same_work else 'NO'} |")
    return "\n".join(lines)


def single(children: list, role: str) -> Environment:
    """The one environment all of a side's children ran on."""
    found = {c.environment for c in children}
    if len(found) != 1:
        raise SystemExit(f"the {role} children ran on different environments: {found}")
    return found.pop()


def default_baseline() -> str:
    """The Python of the repository's BASELINE environment (its bin/ or Scripts/ one, whichever is there)."""
    folder = os.path.join(ROOT, BASELINE)
    found = [os.path.join(folder, program) for program in PROGRAMS if os.path.exists(os.path.join(folder, program))]
    return (found or [os.path.join(folder, PROGRAMS[0])])[0]


def parent(options) -> None:
    """The rounds, then the table with both environments named and the machine's load."""
    options.baseline = os.path.abspath(options.baseline or default_baseline())
    options.candidate = os.path.abspath(options.candidate)
    if not os.path.exists(options.baseline):
        print(f"no baseline interpreter at {options.baseline}: run `make test-matrix` (it creates {BASELINE}) "
              "or give --baseline PYTHON", file=sys.stderr)
        raise SystemExit(2)
    exit_on_sigterm()
    started, load_at_start = time.perf_counter(), load()
    with tempfile.TemporaryDirectory(prefix="neatpar-bench-") as folder:
        sides = (Side("baseline", options.baseline), Side("candidate", options.candidate))
        children = rounds(sides, options, make_genomes(options, folder), folder)
    environments = {role: single(found, role) for role, found in children.items()}
    labels = {"agents": options.agents, **{name: shape.label for name, shape in plan(options).shapes.items()}}
    stacks = "; ".join(f"{role}: neat-python {e.neat_python}, neatpar {e.neatpar}" for role, e in environments.items())
    print(f"{cpu_count()} cores; load average at start {load_at_start}; {options.rounds} "
          f"round{'s' if options.rounds != 1 else ''} alternating baseline and candidate; medians over the rounds; "
          f"{stacks}\n")
    print(table(rows(children), environments, labels))
    print(f"\nload average at end {load()}; {time.perf_counter() - started:.0f} s in all")


def main() -> None:
    """The parent's run (the table), or with --child one child's measurements."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", help=f"the baseline's Python (default: the one in {BASELINE} under the "
                        "repository)")
    parser.add_argument("--candidate", default=sys.executable, help="the candidate's Python (default: this one)")
    parser.add_argument("--rounds", type=int, help="rounds of one child per side (default 5; 1 with --quick)")
    parser.add_argument("--quick", action="store_true", help="a smoke run: fewer rounds, agents, steps and generations")
    parser.add_argument("--agents", type=int,
                        help="agents of the generation and the kernel (default 256; 64 with --quick)")
    parser.add_argument("--max-steps", type=int, help="steps of an episode at most (default 200; 50 with --quick)")
    parser.add_argument("--generations", type=int,
                        help="generations measured after the first (default 5; 1 with --quick)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--genomes", help=argparse.SUPPRESS)
    parser.add_argument("--simulator-python", help=argparse.SUPPRESS)
    options = parser.parse_args()
    for name, default, quick in (("rounds", 5, 1), ("agents", 256, 64), ("max_steps", 200, 50), ("generations", 5, 1)):
        if getattr(options, name) is None:
            setattr(options, name, quick if options.quick else default)
    if options.child:
        child(options)
    else:
        parent(options)


if __name__ == "__main__":
    main()
