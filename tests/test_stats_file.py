"""Tests of record/stats_file.py: stats.csv and species.csv appended a line at a time give the file
that writing every row at once gives (a column that first appears later too), a line cut by a
crash is never read nor kept, and a resume begins the files at its generation, from this folder
or from the run folder its checkpoint came from, under the header of then."""
import csv
import io
import os

from neatpar.generation_stats import LeagueValues
from neatpar.record.stats_file import SPECIES_FILE, STATS_FILE, StatsFile
from neatpar.record.stats_row import EMPTY, StatsRow, stats_columns


def a_row(generation: int, game: dict | None = None, league: bool = False) -> StatsRow:
    return StatsRow(generation, 3.0 + generation, 1.5, 0.5, 2, 8, 80, 100.0, 90, 0.8, 1.25, None, 3.0, 2.5,
                    league=LeagueValues(1210.5, 3) if league else None, game=game or {},
                    species_sizes={1: 5 + generation, 2: 3})


def written_at_once(rows: list[StatsRow]) -> str:
    """stats.csv as one csv.DictWriter writes every row (the file's definition)."""
    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=stats_columns(rows), restval=EMPTY)
    writer.writeheader()
    writer.writerows(row.columns() for row in rows)
    return text.getvalue()


def read(path) -> str:
    with open(path, newline="") as f:
        return f.read()


ROWS = [a_row(0), a_row(1), a_row(2, {"Game/Goals": 2.0}), a_row(3), a_row(4, {"Game/Goals": 1.0, "Game/Saves": 4.0})]


def test_appended_lines_are_the_file_every_row_at_once_makes_with_columns_that_come_later(tmp_path):
    stats = StatsFile(str(tmp_path))
    for row in ROWS:
        stats.append(row)
    assert read(tmp_path / STATS_FILE) == written_at_once(ROWS)
    assert read(tmp_path / SPECIES_FILE) == "generation,species,size\r\n" + "".join(
        f"{r.generation},1,{5 + r.generation}\r\n{r.generation},2,3\r\n" for r in ROWS)
    assert stats.rows() == ROWS   # read back: numbers, species sizes and the game's keys


def test_a_line_cut_by_a_crash_is_neither_read_nor_kept(tmp_path):
    stats = StatsFile(str(tmp_path))
    for row in ROWS[:3]:
        stats.append(row)
    with open(tmp_path / STATS_FILE, "a", newline="") as f:
        f.write("3,6.0,1.5")   # a crash in the middle of a line
    assert [r.generation for r in stats.rows()] == [0, 1, 2]
    again = StatsFile(str(tmp_path))
    again.begin(3, stats_columns(ROWS[:3]), str(tmp_path))
    again.append(ROWS[3])
    assert read(tmp_path / STATS_FILE) == written_at_once(ROWS[:4])


def test_a_resume_in_place_drops_the_generations_after_its_own_when_it_writes_its_first(tmp_path):
    stats = StatsFile(str(tmp_path))
    for row in ROWS:
        stats.append(row)
    resumed = StatsFile(str(tmp_path))
    resumed.begin(2, stats_columns(ROWS[:2]), str(tmp_path))
    assert read(tmp_path / STATS_FILE) == written_at_once(ROWS)   # nothing changes before it writes
    resumed.append(ROWS[2])
    assert read(tmp_path / STATS_FILE) == written_at_once(ROWS[:3])   # the header of then, the game column after
    assert [r.generation for r in resumed.rows()] == [0, 1, 2]


def test_a_resume_elsewhere_copies_the_earlier_generations_from_the_run_folder_it_came_from(tmp_path):
    home, fork = tmp_path / "home", tmp_path / "fork"
    home.mkdir()
    fork.mkdir()
    stats = StatsFile(str(home))
    for row in ROWS:
        stats.append(row)
    copy = StatsFile(str(fork))
    copy.begin(3, stats_columns(ROWS[:3]), str(home))
    copy.append(ROWS[3])
    copy.append(ROWS[4])
    assert read(fork / STATS_FILE) == read(home / STATS_FILE) and read(fork / SPECIES_FILE) == read(home / SPECIES_FILE)


def test_rows_from_a_checkpoint_of_an_earlier_neatpar_begin_the_files(tmp_path):
    rows = [a_row(0, league=True), a_row(1, league=True)]
    stats = StatsFile(str(tmp_path))
    stats.begin(2, [], None, rows)
    assert stats.columns == stats_columns(rows)   # what the next checkpoint keeps
    later = a_row(2, league=True)
    stats.append(later)
    assert read(tmp_path / STATS_FILE) == written_at_once(rows + [later])
    assert stats.rows() == rows + [later]


def test_a_stopped_resume_leaves_the_files_as_they_were(tmp_path):
    stats = StatsFile(str(tmp_path))
    for row in ROWS:
        stats.append(row)
    before = read(tmp_path / STATS_FILE)
    StatsFile(str(tmp_path)).begin(1, stats_columns(ROWS[:1]), str(tmp_path))   # stopped before a generation ended
    assert read(tmp_path / STATS_FILE) == before and os.path.getsize(tmp_path / SPECIES_FILE) > 0
