"""Where the runner's networks run: in this process, or on a spawn pool of workers.

Both take one step's batch (observations, genome index, state row and reset flag per agent) and
return the outputs; both give bit-identical results.

- `InProcessInference`: the population kernel called directly.
- `PoolInference`: once per generation each worker receives the compiled population by value
  (pickled once, installed once per worker); per step, one `apply_async` per worker carrying only
  its slice (row range and step number), with observations, actions and recurrent state in a
  sequenced shared-memory exchange (exchange.py). Worker w owns the state rows r with
  r % workers == w. A worker that dies or hangs is replaced, the networks are installed again
  and the step is redone from the unchanged state; no action of a failed attempt is ever used.
- `choose_auto`: times both on the real batch and keeps the faster.
"""
from __future__ import annotations

import logging
import time
from typing import NamedTuple

import numpy as np

from ..errors import NeatparError, WorkerDied
from ..parallel.pool import Pool
from .exchange import StepExchange

log = logging.getLogger("neatpar")
MAX_ATTEMPTS = 3


class InProcessInference:
    """The population kernel, in this process."""

    name = "inprocess"

    def __init__(self):
        self.kernel = None

    def install(self, kernel) -> None:
        self.kernel = kernel

    def activate(self, obs, index, rows, reset, commit: bool = True) -> np.ndarray:
        if not commit:  # a trial run (auto mode): no state may change
            if self.kernel.recurrent:
                return self.kernel.advance(obs, index, np.zeros((len(obs), self.kernel.state_width)))[0]
            return self.kernel.activate(obs, index)
        if reset.any():
            self.kernel.reset(rows[reset])
        return self.kernel.activate(obs, index, rows)

    def close(self) -> None:
        self.kernel = None


# ---------------------------------------------------------------- worker side

_attached: dict = {}


def _exchange(spec: dict) -> StepExchange:
    exchange = _attached.get(spec["name"])
    if exchange is None:
        for old in list(_attached):
            _attached.pop(old).close()
        exchange = _attached[spec["name"]] = StepExchange.attach(spec)
    return exchange


def infer_slice(kernel, spec: dict, step: int, start: int, end: int, worker: int, commit: bool) -> int:
    """In a pool worker: this worker's rows of one step, read from and written to shared memory."""
    exchange = _exchange(spec)
    obs, index, rows, reset = exchange.read(step, start, end)
    if kernel.recurrent:
        state = exchange.state_in(rows, reset)
        outputs, state = kernel.advance(obs, index, state)
        if commit:
            exchange.state_out(rows, state)
    else:
        outputs = kernel.activate(obs, index)
    exchange.write(step, worker, start, outputs)
    return step


# ---------------------------------------------------------------- main side

class ExchangeSizes(NamedTuple):
    """What a generation's kernel needs of the exchange: its rows' input and output counts, and the
    width of a row's state (1 for a network without state)."""
    inputs: int = 0
    outputs: int = 0
    width: int = 1


class PoolInference:
    """The population's networks on a spawn pool, fed through a sequenced shared-memory exchange."""

    name = "pool"

    def __init__(self, workers: int, clear_globals=(), timeout: float | None = 60.0):
        self.workers = workers
        self.timeout = timeout
        self.pool = Pool(workers, clear_globals=clear_globals)
        self.exchange: StepExchange | None = None
        self.ref = None
        self.recurrent = False
        self.sizes = ExchangeSizes()
        self.step = 0
        self.redone = 0

    def install(self, kernel) -> None:
        """Send the generation's compiled population to the workers (once each)."""
        if self.ref is not None:
            self.pool.unshare(self.ref)
        self.ref = self.pool.share(kernel)
        self.recurrent = kernel.recurrent
        sizes = ExchangeSizes(kernel.num_inputs, kernel.num_outputs, kernel.state_width if kernel.recurrent else 1)
        if sizes != self.sizes and self.exchange is not None:
            self.exchange.close()
            self.exchange = None
        self.sizes = sizes

    def _ensure(self, count: int, state_rows: int) -> StepExchange:
        """An exchange large enough for `count` rows and state rows < `state_rows` (state kept)."""
        old = self.exchange
        if old is not None and old.capacity >= count and old.state_rows >= state_rows:
            return old
        capacity = max(count, old.capacity if old else 0) * 2
        rows = max(state_rows, old.state_rows if old else 0) * 2
        sizes = self.sizes
        new = StepExchange.create(capacity, sizes.inputs, sizes.outputs, self.workers, sizes.width, rows)
        if old is not None:
            if old.spec["sizes"]["stride"] == sizes.width:
                kept = old.state_rows
                new.arrays["state"][:, :kept] = old.arrays["state"]
                new.arrays["current"][:kept] = old.arrays["current"]
            old.close()
        self.exchange = new
        return new

    def activate(self, obs, index, rows, reset, commit: bool = True) -> np.ndarray:
        n = len(obs)
        exchange = self._ensure(n, int(rows.max()) + 1 if n else 1)
        owner = rows % self.workers
        order = np.argsort(owner, kind="stable")
        counts = np.bincount(owner, minlength=self.workers)
        self.step += 1
        exchange.publish(self.step, obs[order], index[order], rows[order], reset[order])
        for attempt in range(1, MAX_ATTEMPTS + 1):
            try:
                busy = self._run_step(exchange, counts, commit)
                break
            except WorkerDied as error:  # died or hung (TaskTimeout): replaced by the pool
                self.redone += 1
                log.warning("inference step %d: %s; redoing it (attempt %d)", self.step, error, attempt + 1)
                if attempt == MAX_ATTEMPTS:
                    raise NeatparError(f"inference step {self.step} failed {MAX_ATTEMPTS} times: {error}") from error
        outputs = exchange.collect(self.step, busy, n)
        if self.recurrent and commit:
            exchange.commit_state(rows)
        result = np.empty_like(outputs)
        result[order] = outputs
        return result

    def _run_step(self, exchange: StepExchange, counts: np.ndarray, commit: bool) -> list[int]:
        results, busy, start = [], [], 0
        for worker, count in enumerate(counts.tolist()):
            if count:
                results.append(self.pool.apply_async(
                    infer_slice, (self.ref, exchange.spec, self.step, start, start + count, worker, commit),
                    worker=worker, timeout=self.timeout))
                busy.append(worker)
            start += count
        for result in results:
            result.get()
        return busy

    def close(self) -> None:
        try:
            self.pool.terminate()
        finally:
            if self.exchange is not None:
                self.exchange.close()
                self.exchange = None


def choose_auto(inprocess: InProcessInference, pool: PoolInference, obs, index, rows, repeats: int = 10):
    """Time both on this batch (without changing any state); return the faster and the reason."""
    reset = np.zeros(len(obs), dtype=bool)
    timings = {}
    for inference in (inprocess, pool):
        inference.activate(obs, index, rows, reset, commit=False)  # warm-up: installs the networks
        started = time.perf_counter()
        for _ in range(repeats):
            inference.activate(obs, index, rows, reset, commit=False)
        timings[inference.name] = (time.perf_counter() - started) / repeats
    best = min(timings, key=timings.get)
    reason = (f"inference auto: {best} ({timings['inprocess'] * 1e3:.3f} ms per step in process, "
              f"{timings['pool'] * 1e3:.3f} ms on {pool.workers} pool workers, at {len(obs)} agents)")
    return (inprocess if best == "inprocess" else pool), reason


class AutoInference:
    """Times both kinds on the first real batch, keeps the faster for the rest of the run."""

    name = "auto"

    def __init__(self, workers: int, clear_globals=(), timeout: float | None = 60.0):
        self.inprocess = InProcessInference()
        self.pool: PoolInference | None = PoolInference(workers, clear_globals, timeout)
        self.chosen = None
        self.reason = ""

    def install(self, kernel) -> None:
        (self.chosen.install(kernel) if self.chosen is not None else
         [i.install(kernel) for i in (self.inprocess, self.pool)])

    def activate(self, obs, index, rows, reset, commit: bool = True) -> np.ndarray:
        if self.chosen is None:
            self.chosen, self.reason = choose_auto(self.inprocess, self.pool, obs, index, rows)
            log.info(self.reason)
            if self.chosen is self.inprocess:
                self.pool.close()
                self.pool = None
        return self.chosen.activate(obs, index, rows, reset, commit)

    def close(self) -> None:
        for inference in (self.inprocess, self.pool):
            if inference is not None:
                inference.close()


def make_inference(kind: str, workers: int, timeout: float | None = 60.0):
    """`inprocess`, `pool` or `auto`, as [neatpar] inference names them."""
    if kind == "inprocess":
        return InProcessInference()
    if kind == "pool":
        return PoolInference(workers, timeout=timeout)
    if kind == "auto":
        return AutoInference(workers, timeout=timeout)
    raise ValueError(f"inference = {kind!r}: use inprocess, pool or auto")
