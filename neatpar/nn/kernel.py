"""FeedForwardPopulation, RecurrentPopulation and CTRNNPopulation: a whole population of NEAT
networks evaluated in one call, with outputs equal to neat-python's own networks.

Rows are agents; `genome_index[r]` says which genome drives row r (several rows may share one).
Networks that use only neat-python's built-in functions run in the C kernel (_kernel.c); a
population with a function registered by the user on the genome config runs the same algorithm
in Python, calling that function (correct, much slower).
"""
from __future__ import annotations

import math
from typing import Any, Iterable

import neat.activations
import neat.aggregations
import numpy as np

from . import _kernel
from ..errors import ConfigError
from .compile import BUILTIN_ACTIVATIONS, BUILTIN_AGGREGATIONS, CUSTOM_BASE, Tables, genome_list

_BUILTIN_ACT_FNS = [getattr(neat.activations, f"{n}_activation") for n in BUILTIN_ACTIVATIONS]
_BUILTIN_AGG_FNS = [getattr(neat.aggregations, f"{n}_aggregation") for n in BUILTIN_AGGREGATIONS]


class _Population:
    """What both kinds share: the compiled tables, input checks and the call into the kernel."""

    recurrent = False

    def __init__(self, tables: Tables):
        self.tables = tables

    @classmethod
    def create(cls, genomes: Iterable, config: Any):
        """Compile `genomes` (genome objects or (key, genome) pairs) for `config`."""
        genomes = genome_list(genomes)
        if not genomes:
            raise ValueError("cannot create a population of no genomes")
        return cls(Tables(genomes, config, cls.recurrent))

    @property
    def num_inputs(self) -> int:
        return self.tables.num_inputs

    @property
    def num_outputs(self) -> int:
        return self.tables.num_outputs

    def __len__(self) -> int:
        return self.tables.num_genomes

    @property
    def genome_keys(self) -> list:
        return list(self.tables.genome_keys)

    def _check(self, inputs, genome_index) -> tuple[np.ndarray, np.ndarray]:
        x = np.asarray(inputs, dtype=np.float64)
        if x.ndim != 2 or x.shape[1] != self.num_inputs:
            raise ValueError(f"inputs must be an (agents, {self.num_inputs}) array; got shape {x.shape}")
        if np.isnan(x).any():
            row, col = map(int, np.argwhere(np.isnan(x))[0])
            raise ValueError(f"inputs hold NaN (first at row {row}, input {col}); the networks need numbers")
        rows = x.shape[0]
        if genome_index is None:
            if rows > len(self):
                raise ValueError(f"{rows} input rows but {len(self)} genomes: pass genome_index to say "
                                 f"which genome drives each row")
            index = np.arange(rows, dtype=np.int64)
        else:
            index = np.asarray(genome_index)
            if index.shape != (rows,) or not np.issubdtype(index.dtype, np.integer):
                raise ValueError(f"genome_index must be an int array of shape ({rows},); got "
                                 f"{index.dtype} {index.shape}")
            bad = (index < 0) | (index >= len(self))
            if bad.any():
                raise IndexError(f"genome_index[{int(np.argmax(bad))}] = {int(index[bad][0])} is out of "
                                 f"range for a population of {len(self)} genomes")
            index = np.ascontiguousarray(index, dtype=np.int64)
        return x, index

    def _run(self, index: np.ndarray, read: np.ndarray, write: np.ndarray) -> None:
        t = self.tables
        if t.uses_custom:
            _run_python(t, index, read, write)
            return
        _kernel.run(t.genome_start, t.node_slot, t.node_act, t.node_agg, t.node_bias, t.node_resp,
                    t.link_start, t.link_src, t.link_w, index, read, write, t.stride, t.max_fan_in)

    def _outputs(self, values: np.ndarray) -> np.ndarray:
        n_in = self.num_inputs
        return values[:, n_in:n_in + self.num_outputs].copy()


class FeedForwardPopulation(_Population):
    """neat.nn.FeedForwardNetwork for a whole population at once."""

    def activate(self, inputs, genome_index=None, rows=None) -> np.ndarray:
        """(agents, num_inputs) inputs -> (agents, num_outputs) float64 outputs (`rows` is
        accepted for symmetry with RecurrentPopulation; feed-forward networks keep no state)."""
        x, index = self._check(inputs, genome_index)
        values = np.zeros((x.shape[0], self.tables.stride))
        values[:, :self.num_inputs] = x
        self._run(index, values, values)
        return self._outputs(values)

    def reset(self, rows=None) -> None:
        """Nothing to clear: feed-forward networks keep no state."""


class _StatefulPopulation(_Population):
    """What the kinds with state share: one state row per agent, kept between calls.

    `activate(inputs, genome_index, rows)`: input row i steps the network whose state is kept in
    state row rows[i] (default: row i), so agents that skip a step keep their state. A state row
    is cleared by `reset(rows)`, and automatically when the genome driving it changes. `advance`
    is the same step on state the caller keeps (all zeros is a fresh network).
    """

    recurrent = True

    def __init__(self, tables: Tables):
        super().__init__(tables)
        self._state = np.zeros((0, self.state_width))
        self._genome_of_row = np.zeros(0, dtype=np.int64)

    @property
    def state_width(self) -> int:
        """Doubles of state per row."""
        raise NotImplementedError

    def reset(self, rows=None) -> None:
        """Clear the state of `rows` (an index array or mask), or of every row."""
        if rows is None:
            self._state[:] = 0.0
            return
        rows = np.asarray(rows)
        rows = np.flatnonzero(rows) if rows.dtype == bool else rows.astype(np.int64)
        if rows.size:
            self._grow(int(rows.max()) + 1)
            self._state[rows] = 0.0

    def activate(self, inputs, genome_index=None, rows=None) -> np.ndarray:
        """One step of the networks of the given rows; returns (agents, num_outputs) float64."""
        x, index = self._check(inputs, genome_index)
        rows = np.arange(x.shape[0]) if rows is None else np.asarray(rows, dtype=np.int64)
        if rows.shape != (x.shape[0],) or (rows < 0).any() or len(np.unique(rows)) != len(rows):
            raise ValueError(f"rows must be {x.shape[0]} distinct non-negative state-row indices")
        self._grow(int(rows.max()) + 1 if len(rows) else 0)
        known = self._genome_of_row[rows]
        self._state[rows[(known != index) & (known != -1)]] = 0.0
        self._genome_of_row[rows] = index
        outputs, self._state[rows] = self.advance(x, index, self._state[rows])
        return outputs

    def advance(self, inputs, genome_index, state: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """One step from `state` ((agents, state_width)): (outputs, new state)."""
        raise NotImplementedError

    def _grow(self, count: int) -> None:
        if count > len(self._state):
            extra = count - len(self._state)
            self._state = np.vstack([self._state, np.zeros((extra, self.state_width))])
            self._genome_of_row = np.concatenate([self._genome_of_row, np.full(extra, -1, np.int64)])

    def __getstate__(self) -> dict:
        return {"tables": self.tables}  # state belongs to the rows of the process that runs them

    def __setstate__(self, state: dict) -> None:
        self.__init__(state["tables"])


class RecurrentPopulation(_StatefulPopulation):
    """neat.nn.RecurrentNetwork for a whole population, with one hidden state per state row.

    (neat-python keeps two value buffers and swaps them; non-evaluated slots are 0.0 in both and
    inputs are written to both, so one state per row plus a copy per step is the same network.)
    """

    @property
    def state_width(self) -> int:
        return self.tables.stride

    def advance(self, inputs, genome_index, state: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """One step without kept state: (outputs, new state) from `state` ((agents, stride), one
        row per input row). What activate() does; a caller that keeps state elsewhere (shared
        memory) uses this."""
        x, index = self._check(inputs, genome_index)
        read = np.array(state, dtype=np.float64, copy=True)
        read[:, :self.num_inputs] = x
        write = read.copy()
        self._run(index, read, write)
        return self._outputs(write), write


class CTRNNPopulation(_StatefulPopulation):
    """neat.ctrnn.CTRNN for a whole population: `activate(inputs, genome_index, rows)` is each
    row's `CTRNN.advance(inputs, advance_time, time_step)` (every row's own network, node values
    and elapsed time), bit for bit; a state row cleared (`reset`, or a new genome) is
    `CTRNN.reset()`.

    A state row holds what a CTRNN keeps: its two value buffers (each Euler step reads one and
    integrates into the other, then they swap; the outputs come from the one the last step read),
    which one is active, and `time_seconds` (the loop runs `while time_seconds < time_seconds at
    the start + advance_time` with `dt = min(time_step, remaining)`, so the number of steps of one
    call depends on the rounding of the time so far).
    """

    def __init__(self, tables: Tables, advance_time: float, time_step: float):
        self.advance_time, self.time_step = _check_times(advance_time, time_step)
        super().__init__(tables)

    @classmethod
    def create(cls, genomes: Iterable, config: Any, advance_time: float = 0.1, time_step: float = 0.02):
        """Compile `genomes` for `config`; each activate() advances every network by `advance_time`
        seconds in Euler steps of at most `time_step` (CTRNN.advance's arguments)."""
        genomes = genome_list(genomes)
        if not genomes:
            raise ValueError("cannot create a population of no genomes")
        tables = Tables(genomes, config, recurrent=True, time_constants=True)
        zero = np.flatnonzero(tables.node_tau == 0.0)
        if len(zero):
            genome = int(np.searchsorted(tables.genome_start, zero[0], side="right") - 1)
            raise ConfigError(f"genome {tables.genome_keys[genome]} has a node with time_constant 0.0, which "
                              f"CTRNN.advance divides by: set [DefaultGenome] time_constant_min_value above 0")
        return cls(tables, advance_time, time_step)

    @property
    def state_width(self) -> int:
        return 2 * self.tables.stride + 2

    def activate(self, inputs, genome_index=None, rows=None) -> np.ndarray:
        """Each given row's CTRNN.advance(inputs, advance_time, time_step); (agents, num_outputs)."""
        return super().activate(inputs, genome_index, rows)

    def advance(self, inputs, genome_index, state: np.ndarray, advance_time: float | None = None,
                time_step: float | None = None) -> tuple[np.ndarray, np.ndarray]:
        """One CTRNN.advance per row from `state` ((agents, state_width), zeros = fresh): (outputs,
        new state). What activate() does; a caller that keeps state elsewhere (shared memory) uses
        this. `advance_time` and `time_step` default to the population's."""
        x, index = self._check(inputs, genome_index)
        advance_time, time_step = _check_times(self.advance_time if advance_time is None else advance_time,
                                               self.time_step if time_step is None else time_step)
        new = np.array(state, dtype=np.float64, order="C", copy=True)
        if new.shape != (len(x), self.state_width):
            raise ValueError(f"state must be an ({len(x)}, {self.state_width}) array; got shape {new.shape}")
        outputs = np.empty((len(x), self.num_outputs))
        t = self.tables
        if t.uses_custom:
            stuck = _advance_python(t, index, x, new, outputs, advance_time, time_step)
        else:
            stuck = _kernel.ctrnn_run(t.genome_start, t.node_slot, t.node_act, t.node_agg, t.node_bias, t.node_resp,
                                      t.link_start, t.link_src, t.link_w, t.node_tau, index,
                                      np.ascontiguousarray(x), new, outputs,
                                      self.num_inputs, self.num_outputs, t.stride, t.max_fan_in, advance_time,
                                      time_step)
        if stuck >= 0:
            raise ValueError(f"row {stuck}: after {float(new[stuck, -1])!r} s a step of {time_step!r} s no longer "
                             f"moves the time (float64 rounding), so CTRNN.advance would never return; reset the "
                             f"row or use a larger time_step")
        return outputs, new

    def __getstate__(self) -> dict:
        return {"tables": self.tables, "advance_time": self.advance_time, "time_step": self.time_step}

    def __setstate__(self, state: dict) -> None:
        self.__init__(state["tables"], state["advance_time"], state["time_step"])


def _check_times(advance_time, time_step) -> tuple[float, float]:
    advance_time, time_step = float(advance_time), float(time_step)
    if not (math.isfinite(advance_time) and advance_time >= 0.0):
        raise ValueError(f"advance_time = {advance_time!r}: give the seconds one call advances, a finite number >= 0")
    if not (math.isfinite(time_step) and time_step > 0.0):
        raise ValueError(f"time_step = {time_step!r}: give the Euler step in seconds, a finite number > 0")
    return advance_time, time_step


def _function(code: int, builtins: list, custom: list):
    return builtins[code] if code < CUSTOM_BASE else custom[code - CUSTOM_BASE]


def _run_python(t: Tables, index: np.ndarray, read: np.ndarray, write: np.ndarray) -> None:
    """The kernel's loop in Python, for populations that use user-registered functions."""
    acts = [_function(int(c), _BUILTIN_ACT_FNS, t.custom_activations) for c in t.node_act]
    aggs = [_function(int(c), _BUILTIN_AGG_FNS, t.custom_aggregations) for c in t.node_agg]
    src, w, starts = t.link_src.tolist(), t.link_w.tolist(), t.link_start.tolist()
    for r, g in enumerate(index.tolist()):
        old, new = read[r].tolist(), write[r]
        if read is write:
            old = new  # feed-forward: later nodes read values written in this call
        for n in range(t.genome_start[g], t.genome_start[g + 1]):
            x = [float(old[src[k]]) * w[k] for k in range(starts[n], starts[n + 1])]
            new[t.node_slot[n]] = acts[n](t.node_bias[n] + t.node_resp[n] * aggs[n](x))


def _advance_python(t: Tables, index: np.ndarray, x: np.ndarray, state: np.ndarray, outputs: np.ndarray,
                    advance_time: float, time_step: float) -> int:
    """_kernel.ctrnn_run in Python (neat-python's CTRNN.advance loop, row by row), for populations
    that use user-registered functions; returns the first stuck row or -1."""
    acts = [_function(int(c), _BUILTIN_ACT_FNS, t.custom_activations) for c in t.node_act]
    aggs = [_function(int(c), _BUILTIN_AGG_FNS, t.custom_aggregations) for c in t.node_agg]
    src, w, starts = t.link_src.tolist(), t.link_w.tolist(), t.link_start.tolist()
    slot, bias, resp, tau = t.node_slot.tolist(), t.node_bias.tolist(), t.node_resp.tolist(), t.node_tau.tolist()
    stride, n_in, n_out = t.stride, t.num_inputs, t.num_outputs
    for r, g in enumerate(index.tolist()):
        row = state[r]
        values = [row[:stride].tolist(), row[stride:2 * stride].tolist()]
        active, time = int(row[2 * stride] != 0.0), float(row[2 * stride + 1])
        final_time, inputs = time + advance_time, x[r].tolist()
        while time < final_time:
            dt = min(time_step, final_time - time)
            ivalues, ovalues = values[active], values[1 - active]
            active = 1 - active
            ivalues[:n_in] = inputs
            ovalues[:n_in] = inputs
            for n in range(t.genome_start[g], t.genome_start[g + 1]):
                node_inputs = [ivalues[src[k]] * w[k] for k in range(starts[n], starts[n + 1])]
                z = acts[n](bias[n] + resp[n] * aggs[n](node_inputs))
                ovalues[slot[n]] += dt / tau[n] * (-ovalues[slot[n]] + z)
            if time + dt == time:
                return r
            time += dt
        row[:stride], row[stride:2 * stride] = values
        row[2 * stride], row[2 * stride + 1] = float(active), time
        outputs[r] = values[1 - active][n_in:n_in + n_out]
    return -1
