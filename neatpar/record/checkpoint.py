"""A run's checkpoints: one Checkpoint record, written and read here only.

The file keeps neat-python's Checkpointer format (a gzip pickle of generation, config, population,
species set and random state), so `neat.Checkpointer.restore_checkpoint` reads it; neatpar's own
state follows as a second pickle in the same file, a plain dict (champion, the evaluator's
generation count, stats.csv's header as of then (the rows are in the run folder), the best genome, the run's settings, the leagues, the search's
state and, in an asymmetric self-play run, the second population), so that a checkpoint names no class of the
application layer and checkpoints of earlier versions keep loading. Both are pickled without
side effects on the live config (see neatpar.parallel.serialize).
"""
from __future__ import annotations

import dataclasses
import glob
import gzip
import io
import os
import pickle
import random
import re
from dataclasses import dataclass, field
from typing import Any

import neat

from ..config.run_settings import RunSettings
from ..errors import ConfigError
from ..parallel.serialize import dumps
from ..run_state import RunState
from .atomic import write_atomic
from .stats_row import StatsRow


@dataclass
class PopulationState:
    """One population as a checkpoint keeps it: its neat config, genomes, species set, the
    generation it makes next, its best genome and stats.csv's header as of then (`columns`; the
    rows are in the run folder, stats_file.py). A checkpoint of an earlier neatpar holds its stats
    rows instead (`rows`), read still."""
    config: Any
    population: dict
    species: Any
    generation: int
    best_genome: Any = None
    columns: list[str] = field(default_factory=list)
    rows: list[StatsRow] = field(default_factory=list)

    @classmethod
    def of(cls, population: neat.Population, columns: list[str], generation: int | None = None) -> "PopulationState":
        """A live population's state; `generation` when neat-python has not counted it yet."""
        return cls(population.config, population.population, population.species,
                   population.generation if generation is None else generation, population.best_genome, list(columns))

    def restore(self, config) -> neat.Population:
        """A neat.Population that continues this one under `config`, with the saved run's evolving
        counters (node keys, innovation numbers), as neat.Checkpointer.restore_checkpoint keeps
        the innovation tracker."""
        old, new = self.config.genome_config, config.genome_config
        if getattr(old, "node_indexer", None) is not None:
            new.node_indexer = old.node_indexer
        restored = neat.Population(config, (self.population, self.species, self.generation))
        tracker = getattr(old, "innovation_tracker", None)
        if tracker is not None:
            restored.reproduction.innovation_tracker = tracker
            new.innovation_tracker = tracker
        if self.best_genome is not None:
            restored.best_genome = self.best_genome
        return restored

    def _side_record(self) -> dict:
        return {"config": self.config, "population": self.population, "species": self.species,
                "best_genome": self.best_genome, "generation": self.generation, "stats_columns": list(self.columns)}

    @classmethod
    def _from_side_record(cls, record: dict) -> "PopulationState":
        return cls(record["config"], record["population"], record["species"], record["generation"],
                   record["best_genome"], list(record.get("stats_columns", [])),
                   [StatsRow.from_record(row) for row in record.get("rows", [])])


@dataclass
class Checkpoint:
    """A whole run at the start of a generation: the (first) population, the random state, the
    evaluator's state, the run's settings and, in an asymmetric self-play run, the other
    populations (`sides`, behavior -> state)."""
    population: PopulationState
    rndstate: Any
    evaluator: RunState = field(default_factory=RunState)
    run_settings: RunSettings | None = None
    sides: dict[str, PopulationState] | None = None

    @property
    def generation(self) -> int:
        """The checkpoint's generation (its file name): neat-python's for one population; in an
        asymmetric run the run's, both populations' generations together."""
        return self.evaluator.generation if self.sides else self.population.generation

    def restore(self, config, path: str) -> neat.Population:
        """The first population, continued under `config` (PopulationState.restore), and the
        random state; a config of another shape than the checkpoint's is refused (`path` names it)."""
        old, new = self.population.config.genome_config, config.genome_config
        if (old.num_inputs, old.num_outputs) != (new.num_inputs, new.num_outputs):
            raise ConfigError(f"checkpoint {path} was made with num_inputs = {old.num_inputs}, num_outputs = "
                              f"{old.num_outputs}; the config has {new.num_inputs} and {new.num_outputs}: resume with "
                              f"the run's own config")
        restored = self.population.restore(config)
        random.setstate(self.rndstate)
        return restored

    # ------------------------------------------------------------ the file

    def to_bytes(self) -> bytes:
        """The pickled content of the file (before gzip): neat-python's 5-tuple, then neatpar's dict."""
        p = self.population
        extras = {"champion": self.evaluator.champion, "evaluator_generation": self.evaluator.generation,
                  "stats_columns": list(p.columns), "best_genome": p.best_genome,
                  "selfplay": self.evaluator.selfplay, "search": self.evaluator.search,
                  "validation": self.evaluator.validation, "curriculum": self.evaluator.curriculum}
        if self.run_settings is not None:   # an earlier neatpar stored none
            extras["run_settings"] = self.run_settings.to_dict()
        if self.sides is not None:
            extras["sides"] = {b: s._side_record() for b, s in self.sides.items()}
        return dumps((p.generation, p.config, p.population, p.species, self.rndstate)) + dumps(extras)

    @classmethod
    def from_bytes(cls, data: bytes, path: str) -> "Checkpoint":
        """A checkpoint from a file's content (after gzip); `path` names it in errors."""
        try:
            stream = io.BytesIO(data)
            state = pickle.load(stream)
            extras = pickle.load(stream) if stream.tell() < len(data) else {}
        except (OSError, EOFError, pickle.UnpicklingError, ValueError, TypeError, AttributeError) as exc:
            raise ConfigError(f"checkpoint {path} is corrupt or truncated ({type(exc).__name__}): resume from "
                              f"an earlier one in the same folder") from None
        if not (isinstance(state, tuple) and len(state) == 5 and isinstance(extras, dict)):
            raise ConfigError(f"{path} is not a checkpoint (it holds a {type(state).__name__}): resume from a run "
                              f"folder's checkpoints/checkpoint-N.gz")
        generation, config, population, species, rndstate = state
        stored = extras.get("run_settings")
        sides = extras.get("sides")
        return cls(PopulationState(config=config, population=population, species=species, generation=generation,
                                   best_genome=extras.get("best_genome"),
                                   columns=list(extras.get("stats_columns", [])),
                                   rows=[StatsRow.from_record(row) for row in extras.get("rows", [])]),
                   rndstate,
                   RunState(champion=extras.get("champion"), generation=extras.get("evaluator_generation", generation),
                            selfplay=extras.get("selfplay"), search=extras.get("search"),
                            validation=extras.get("validation"), curriculum=extras.get("curriculum")),
                   run_settings=None if stored is None else RunSettings.from_dict(stored),
                   sides=None if sides is None else {b: PopulationState._from_side_record(s) for b, s in sides.items()})

    def save(self, folder: str) -> str:
        """Write the checkpoint to `folder`'s checkpoint-N.gz atomically; returns its path."""
        return save_bytes(folder, self.generation, self.to_bytes())

    @classmethod
    def load(cls, path: str) -> "Checkpoint":
        """The checkpoint in `path`. Unpickling runs code: load only checkpoints from your own run
        folders."""
        if not os.path.isfile(path):
            raise ConfigError(f"checkpoint {path} not found")
        with open(path, "rb") as f:
            magic = f.read(2)
        if magic != b"\x1f\x8b":  # not gzip: a winner.json, a .pickle genome, a config...
            raise ConfigError(f"{path} is not a checkpoint: resume from a run folder's checkpoints/checkpoint-N.gz")
        try:
            with gzip.open(path, "rb") as f:
                data = f.read()
        except (OSError, EOFError) as exc:
            raise ConfigError(f"checkpoint {path} is corrupt or truncated ({type(exc).__name__}): resume from "
                              f"an earlier one in the same folder") from None
        return cls.from_bytes(data, path)

    def without_run_settings(self) -> "Checkpoint":
        """This checkpoint as an earlier neatpar wrote it, with no settings stored."""
        return dataclasses.replace(self, run_settings=None)


def checkpoint_path(folder: str, generation: int | str) -> str:
    """checkpoints/checkpoint-N.gz in the run folder `folder`."""
    return os.path.join(folder, "checkpoints", f"checkpoint-{generation}.gz")


def latest_checkpoint(folder: str) -> str:
    """The checkpoint of the latest generation in the run folder `folder` (a folder with none is
    refused: there is nothing to resume)."""
    found = glob.glob(checkpoint_path(glob.escape(folder), "*"))
    numbered = [(int(m.group(1)), path) for path in found
                if (m := re.fullmatch(r"checkpoint-(\d+)\.gz", os.path.basename(path)))]
    if not numbered:
        raise ConfigError(f"{folder} holds no checkpoints/checkpoint-N.gz: resume from a run folder that has "
                          f"written a checkpoint, or name the checkpoint file")
    return max(numbered)[1]


def save_bytes(folder: str, generation: int, state: bytes) -> str:
    """Write a checkpoint from `Checkpoint.to_bytes()` (taken earlier, e.g. at the start of a
    generation that was then interrupted) to `folder`'s checkpoint of `generation`."""
    buffer = io.BytesIO()
    with gzip.GzipFile(fileobj=buffer, mode="wb", compresslevel=5, mtime=0) as f:
        f.write(state)
    path = checkpoint_path(folder, generation)
    write_atomic(path, buffer.getvalue())
    return path
