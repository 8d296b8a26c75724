"""A MAP-Elites run's archive in its run folder: archive.json (every filled cell: its index,
descriptor, fitness and genome in the genome files' form) and archive.png, the heat map of the
elites' fitness (search/archive_files.py makes their content); and an elite read back from
archive.json by its cell (`neatpar export --genome RUN/archive.json --cell I,J`)."""
from __future__ import annotations

import json
import os

from ..errors import ConfigError
from ..search.archive_files import FORMAT, archive_json, archive_png
from ..search.map_elites import EliteArchive
from ..genome_file import genome_from_dict, genome_to_dict
from .atomic import write_atomic

ARCHIVE_FILE = "archive.json"
HEAT_MAP_FILE = "archive.png"


def save_archive(folder: str, archive: EliteArchive, config, qd_offset: float = 0.0) -> list[str]:
    """archive.json, and archive.png where matplotlib is installed, in `folder`; their paths."""
    path = os.path.join(folder, ARCHIVE_FILE)
    write_atomic(path, archive_json(archive, lambda genome: genome_to_dict(genome, config), qd_offset))
    written = [path]
    picture = archive_png(archive)
    if picture is not None:
        written.append(os.path.join(folder, HEAT_MAP_FILE))
        write_atomic(written[-1], picture)
    return written


def is_archive_file(path: str) -> bool:
    """True for an archive.json (its format field says so), whatever its name."""
    try:
        with open(path, "rb") as f:
            head = f.read(64)
        return head.lstrip().startswith(b"{") and _load(path).get("format") == FORMAT
    except (OSError, ValueError):
        return False


def parse_cell(text: str) -> tuple[int, ...]:
    """`--cell I,J`: a cell's index per descriptor dimension."""
    parts = [p.strip() for p in str(text).split(",")]
    if not parts or not all(p.isdigit() for p in parts):
        raise ConfigError(f"--cell {text}: give the cell's index per descriptor dimension, whole numbers separated "
                          f"by commas (e.g. --cell 3,5)")
    return tuple(int(p) for p in parts)


def load_elite(path: str, cell: str):
    """The genome of the elite in cell `cell` (`I,J`) of archive.json `path`; a ConfigError naming
    the filled cells when that one is empty or outside the grid."""
    data = _load(path)
    if data.get("format") != FORMAT:
        raise ConfigError(f"{path} is not a MAP-Elites archive (archive.json of a run with search = map-elites)")
    index = parse_cell(cell)
    bins = list(data["descriptor_bins"])
    if len(index) != len(bins) or any(i >= n for i, n in zip(index, bins)):
        raise ConfigError(f"--cell {cell} is not a cell of {path}'s grid of {' x '.join(map(str, bins))} cells: give "
                          f"{len(bins)} indices, each below its dimension's bins")
    for entry in data["cells"]:
        if tuple(entry["index"]) == index:
            genome = genome_from_dict(entry["genome"], f"{path} cell {cell}")
            genome.fitness = entry["fitness"]   # the elite's (true) fitness, as the archive scored it
            return genome
    raise ConfigError(f"cell {cell} of {path} is empty: {_filled_cells(data['cells'], index, bins)}")


ALL_FILLED = 12   # up to this many filled cells, an empty cell's error lists them all
NEAREST = 8       # past it, the error lists the filled cells nearest the one asked


def _filled_cells(cells: list[dict], index: tuple[int, ...], bins: list[int]) -> str:
    """What an empty cell's error says of the filled ones, in one line whatever the archive's size:
    all of them when few; else their count, the nearest to `index` (by index distance, ties in
    index order) and the fittest, the cells a user would pick instead."""
    def name(entry: dict) -> str:
        return ",".join(map(str, entry["index"]))
    if len(cells) <= ALL_FILLED:
        return f"the filled cells are {' '.join(map(name, cells))}"
    ordered = sorted(cells, key=lambda e: (sum((a - b) ** 2 for a, b in zip(e["index"], index)), e["index"]))
    fittest = max(cells, key=lambda e: e["fitness"])
    return (f"{len(cells)} of its {' x '.join(map(str, bins))} cells are filled, the nearest "
            f"{' '.join(map(name, ordered[:NEAREST]))}, the fittest {name(fittest)} (fitness {fittest['fitness']:.4g})")


def _load(path: str) -> dict:
    try:
        with open(path) as f:
            data = json.load(f)
    except OSError as error:
        raise ConfigError(f"archive {path} cannot be read: {error.strerror}") from None
    except ValueError:
        raise ConfigError(f"{path} is not JSON: give a run folder's archive.json") from None
    return data if isinstance(data, dict) else {}
