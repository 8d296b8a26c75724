"""A sequenced shared-memory exchange of one step's observations and actions.

The main process writes a step's observations (with genome indices, state rows and reset flags)
and then the step number into the header, and only then dispatches the step to the workers. A
worker checks the step number in the buffer against the one in its task before it reads, writes
its actions and then its stamp (the step number) after them; the main process checks every stamp
before it uses the actions. A mismatch is a StaleStepError naming the step: data of another step
is never used silently (the failure of workers and a main process that read shared memory
without sequencing).

Recurrent state lives here too: two buffers per state row and a per-row index of the current
one, flipped by the main process only after a step was verified, so a step redone after a worker
died reads exactly the state the failed attempt read.

Segments are created by the main process and unlinked by `close()` (called on every exit path
by the owner); a segment left by a killed main process is unlinked by multiprocessing's resource
tracker (on Windows a segment is gone with the last process that maps it). Names are 20
characters, within macOS's limit of 31.
"""
from __future__ import annotations

import secrets
from multiprocessing import shared_memory

import numpy as np

from ..errors import StaleStepError

_HEADER = 1  # int64: the step number the observations belong to


def _layout(capacity: int, inputs: int, outputs: int, workers: int, stride: int, state_rows: int):
    """(name, dtype, shape) of each array, in segment order."""
    return [("header", np.int64, (_HEADER,)), ("stamps", np.int64, (workers,)),
            ("obs", np.float64, (capacity, inputs)), ("index", np.int64, (capacity,)),
            ("rows", np.int64, (capacity,)), ("reset", np.uint8, (capacity,)),
            ("actions", np.float64, (capacity, outputs)), ("current", np.uint8, (state_rows,)),
            ("state", np.float64, (2, state_rows, stride))]


class StepExchange:
    """The buffers of one generation's inference; see the module docstring for the protocol."""

    def __init__(self, spec: dict, shm: shared_memory.SharedMemory, owner: bool):
        self.spec, self.shm, self.owner = spec, shm, owner
        self.arrays = {}
        offset = 0
        for name, dtype, shape in _layout(**spec["sizes"]):
            count = int(np.prod(shape))
            self.arrays[name] = np.ndarray(shape, dtype=dtype, buffer=shm.buf, offset=offset)
            offset += count * np.dtype(dtype).itemsize
            offset = (offset + 63) // 64 * 64

    @classmethod
    def create(cls, capacity: int, inputs: int, outputs: int, workers: int, stride: int = 1,
               state_rows: int = 1) -> "StepExchange":
        sizes = dict(capacity=max(1, capacity), inputs=inputs, outputs=outputs, workers=workers,
                     stride=max(1, stride), state_rows=max(1, state_rows))
        total = sum((int(np.prod(shape)) * np.dtype(dtype).itemsize + 63) // 64 * 64
                    for _, dtype, shape in _layout(**sizes))
        name = f"neatpar-{secrets.token_hex(6)}"
        shm = shared_memory.SharedMemory(name=name, create=True, size=total)
        exchange = cls({"name": name, "sizes": sizes}, shm, owner=True)
        exchange.arrays["header"][0] = -1
        exchange.arrays["stamps"][:] = -1
        exchange.arrays["state"][:] = 0.0
        exchange.arrays["current"][:] = 0
        return exchange

    @classmethod
    def attach(cls, spec: dict) -> "StepExchange":
        """In a worker: map the main process's segment (the main process alone unlinks it)."""
        # Attaching registers the name with the resource tracker again; spawn workers share the
        # main process's tracker, whose registry is a set, so the creator's unlink settles it.
        return cls(spec, shm=shared_memory.SharedMemory(name=spec["name"], create=False), owner=False)

    @property
    def capacity(self) -> int:
        return self.spec["sizes"]["capacity"]

    @property
    def state_rows(self) -> int:
        return self.spec["sizes"]["state_rows"]

    # ------------------------------------------------------------ main process

    def publish(self, step: int, obs: np.ndarray, index: np.ndarray, rows: np.ndarray, reset: np.ndarray) -> None:
        """Write a step's inputs, then its number (the workers are dispatched after this)."""
        n = len(obs)
        a = self.arrays
        a["header"][0] = -1
        a["obs"][:n] = obs
        a["index"][:n] = index
        a["rows"][:n] = rows
        a["reset"][:n] = reset
        a["header"][0] = step

    def collect(self, step: int, workers: list[int], n: int) -> np.ndarray:
        """The step's actions, after checking that every worker that had rows stamped this step."""
        stamps = self.arrays["stamps"]
        stale = [w for w in workers if stamps[w] != step]
        if stale:
            raise StaleStepError(f"step {step}: actions of worker(s) {stale} are stamped with step(s) "
                                 f"{[int(stamps[w]) for w in stale]}; refusing to use them")
        return self.arrays["actions"][:n].copy()

    def commit_state(self, rows: np.ndarray) -> None:
        """After a verified step: the rows' newly written state buffers become current."""
        self.arrays["current"][rows] ^= 1

    # ------------------------------------------------------------ worker

    def read(self, step: int, start: int, end: int):
        """This worker's slice of the step's inputs, if the buffer holds that step."""
        found = int(self.arrays["header"][0])
        if found != step:
            raise StaleStepError(f"step {step}: the shared buffer holds step {found}; refusing to read it")
        a = self.arrays
        return a["obs"][start:end], a["index"][start:end], a["rows"][start:end], a["reset"][start:end]

    def write(self, step: int, worker: int, start: int, outputs: np.ndarray) -> None:
        """Actions first, then this worker's stamp."""
        self.arrays["actions"][start:start + len(outputs)] = outputs
        self.arrays["stamps"][worker] = step

    def state_in(self, rows: np.ndarray, reset: np.ndarray) -> np.ndarray:
        current = self.arrays["current"][rows]
        state = self.arrays["state"][current, rows].copy()
        state[reset.astype(bool)] = 0.0
        return state

    def state_out(self, rows: np.ndarray, values: np.ndarray) -> None:
        self.arrays["state"][1 - self.arrays["current"][rows], rows] = values

    # ------------------------------------------------------------ lifecycle

    def close(self) -> None:
        """Unmap; the owner also unlinks the segment (idempotent)."""
        self.arrays = {}
        shm, self.shm = self.shm, None
        if shm is None:
            return
        shm.close()
        if self.owner:
            try:
                shm.unlink()
            except FileNotFoundError:
                pass
