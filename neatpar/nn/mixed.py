"""MixedPopulation: population kernels of genomes with different input and output counts (the
populations of an asymmetric game's behaviors) behind the interface of one kernel.

Genome indices run over the parts in order (part 0's genomes first). Inputs are as wide as the
widest part's: a row of a narrower part uses the first num_inputs columns of its row (the rest is
padding); outputs are as wide as the widest part's, a narrower part's rows padded with zeros.
Recurrent state rows are the callers', as for one kernel: each part keeps the state of the rows it
drives. Outputs equal each part's own kernel's.
"""
from __future__ import annotations

from typing import NamedTuple, Sequence

import numpy as np


class Widths(NamedTuple):
    """What callers read of a kernel's tables: the state width of a row."""
    stride: int


class MixedPopulation:
    """Several FeedForwardPopulation or RecurrentPopulation kernels (all of one kind) as one."""

    def __init__(self, parts: Sequence):
        if len({part.recurrent for part in parts}) != 1:
            raise ValueError("a MixedPopulation's parts are all feed-forward or all recurrent")
        self.parts = list(parts)
        self.recurrent = self.parts[0].recurrent
        self.starts = np.cumsum([0] + [len(part) for part in self.parts])
        self.num_inputs = max(part.num_inputs for part in self.parts)
        self.num_outputs = max(part.num_outputs for part in self.parts)
        self.tables = Widths(max(part.tables.stride for part in self.parts))

    def __len__(self) -> int:
        return int(self.starts[-1])

    @property
    def genome_keys(self) -> list:
        return [key for part in self.parts for key in part.genome_keys]

    def _split(self, genome_index: np.ndarray):
        """(part, its rows' positions, their indices within the part) for each part with rows."""
        index = np.asarray(genome_index, dtype=np.int64)
        if ((index < 0) | (index >= len(self))).any():
            raise IndexError(f"genome_index out of range for a population of {len(self)} genomes")
        for number, part in enumerate(self.parts):
            mine = np.flatnonzero((index >= self.starts[number]) & (index < self.starts[number + 1]))
            if len(mine):
                yield part, mine, index[mine] - self.starts[number]

    def activate(self, inputs, genome_index, rows=None) -> np.ndarray:
        x = np.asarray(inputs, dtype=np.float64)
        outputs = np.zeros((len(x), self.num_outputs))
        for part, mine, index in self._split(genome_index):
            state_rows = None if rows is None else np.asarray(rows)[mine]
            outputs[mine, :part.num_outputs] = part.activate(x[mine, :part.num_inputs], index, state_rows)
        return outputs

    def advance(self, inputs, genome_index, state: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """One recurrent step with the callers' state ((rows, stride), each part using its first
        columns)."""
        x = np.asarray(inputs, dtype=np.float64)
        outputs, new = np.zeros((len(x), self.num_outputs)), np.array(state, dtype=np.float64, copy=True)
        for part, mine, index in self._split(genome_index):
            width = part.tables.stride
            outputs[mine, :part.num_outputs], new[mine, :width] = part.advance(
                x[mine, :part.num_inputs], index, state[mine, :width])
        return outputs, new

    def reset(self, rows=None) -> None:
        for part in self.parts:
            part.reset(rows)
