"""A run's per-generation files, appended a generation at a time, so that a generation costs the
same however long the run has gone on: stats.csv (stats_row.py names its columns) and species.csv
(`generation,species,size`: each species' members, what species.png stacks).

A line is appended with one write, so an interrupt leaves whole lines (a line cut by a crash, one
without its end, is ignored when the file is read). The header is rewritten, with the rows before
it, only when a generation brings a column the file does not have yet (a game statistic sent for
the first time): new columns come last, and the rows before them get empty cells.
A resumed run begins the files at its checkpoint's generation: the lines before it are kept (or
copied from the run folder the checkpoint came from), under the header the file had then (the
checkpoint keeps it), and the lines after it dropped, when the run writes its first generation; a
resumed run's files are then a straight run's.
"""
from __future__ import annotations

import csv
import io
import os

from .atomic import write_atomic
from .stats_row import EMPTY, SPECIES_SIZES, StatsRow, stats_columns

STATS_FILE = "stats.csv"
SPECIES_FILE = "species.csv"
SPECIES_COLUMNS = ("generation", "species", "size")
LINE_END = "\r\n"   # the csv module's own line end, as stats.csv always had


class StatsFile:
    """The stats.csv and species.csv of the run folder `folder`. Before the first `append`, `begin`
    says which generations the files hold already (none: a new run)."""

    def __init__(self, folder: str):
        self.folder = folder
        self.columns: list[str] = []   # stats.csv's header as of the latest row (checkpoints keep it)
        self._begin: tuple[int, str | None, list[StatsRow]] | None = (0, None, [])   # a new run: both made empty

    @property
    def stats_path(self) -> str:
        return os.path.join(self.folder, STATS_FILE)

    @property
    def species_path(self) -> str:
        return os.path.join(self.folder, SPECIES_FILE)

    def begin(self, generation: int, columns: list[str], source: str | None = None,
              rows: list[StatsRow] | None = None) -> None:
        """The files will hold the generations before `generation`, under the header `columns`
        they had then: `rows` (a checkpoint of an earlier neatpar held them), else the lines of
        the folder `source` (this folder's own on a resume in place, or the run folder the
        checkpoint came from), else none. Done by the first `append`: a run stopped before it
        leaves the files as they were."""
        self.columns = stats_columns(rows) if rows else list(columns)
        self._begin = (generation, source, list(rows or []))

    def append(self, row: StatsRow) -> None:
        """The generation's row in stats.csv and its species in species.csv."""
        if self._begin is not None:
            self._start(*self._begin)
            self._begin = None
        cells = row.columns()
        if not set(cells) <= set(self.columns):
            self._widen(list(dict.fromkeys([*self.columns, *cells])))   # stats_columns' order: new ones last
        _append(self.stats_path, _csv_line([cells.get(c, EMPTY) for c in self.columns]))
        _append(self.species_path, "".join(_csv_line([row.generation, sid, size])
                                           for sid, size in sorted(row.species_sizes.items())))

    def rows(self) -> list[StatsRow]:
        """Every generation's row as the files hold it, numbers read back, with its species' sizes."""
        sizes: dict[int, dict[int, int]] = {}
        for record in _read(self.species_path):
            sizes.setdefault(int(record["generation"]), {})[int(record["species"])] = int(record["size"])
        return [StatsRow.from_record({**{column: _number(cell) for column, cell in cells.items()},
                                      SPECIES_SIZES: sizes.get(int(cells["generation"]), {})})
                for cells in _read(self.stats_path)]

    # ------------------------------------------------------------ the first append

    def _start(self, generation: int, source: str | None, rows: list[StatsRow]) -> None:
        """The files as they are before `generation`'s row: rewritten once, atomically."""
        if rows:
            kept = [r for r in rows if r.generation < generation]
            stats = [[r.columns().get(c, EMPTY) for c in self.columns] for r in kept]
            species = [[r.generation, sid, size] for r in kept for sid, size in sorted(r.species_sizes.items())]
        elif source is not None:
            header, lines = _lines_before(os.path.join(source, STATS_FILE), generation)
            stats = [[dict(zip(header, cells)).get(c, EMPTY) for c in self.columns] for cells in lines]
            species = _lines_before(os.path.join(source, SPECIES_FILE), generation)[1]
        else:
            stats, species = [], []
        self._write(stats, species)

    def _widen(self, columns: list[str]) -> None:
        """stats.csv with `columns` (the old ones first): the rows so far get empty new cells."""
        added = len(columns) - len(self.columns)
        stats = [record + [EMPTY] * added for record in _rows_of(self.stats_path)]
        self.columns = columns
        self._write(stats, None)

    def _write(self, stats: list[list], species: list[list] | None) -> None:
        body = "".join(_csv_line(cells) for cells in stats)
        write_atomic(self.stats_path, ((_csv_line(self.columns) if self.columns else "") + body).encode())
        if species is not None:
            write_atomic(self.species_path, (_csv_line(SPECIES_COLUMNS) +
                                             "".join(_csv_line(cells) for cells in species)).encode())


def _csv_line(cells) -> str:
    """One line of a csv file, as csv.writer writes it."""
    text = io.StringIO()
    csv.writer(text, lineterminator=LINE_END).writerow(cells)
    return text.getvalue()


def _append(path: str, text: str) -> None:
    """`text` at the end of `path`, in one write."""
    if not text:
        return
    data = text.encode()
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        while data:
            data = data[os.write(fd, data):]
    finally:
        os.close(fd)


def _whole_lines(path: str) -> list[str]:
    """The file's lines that are whole (a line without its end, cut by a crash, is left out)."""
    try:
        with open(path, newline="") as f:
            text = f.read()
    except FileNotFoundError:
        return []
    lines = text.split(LINE_END)
    return lines[:-1]   # after the last line end: nothing, or a cut line


def _rows_of(path: str) -> list[list[str]]:
    """A csv file's rows after its header, as lists of cells."""
    return list(csv.reader(line + LINE_END for line in _whole_lines(path)[1:]))


def _read(path: str) -> list[dict[str, str]]:
    """A csv file's rows as dicts of its header's columns."""
    lines = _whole_lines(path)
    return list(csv.DictReader(line + LINE_END for line in lines)) if lines else []


def _lines_before(path: str, generation: int) -> tuple[list[str], list[list[str]]]:
    """A csv file's header and the rows of the generations before `generation`."""
    lines = _whole_lines(path)
    if not lines:
        return [], []
    header = next(csv.reader([lines[0] + LINE_END]))
    rows = [cells for cells in csv.reader(line + LINE_END for line in lines[1:]) if int(cells[0]) < generation]
    return header, rows


def _number(cell: str):
    """A cell of stats.csv as the value it was written from (empty stays empty)."""
    if cell == EMPTY:
        return EMPTY
    try:
        return int(cell)
    except ValueError:
        return float(cell)
