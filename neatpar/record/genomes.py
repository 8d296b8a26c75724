"""Writing single genomes to files, atomically: neatpar's JSON (recommended: loads without pickle,
shareable) and a pickle. The format, and loading a genome back (`load_genome`), are
genome_file.py's."""
from __future__ import annotations

import json
import pickle

from ..genome_file import genome_to_dict, load_genome  # noqa: F401 - load_genome: its documented place
from .atomic import write_atomic


def save_genome_json(genome, config, path: str, fresh: dict | None = None) -> None:
    """The genome as neatpar's JSON; `fresh`, when given, is its score on fresh episodes (a run's
    validated winner: episodes/validation.py FreshScore.describe), kept under "fresh"."""
    record = genome_to_dict(genome, config)
    if fresh is not None:
        record["fresh"] = fresh
    write_atomic(path, json.dumps(record, indent=1).encode())


def save_genome_pickle(genome, path: str) -> None:
    write_atomic(path, pickle.dumps(genome, pickle.HIGHEST_PROTOCOL))
