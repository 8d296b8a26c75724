"""neatpar.ParallelEvaluator: a drop-in for neat-python 2.0's ParallelEvaluator on a spawn pool.

Genomes travel in chunks, the config once per worker, results one genome at a time (so a worker
that dies mid-chunk costs only the genome it was running). Each genome is evaluated with
`random` and numpy's global generator seeded from (seed + genome.key), so results do not depend
on the number of workers or on which worker ran which genome.

The chunks run on a backend with a small interface (share_config, default_chunksize, submit,
wait, close, terminate): `PoolTasks` (a local spawn pool) or `RayTasks` (a Ray cluster).
"""
from __future__ import annotations

import hashlib
import inspect
import logging
import math
import numbers
import random
import sys
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

import numpy as np

from ..errors import ClearedGlobalError, FitnessError, GenomeEvaluationError, RemoteError, TaskTimeout, WorkerDied
from .chunks import GenomeResult, Status, evaluate_chunk
from .pool_tasks import PoolTasks
from .serialize import dumps_for_worker

#: How many times a genome may kill its worker before it counts as failed.
MAX_WORKER_DEATHS = 2
log = logging.getLogger("neatpar")


@dataclass
class Failures:
    """The genomes of one generation that got `failure_fitness`, by what went wrong, and the first
    of them in the generation's order: its key and what happened (its traceback, for an exception)."""
    genomes: int = 0          # genomes evaluated in the generation
    raised: int = 0
    timed_out: int = 0
    crashed: int = 0          # killed their worker MAX_WORKER_DEATHS times
    first_genome: int | None = None
    first_error: str = field(default="", repr=False)

    @property
    def failed(self) -> int:
        return self.raised + self.timed_out + self.crashed

    def describe(self) -> str:
        kinds = [(self.raised, "raised"), (self.timed_out, "timed out"), (self.crashed, "killed their worker")]
        return f"{self.failed} of {self.genomes} genomes failed ({', '.join(f'{n} {w}' for n, w in kinds if n)})"


class ParallelEvaluator:
    """Evaluate genomes on a spawn-context pool; `population.run(evaluator.evaluate, n)`.

    Same constructor as neat.ParallelEvaluator (neat-python 2.0), plus keyword-only options:

    - clear_globals: names of main-module globals to replace by placeholders in every worker
      (globals holding live handles are always cleared).
    - failure_fitness: None (default) makes a genome whose evaluation raises, times out or kills
      its worker twice raise GenomeEvaluationError; a number is assigned as its fitness instead.
      Such failures are never silent: each generation with failures logs a warning with their
      count (the first one also with the first failure's traceback), `last_failures` counts them,
      and a generation in which every genome failed raises GenomeEvaluationError.
    - progress: show a tqdm bar on stderr (default: only when stderr is a terminal).
    - chunksize: genomes per task (default: about four tasks per worker per generation; one
      with backend="ray" and a timeout).
    - backend: "local" (spawn pool, default) or "ray" (tasks on a Ray cluster, at most num_workers
      at a time; `address` names the cluster, default RAY_ADDRESS or a local instance). Needs
      `pip install 'neatpar[ray]'`.

    eval_function may return `(fitness, descriptor)` instead of the fitness (a descriptor: a
    sequence of numbers, for novelty search and MAP-Elites): the fitness becomes genome.fitness and
    the descriptor is kept in `last_descriptors` (genome key -> float64 vector, this generation's),
    which neatpar.search.SearchEvaluator reads.

    `timeout` is per genome: a genome still running after it is stopped by killing its worker.
    `num_workers=0` evaluates in this process with the same seeding (for debugging).

    eval_function and initializer travel by value when spawn workers cannot import them (defined
    in a notebook, the REPL, `python -c` or stdin; lambdas, closures); each worker loads them
    before it is ready, so one that cannot be loaded there fails the constructor at once.
    """

    def __init__(self, num_workers: int, eval_function: Callable, timeout: float | None = None,
                 initializer: Callable | None = None, initargs: tuple = (),
                 maxtasksperchild: int | None = None, seed: int | None = None, *,
                 clear_globals: Iterable[str] = (), failure_fitness: float | None = None,
                 progress: bool | None = None, chunksize: int | None = None, backend: str = "local",
                 address: str | None = None):
        if not isinstance(num_workers, int) or num_workers < 0:
            raise ValueError(f"num_workers must be an int >= 0, got {num_workers!r}")
        if not callable(eval_function):
            raise TypeError(f"eval_function must be callable, got {eval_function!r}")
        if timeout is not None and not timeout > 0:
            raise ValueError(f"timeout must be a positive number of seconds or None, got {timeout!r}")
        if failure_fitness is not None and not (isinstance(failure_fitness, numbers.Real) and math.isfinite(failure_fitness)):
            raise ValueError(f"failure_fitness must be a finite number or None, got {failure_fitness!r}")
        if chunksize is not None and (not isinstance(chunksize, int) or chunksize < 1):
            raise ValueError(f"chunksize must be a positive int or None, got {chunksize!r}")
        self.num_workers = num_workers
        self.eval_function = eval_function
        self.timeout = timeout
        self.seed = seed
        self.failure_fitness = failure_fitness
        self.progress = progress
        self.chunksize = chunksize
        self.tasks = None  # the backend; None when serial (num_workers=0) or closed
        self.last_failures = Failures()  # of the latest generation
        self.last_descriptors: dict = {}  # genome key -> the descriptor eval_function returned, latest generation
        self._errors: dict = {}  # genome key -> what went wrong, this generation
        self._warned = False  # the first generation with failures showed its first traceback
        if backend == "ray":
            self.tasks = _ray_tasks(num_workers, eval_function, address, initializer, initargs, timeout,
                                    maxtasksperchild, tuple(clear_globals))
        elif backend != "local":
            raise ValueError(f"backend must be 'local' or 'ray', got {backend!r}")
        elif num_workers > 0:
            self.tasks = PoolTasks(num_workers, eval_function, timeout, initializer, tuple(initargs),
                                   maxtasksperchild, clear_globals)
        elif initializer is not None:
            initializer(*initargs)

    # ------------------------------------------------------------ lifecycle

    @property
    def pids(self) -> list[int]:
        """PIDs of the live local worker processes (empty for Ray, serial or closed)."""
        return list(getattr(self.tasks, "pids", []))

    def close(self) -> None:
        """Stop the workers (waits for running genomes)."""
        tasks, self.tasks = self.tasks, None
        if tasks is not None:
            tasks.close()

    def terminate(self) -> None:
        """Stop the workers now."""
        tasks, self.tasks = self.tasks, None
        if tasks is not None:
            tasks.terminate()

    def __enter__(self) -> "ParallelEvaluator":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        self.terminate() if exc_type is not None else self.close()

    def __del__(self) -> None:
        if getattr(self, "tasks", None) is not None:
            self.terminate()

    # ------------------------------------------------------------ evaluation

    def evaluate(self, genomes: Iterable[tuple[int, Any]], config: Any) -> None:
        """Set `genome.fitness` for every (key, genome) pair; the neat-python fitness callback."""
        pairs = list(genomes)
        if not pairs:
            return
        self.last_failures, self._errors, self.last_descriptors = Failures(genomes=len(pairs)), {}, {}
        if self.num_workers == 0:
            self._evaluate_serial(pairs, config)
        elif self.tasks is None:
            raise ValueError("this ParallelEvaluator is closed")
        else:
            try:
                self._evaluate_pool(pairs, config)
            except BaseException:
                self.terminate()
                raise
        self._report_failures([key for key, _ in pairs])

    def _report_failures(self, keys: list) -> None:
        """A generation's failures, made visible: a warning with their count (the first such
        warning with the traceback of the first genome, in the generation's order, that failed);
        an error when every genome failed."""
        failures = self.last_failures
        if not failures.failed:
            return
        key = next(k for k in keys if k in self._errors)
        why = failures.first_error = self._errors[key]
        failures.first_genome = key
        if failures.failed == failures.genomes:
            raise GenomeEvaluationError(
                f"every genome of the generation failed ({failures.describe()}), so it has no fitness to select "
                f"on: fix eval_function (failure_fitness is for the occasional genome that fails); the first, "
                f"genome {key}: eval_function {why}")
        given = f"they got failure_fitness = {self.failure_fitness:g}"
        if self._warned:
            log.warning("ParallelEvaluator: %s; %s", failures.describe(), given)
        else:
            self._warned = True
            log.warning("ParallelEvaluator: %s; %s (every generation with failures says so); the first, genome %s: "
                        "eval_function %s", failures.describe(), given, key, why)

    def _evaluate_serial(self, pairs: list, config: Any) -> None:
        """In this process; the per-genome seeding must not disturb the caller's generators
        (neat-python's reproduction draws from `random` between generations)."""
        genomes = [g for _, g in pairs]
        saved_random, saved_numpy = random.getstate(), np.random.get_state()
        try:
            for genome, outcome in zip(genomes, evaluate_chunk(self.eval_function, config, self.seed, genomes)):
                self._apply(genome, outcome)
        finally:
            random.setstate(saved_random)
            np.random.set_state(saved_numpy)

    def _evaluate_pool(self, pairs: list, config: Any) -> None:
        payload = dumps_for_worker(config)
        config_ref = self.tasks.share_config(payload, hashlib.blake2b(payload, digest_size=16).digest())
        genomes = [g for _, g in pairs]
        size = self.chunksize or self.tasks.default_chunksize(len(genomes))
        jobs: dict = {}
        for start in range(0, len(genomes), size):
            chunk = genomes[start:start + size]
            jobs[self._submit(config_ref, chunk)] = chunk
        deaths: dict[int, int] = {}
        with ProgressBar(len(genomes), self.progress) as bar:
            while jobs:
                done = self.tasks.wait(jobs, timeout=0.25)
                bar.update(sum(len(r.partial) for r in jobs) + bar.finished)
                for result in done:
                    chunk = jobs.pop(result)
                    bar.finished += len(result.partial)
                    for rest in self._settle(result, chunk, deaths):
                        jobs[self._submit(config_ref, rest)] = rest

    def _submit(self, config_ref, chunk: list):
        return self.tasks.submit(config_ref, self.seed, chunk)

    def _settle(self, result, chunk: list, deaths: dict) -> list[list]:
        """Apply a finished task's outcomes; return the chunks of genomes that must run again."""
        for genome, outcome in zip(chunk, result.partial):
            self._apply(genome, outcome)
        error = result.error
        if error is None:
            return []
        if isinstance(error, WorkerDied) and error.position is None:
            return [[g] for g in chunk[len(result.partial):]]  # one per task: the next loss names it
        if isinstance(error, WorkerDied):  # died or timed out: charge only the genome it was running
            culprit = chunk[error.position]
            lost = [g for g in chunk[len(result.partial):] if g is not culprit]
            if isinstance(error, TaskTimeout):
                self._fail(culprit, f"did not finish within the {self.timeout} s timeout (its worker was killed)",
                           error, "timed_out")
                return [lost] if lost else []
            deaths[culprit.key] = deaths.get(culprit.key, 0) + 1
            if deaths[culprit.key] < MAX_WORKER_DEATHS:
                return [[culprit] + lost]
            self._fail(culprit, f"killed its worker {MAX_WORKER_DEATHS} times ({error})", error, "crashed")
            return [lost] if lost else []
        if isinstance(error, RemoteError) and isinstance(error.__cause__, ClearedGlobalError):
            raise ClearedGlobalError(str(error.__cause__)) from error  # the program's fault, not a genome's
        culprit = chunk[len(result.partial)] if len(result.partial) < len(chunk) else chunk[-1]
        if isinstance(error, RemoteError):
            raise GenomeEvaluationError(f"evaluating genome {culprit.key} failed in the worker: {error}") from error
        raise error

    def _apply(self, genome: Any, outcome: GenomeResult) -> None:
        if outcome.status is Status.OK and isinstance(outcome.value, tuple):   # (fitness, descriptor)
            genome.fitness, self.last_descriptors[genome.key] = outcome.value
        elif outcome.status is Status.OK:
            genome.fitness = outcome.value
        elif outcome.status is Status.BAD:
            raise FitnessError(_bad_fitness_message(genome.key, outcome.value))
        else:
            self._fail(genome, f"raised an exception:\n{outcome.value}{self._population_level_hint(outcome.value)}",
                       None, "raised")

    def _population_level_hint(self, traceback_text: str) -> str:
        """Name the likely cause when a population-level eval_genomes was passed by mistake."""
        try:
            first = next(iter(inspect.signature(self.eval_function).parameters), "")
        except (TypeError, ValueError):
            first = ""
        if first == "genomes" or "Genome' object is not iterable" in traceback_text:
            return ("(eval_function looks like a population-level eval_genomes(genomes, config); "
                    "ParallelEvaluator wants a per-genome f(genome, config) that returns the fitness)")
        return ""

    def _fail(self, genome: Any, why: str, cause: BaseException | None, kind: str) -> None:
        """A genome's evaluation failed (`kind`: a Failures field): stop the run, or give it
        failure_fitness and count it."""
        if self.failure_fitness is None:
            raise GenomeEvaluationError(
                f"genome {genome.key}: eval_function {why}; pass failure_fitness=<number> to give such "
                f"genomes a fitness instead of stopping the run") from cause
        genome.fitness = float(self.failure_fitness)
        setattr(self.last_failures, kind, getattr(self.last_failures, kind) + 1)
        self._errors[genome.key] = why


def _ray_tasks(num_workers: int, eval_function: Callable, address: str | None, initializer, initargs,
               timeout: float | None, maxtasksperchild, clear_globals: tuple):
    """The Ray backend's task runner; options that only mean something for a local pool are refused."""
    if num_workers < 1:
        raise ValueError("num_workers must be at least 1 with backend='ray'")
    if maxtasksperchild is not None or clear_globals:
        raise ValueError("maxtasksperchild and clear_globals apply to local spawn workers; with backend='ray' "
                         "workers do not re-run your script (functions travel by value): leave them unset")
    from .ray_tasks import RayTasks
    return RayTasks(num_workers, eval_function, address, initializer, initargs, timeout)


def _bad_fitness_message(key: int, shown: str) -> str:
    if shown == "None":
        cause = ("return the fitness from eval_function (`return fitness`): setting genome.fitness there is not "
                 "enough, the worker's genome is a copy and ParallelEvaluator assigns what the function returns; "
                 "it wants a per-genome f(genome, config) -> fitness, not a population-level "
                 "eval_genomes(genomes, config)")
    elif shown in ("nan", "inf", "-inf") or "nan" in shown or "inf" in shown:
        cause = "the fitness is not finite: look for a division by zero or an overflowing network output"
    else:
        cause = "return a float (or int) fitness, or (fitness, descriptor) with the descriptor a sequence of numbers"
    return f"eval_function returned {shown} for genome {key}, not a finite number: {cause}"


class ProgressBar:
    """A tqdm bar of genomes on stderr when wanted (default: only on a terminal)."""

    def __init__(self, total: int, wanted: bool | None):
        self.finished = 0
        show = sys.stderr.isatty() if wanted is None else wanted
        self._bar = None
        if show:
            from tqdm import tqdm
            self._bar = tqdm(total=total, file=sys.stderr, unit="genome", leave=False)

    def update(self, count: int) -> None:
        if self._bar is not None:
            self._bar.n = count
            self._bar.refresh()

    def __enter__(self) -> "ProgressBar":
        return self

    def __exit__(self, *exc) -> None:
        if self._bar is not None:
            self._bar.close()
