"""neatpar.ParallelEvaluator: a drop-in for neat-python 2.0's ParallelEvaluator on a spawn pool.

Genomes travel in chunks, the config once per worker, results one genome at a time (so a worker
that dies mid-chunk costs only the genome it was running). Each genome is evaluated with
`random` and numpy's global generator seeded from (seed + genome.key), so results do not depend
on the number of workers or on which worker ran which genome.
"""
from __future__ import annotations

import hashlib
import inspect
import math
import numbers
import random
import sys
import traceback
from typing import Any, Callable, Iterable, Iterator

import numpy as np

from .errors import FitnessError, GenomeEvaluationError, RemoteError, TaskTimeout, WorkerDied
from .pool import AsyncResult, Pool, check_picklable_function
from .serialize import dumps

#: How many times a genome may kill its worker before it counts as failed.
MAX_WORKER_DEATHS = 2


def seed_genome(seed: int | None, key: int) -> None:
    """Seed `random` and numpy's global generator for one genome (no-op when seed is None)."""
    if seed is None:
        return
    random.seed(seed + key)
    np.random.seed((seed + key) % 2**32)


def _fitness_outcome(value: Any) -> tuple[str, Any]:
    if isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value):
        return ("ok", float(value))
    return ("bad", repr(value)[:200])


def evaluate_chunk(eval_function: Callable, config: Any, seed: int | None, genomes: list) -> Iterator[tuple]:
    """Evaluate `genomes` in order, yielding one outcome per genome: ("ok", fitness),
    ("bad", repr of a non-number) or ("raised", traceback text)."""
    for genome in genomes:
        seed_genome(seed, genome.key)
        try:
            value = eval_function(genome, config)
        except Exception:
            yield ("raised", traceback.format_exc())
            continue
        yield _fitness_outcome(value)


class ParallelEvaluator:
    """Evaluate genomes on a spawn-context pool; `population.run(evaluator.evaluate, n)`.

    Same constructor as neat.ParallelEvaluator (neat-python 2.0), plus keyword-only options:

    - clear_globals: names of main-module globals to replace by placeholders in every worker
      (globals holding live handles are always cleared).
    - failure_fitness: None (default) makes a genome whose evaluation raises, times out or kills
      its worker twice raise GenomeEvaluationError; a number is assigned as its fitness instead.
    - progress: show a tqdm bar on stderr (default: only when stderr is a terminal).
    - chunksize: genomes per task (default: about four tasks per worker per generation; one
      with backend="ray" and a timeout).
    - backend: "local" (spawn pool, default) or "ray" (tasks on a Ray cluster, at most num_workers
      at a time; `address` names the cluster, default RAY_ADDRESS or a local instance). Needs
      `pip install 'neatpar[ray]'`.

    `timeout` is per genome: a genome still running after it is stopped by killing its worker.
    `num_workers=0` evaluates in this process with the same seeding (for debugging).
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
        check_picklable_function(eval_function)
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
        self._config_digest: bytes | None = None
        self._config_ref = None
        self._local_init = (initializer, tuple(initargs))
        self.pool: Pool | None = None
        self.ray = None
        if backend == "ray":
            self.ray = _ray_tasks(num_workers, eval_function, address, initializer, initargs, timeout,
                                  maxtasksperchild, tuple(clear_globals))
        elif backend != "local":
            raise ValueError(f"backend must be 'local' or 'ray', got {backend!r}")
        elif num_workers > 0:
            self.pool = Pool(num_workers, initializer, initargs, maxtasksperchild, clear_globals=clear_globals)
        elif initializer is not None:
            initializer(*initargs)

    # ------------------------------------------------------------ lifecycle

    def close(self) -> None:
        """Stop the workers (waits for running genomes)."""
        if self.pool is not None:
            self.pool.close()
            self.pool = None
        self._close_ray()

    def terminate(self) -> None:
        """Stop the workers now."""
        if self.pool is not None:
            self.pool.terminate()
            self.pool = None
        self._close_ray()

    def _close_ray(self) -> None:
        ray, self.ray = self.ray, None
        if ray is not None:
            ray.close()

    def __enter__(self) -> "ParallelEvaluator":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        self.terminate() if exc_type is not None else self.close()

    def __del__(self) -> None:
        pool = getattr(self, "pool", None)
        if pool is not None:
            pool.terminate()

    # ------------------------------------------------------------ evaluation

    def evaluate(self, genomes: Iterable[tuple[int, Any]], config: Any) -> None:
        """Set `genome.fitness` for every (key, genome) pair; the neat-python fitness callback."""
        pairs = list(genomes)
        if not pairs:
            return
        if self.num_workers == 0:
            self._evaluate_serial(pairs, config)
            return
        if self.pool is None and self.ray is None:
            raise ValueError("this ParallelEvaluator is closed")
        try:
            self._evaluate_pool(pairs, config)
        except BaseException:
            self.terminate()
            raise

    def _evaluate_serial(self, pairs: list, config: Any) -> None:
        """In this process; the per-genome seeding must not disturb the caller's generators
        (neat-python's reproduction draws from `random` between generations)."""
        genomes = [g for _, g in pairs]
        saved = random.getstate(), np.random.get_state()
        try:
            for genome, outcome in zip(genomes, evaluate_chunk(self.eval_function, config, self.seed, genomes)):
                self._apply(genome, outcome)
        finally:
            random.setstate(saved[0])
            np.random.set_state(saved[1])

    def _evaluate_pool(self, pairs: list, config: Any) -> None:
        config_ref = self._share_config(config)
        genomes = [g for _, g in pairs]
        size = self.chunksize or self._default_chunksize(len(genomes))
        jobs: dict[AsyncResult, list] = {}
        for start in range(0, len(genomes), size):
            chunk = genomes[start:start + size]
            jobs[self._submit(config_ref, chunk)] = chunk
        deaths: dict[int, int] = {}
        with _Progress(len(genomes), self.progress) as bar:
            while jobs:
                done = self._wait(jobs)
                bar.update(sum(len(r.partial) for r in jobs) + bar.finished)
                for result in done:
                    chunk = jobs.pop(result)
                    bar.finished += len(result.partial)
                    for rest in self._settle(result, chunk, deaths):
                        jobs[self._submit(config_ref, rest)] = rest

    def _default_chunksize(self, count: int) -> int:
        # Ray returns a chunk's results only at its end, so a timeout is exact only per genome.
        if self.ray is not None and self.timeout is not None:
            return 1
        return max(1, math.ceil(count / (4 * self.num_workers)))

    def _submit(self, config_ref, chunk: list):
        if self.ray is not None:
            return self.ray.submit(config_ref, self.seed, chunk)
        return self.pool.apply_async(evaluate_chunk, (self.eval_function, config_ref, self.seed, chunk),
                                     timeout=self.timeout)

    def _wait(self, jobs: dict) -> list:
        if self.ray is not None:
            return self.ray.wait(jobs, timeout=0.25)
        return self.pool.wait(jobs, timeout=0.25, return_when_any=True)

    def _share_config(self, config: Any):
        """Install the config in the workers once, and again only when its pickled bytes change."""
        payload = dumps(config)
        digest = hashlib.blake2b(payload, digest_size=16).digest()
        if self.ray is not None:
            return self.ray.put_config(digest, payload)
        if digest != self._config_digest:
            if self._config_ref is not None:
                self.pool.unshare(self._config_ref)
            self._config_ref = self.pool.share(config, pickled=payload)
            self._config_digest = digest
        return self._config_ref

    def _settle(self, result: AsyncResult, chunk: list, deaths: dict) -> list[list]:
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
                self._fail(culprit, f"did not finish within the {self.timeout} s timeout (its worker was killed)", error)
                return [lost] if lost else []
            deaths[culprit.key] = deaths.get(culprit.key, 0) + 1
            if deaths[culprit.key] < MAX_WORKER_DEATHS:
                return [[culprit] + lost]
            self._fail(culprit, f"killed its worker {MAX_WORKER_DEATHS} times ({error})", error)
            return [lost] if lost else []
        culprit = chunk[len(result.partial)] if len(result.partial) < len(chunk) else chunk[-1]
        if isinstance(error, RemoteError):
            raise GenomeEvaluationError(f"evaluating genome {culprit.key} failed in the worker: {error}") from error
        raise error

    def _apply(self, genome: Any, outcome: tuple) -> None:
        status, value = outcome
        if status == "ok":
            genome.fitness = value
        elif status == "bad":
            raise FitnessError(_bad_fitness_message(genome.key, value))
        else:
            self._fail(genome, f"raised an exception:\n{value}{self._population_level_hint(value)}", None)

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

    def _fail(self, genome: Any, why: str, cause: BaseException | None) -> None:
        if self.failure_fitness is None:
            raise GenomeEvaluationError(
                f"genome {genome.key}: eval_function {why}; pass failure_fitness=<number> to give such "
                f"genomes a fitness instead of stopping the run") from cause
        genome.fitness = float(self.failure_fitness)


def _ray_tasks(num_workers: int, eval_function: Callable, address: str | None, initializer, initargs,
               timeout: float | None, maxtasksperchild, clear_globals: tuple):
    """The Ray backend's task runner; options that only mean something for a local pool are refused."""
    if num_workers < 1:
        raise ValueError("num_workers must be at least 1 with backend='ray'")
    if maxtasksperchild is not None or clear_globals:
        raise ValueError("maxtasksperchild and clear_globals apply to local spawn workers; with backend='ray' "
                         "workers do not re-run your script (functions travel by value): leave them unset")
    from .ray_backend import RayTasks
    return RayTasks(num_workers, eval_function, address, initializer, initargs, timeout)


def _bad_fitness_message(key: int, shown: str) -> str:
    if shown == "None":
        cause = ("ParallelEvaluator wants a per-genome function `f(genome, config) -> fitness`; a "
                 "population-level `eval_genomes(genomes, config)` returns None")
    elif shown in ("nan", "inf", "-inf") or "nan" in shown or "inf" in shown:
        cause = "the fitness is not finite: look for a division by zero or an overflowing network output"
    else:
        cause = "return a float (or int) fitness"
    return f"eval_function returned {shown} for genome {key}, not a finite number: {cause}"


class _Progress:
    """A tqdm bar on stderr when wanted (default: only on a terminal)."""

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

    def __enter__(self) -> "_Progress":
        return self

    def __exit__(self, *exc) -> None:
        if self._bar is not None:
            self._bar.close()
