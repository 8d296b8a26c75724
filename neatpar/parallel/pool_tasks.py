"""ParallelEvaluator's local backend: chunks of genomes as tasks of a neatpar spawn Pool.

The fitness function is preloaded in each worker (loaded before the worker is ready, by value
when the worker could not import it); the config is installed in each worker once
(`Pool.share`), and again only when its pickled bytes change; results stream one genome at a
time, so a worker that dies mid-chunk costs only the genome it was running (the pool's progress
cell says which).
"""
from __future__ import annotations

from typing import Callable, Iterable

from .chunks import evaluate_chunk
from .pool import AsyncResult, Pool


class PoolTasks:
    """Chunks on a spawn Pool of `num_workers` workers."""

    def __init__(self, num_workers: int, eval_function: Callable, timeout: float | None,
                 initializer: Callable | None, initargs: tuple, maxtasksperchild: int | None,
                 clear_globals: Iterable[str]):
        self.num_workers, self.eval_function, self.timeout = num_workers, eval_function, timeout
        self.pool = Pool(num_workers, initializer, initargs, maxtasksperchild, clear_globals=clear_globals,
                         preload={"eval_function": eval_function})
        self.function_ref = self.pool.preloaded["eval_function"]
        self.config_ref = None   # the installed config's reference, and its digest
        self._digest: bytes | None = None

    @property
    def pids(self) -> list[int]:
        return self.pool.pids

    def share_config(self, payload: bytes, digest: bytes):
        """Install the config in the workers once, and again only when its bytes change."""
        if digest != self._digest:
            if self.config_ref is not None:
                self.pool.unshare(self.config_ref)
            self.config_ref, self._digest = self.pool.share(None, pickled=payload), digest
        return self.config_ref

    def default_chunksize(self, count: int) -> int:
        """About four tasks per worker per generation."""
        return max(1, -(-count // (4 * self.num_workers)))

    def submit(self, config_ref, seed: int | None, chunk: list) -> AsyncResult:
        return self.pool.apply_async(evaluate_chunk, (self.function_ref, config_ref, seed, chunk), timeout=self.timeout)

    def wait(self, jobs, timeout: float) -> list[AsyncResult]:
        return self.pool.wait(jobs, timeout=timeout, return_when_any=True)

    def close(self) -> None:
        self.pool.close()

    def terminate(self) -> None:
        self.pool.terminate()
