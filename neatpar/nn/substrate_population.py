"""SubstratePopulation: a population of HyperNEAT networks (each genome a CPPN that paints a
substrate's weights, hyperneat.py) behind the population kernel's interface (kernel.py), so that
the episode runner, the pool's exchange and env hosts use it as they use FeedForwardPopulation.

Rows are agents; `genome_index[r]` says which genome's substrate network drives row r. Each step
evaluates every row's network in C (_substrate.c), the rows of one genome together (they share
its weights), and returns exactly what neat-python's FeedForwardNetwork of the substrate
(hyperneat.py's definition) returns.

Phenotypes (a genome's weights and biases: `substrate.parameters` doubles, 8 * (7,056 * 16 + 16 +
16 * 5 + 5) = 904 KB for an 84 x 84 x 1 image -> 16 -> 5 substrate, 2.7 MB for 84 x 84 x 3) are
built on first use, only for genomes whose rows ask for one, and only once per process: a
phenotype is kept under its key (hyperneat.cppn_keys: a digest of the compiled CPPN and the
substrate's coordinates and query), which is safe because the weights are a function of exactly
what the key hashes, whatever the genome's key, generation or config. The keys are looked up
among the phenotypes of every population alive in the process and of the last one made (so a
pool worker that dropped last generation's population before it received this one still finds
its elites'); nothing else is kept, so memory is the live populations' phenotypes plus at most
the last one's: about 150 * 2.7 MB = 406 MB for a population of 150 on 84 x 84 x 3 images, in
each process that runs rows of every genome (each pool worker holds its own).

Pickling (the pool, env hosts, Ray actors) sends the compiled CPPNs (a few hundred bytes per
genome) and the substrate (its coordinates: 0.5 MB for 84 x 84 x 3), never the phenotypes: each
process builds the ones its rows use.
"""
from __future__ import annotations

import weakref
from typing import Any, Iterable

import numpy as np

from . import _substrate
from .compile import BUILTIN_ACTIVATIONS, Tables, genome_list
from .hyperneat import Phenotype, build_blocks, compile_cppns, cppn_keys, phenotype_of
from .mixed import Widths
from .substrate import Substrate


class _Phenotypes:
    """The phenotype blocks of this process by key: those some live population holds, and the
    last population's, until the next one is made."""

    def __init__(self):
        self._live: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
        self._last: dict = {}

    def find(self, key: bytes) -> np.ndarray | None:
        return self._live.get(key)

    def add(self, key: bytes, block: np.ndarray) -> None:
        self._live[key] = block

    def keep(self, blocks: dict) -> None:
        """`blocks` (a population's own dict, which grows as it builds) stays alive until the next
        population is made."""
        self._last = blocks

    def __len__(self) -> int:
        return len(self._live)


PHENOTYPES = _Phenotypes()


class SubstratePopulation:
    """HyperNEAT networks of a whole population: genome i's CPPN queried over `substrate`, the
    substrate network evaluated for every row it drives (feed-forward: no state)."""

    recurrent = False

    def __init__(self, cppn: Tables, substrate: Substrate, threads: int | None = None):
        self.cppn, self.substrate, self.threads = cppn, substrate, threads
        self.keys = cppn_keys(cppn, substrate)
        self.tables = Widths(1)   # what MixedPopulation reads of a part: a row keeps no state
        self._activation = BUILTIN_ACTIVATIONS.index(substrate.activation)
        self._sizes = np.asarray(substrate.sizes, dtype=np.int64)
        self._blocks: dict[bytes, np.ndarray] = {}
        for key in self.keys:
            found = PHENOTYPES.find(key)
            if found is not None:
                self._blocks[key] = found
        PHENOTYPES.keep(self._blocks)

    @classmethod
    def create(cls, genomes: Iterable, config: Any, substrate: Substrate, threads: int | None = None):
        """Compile the CPPNs of `genomes` (genome objects or (key, genome) pairs) for `config` (its
        [DefaultGenome] describes the CPPNs) and `substrate`; phenotypes are built on first use,
        on `threads` threads (default: one per CPU)."""
        genomes = genome_list(genomes)
        if not genomes:
            raise ValueError("cannot create a population of no genomes")
        return cls(compile_cppns(genomes, config, substrate), substrate, threads)

    @property
    def num_inputs(self) -> int:
        return self.substrate.num_inputs

    @property
    def num_outputs(self) -> int:
        return self.substrate.num_outputs

    def __len__(self) -> int:
        return self.cppn.num_genomes

    @property
    def genome_keys(self) -> list:
        return list(self.cppn.genome_keys)

    # ------------------------------------------------------------ phenotypes

    def build(self, genomes: Iterable[int] | None = None) -> None:
        """Build the phenotypes of the given genome indices (default: all) not built yet."""
        indices = range(len(self)) if genomes is None else sorted({int(g) for g in genomes})
        missing = {}
        for g in indices:
            key = self.keys[g]
            if key not in self._blocks:
                found = PHENOTYPES.find(key)
                if found is not None:
                    self._blocks[key] = found
                else:
                    missing.setdefault(key, g)   # genomes with equal CPPNs are built once
        if missing:
            for key, block in zip(missing, build_blocks(self.cppn, list(missing.values()), self.substrate,
                                                        self.threads)):
                block.setflags(write=False)
                self._blocks[key] = block
                PHENOTYPES.add(key, block)

    def phenotype(self, genome: int) -> Phenotype:
        """Genome `genome`'s weights and biases (built if needed)."""
        self.build([genome])
        return phenotype_of(self._blocks[self.keys[genome]], self.substrate)

    @property
    def phenotype_bytes(self) -> int:
        """Bytes of the phenotypes this population holds now."""
        return sum(block.nbytes for block in self._blocks.values())

    # ------------------------------------------------------------ the kernel's interface

    def activate(self, inputs, genome_index=None, rows=None) -> np.ndarray:
        """(agents, num_inputs) inputs -> (agents, num_outputs) float64 outputs (`rows` is
        accepted for symmetry with the recurrent kernels; substrate networks keep no state)."""
        x, index = self._check(inputs, genome_index)
        outputs = np.empty((len(x), self.num_outputs))
        if not len(x):
            return outputs
        used, group = np.unique(index, return_inverse=True)
        self.build(used)
        blocks = tuple(self._blocks[self.keys[g]] for g in used.tolist())
        order = np.argsort(group, kind="stable")
        _substrate.forward(blocks, group.astype(np.int64), order.astype(np.int64), x, outputs, self._sizes,
                           self._activation)
        return outputs

    def reset(self, rows=None) -> None:
        """Nothing to clear: substrate networks keep no state."""

    def _check(self, inputs, genome_index) -> tuple[np.ndarray, np.ndarray]:
        x = np.ascontiguousarray(inputs, dtype=np.float64)
        if x.ndim != 2 or x.shape[1] != self.num_inputs:
            raise ValueError(f"inputs must be an (agents, {self.num_inputs}) array; got shape {x.shape}")
        if np.isnan(x).any():
            row, col = map(int, np.argwhere(np.isnan(x))[0])
            raise ValueError(f"inputs hold NaN (first at row {row}, input {col}); the networks need numbers")
        if genome_index is None:
            if len(x) > len(self):
                raise ValueError(f"{len(x)} input rows but {len(self)} genomes: pass genome_index to say "
                                 f"which genome drives each row")
            return x, np.arange(len(x), dtype=np.int64)
        index = np.asarray(genome_index)
        if index.shape != (len(x),) or not np.issubdtype(index.dtype, np.integer):
            raise ValueError(f"genome_index must be an int array of shape ({len(x)},); got {index.dtype} "
                             f"{index.shape}")
        bad = (index < 0) | (index >= len(self))
        if bad.any():
            raise IndexError(f"genome_index[{int(np.argmax(bad))}] = {int(index[bad][0])} is out of range for a "
                             f"population of {len(self)} genomes")
        return x, index.astype(np.int64)

    # ------------------------------------------------------------ pickling: the CPPNs, not the phenotypes

    def __getstate__(self) -> dict:
        return {"cppn": self.cppn, "substrate": self.substrate, "threads": self.threads}

    def __setstate__(self, state: dict) -> None:
        self.__init__(state["cppn"], state["substrate"], state["threads"])
