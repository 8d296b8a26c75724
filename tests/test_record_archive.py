"""Tests of record/archive.py: archive.json and archive.png written into a run folder, and an
elite read back by its cell, its genome the one archived; a cell that is empty or outside the
grid, and a file that is no archive, are one-line errors."""
import json

import neat
import numpy as np
import pytest
from PIL import Image

from neatpar import ConfigError
from neatpar.record.archive import is_archive_file, load_elite, parse_cell, save_archive
from neatpar.search.map_elites import EliteArchive, Grid


def archive_of(config):
    population = neat.Population(config, seed=2)
    genomes = list(population.population.items())[:3]
    archive = EliteArchive(Grid(((-1.0, 1.0), (-1.0, 1.0)), (4, 2)))
    archive.offer(genomes, np.array([0.5, 1.5, 0.25]), np.array([[-0.9, -0.5], [0.9, 0.5], [-0.8, -0.9]]), 3)
    return archive, genomes


def test_the_run_folder_gets_every_elite_and_its_heat_map_and_each_elite_loads_by_its_cell(tmp_path, xor_config):
    archive, genomes = archive_of(xor_config)
    paths = save_archive(str(tmp_path), archive, xor_config, qd_offset=-1.0)
    assert paths == [str(tmp_path / "archive.json"), str(tmp_path / "archive.png")]
    data = json.load(open(paths[0]))
    assert [c["index"] for c in data["cells"]] == [[0, 0], [3, 1]] and data["qd_score"] == 0.5 + 1 + 1.5 + 1
    assert Image.open(paths[1]).size[0] > 100 and is_archive_file(paths[0])
    elite = load_elite(paths[0], "3,1")
    original = genomes[1][1]
    assert elite.key == original.key and elite.fitness == 1.5
    assert {k: c.weight for k, c in elite.connections.items()} == {k: c.weight for k, c in original.connections.items()}
    assert load_elite(paths[0], " 0, 0").key == genomes[0][0]   # the first of the cell's two, the fitter


def test_an_empty_cell_a_cell_off_the_grid_and_a_file_that_is_no_archive_are_one_line_errors(tmp_path, xor_config):
    archive, _ = archive_of(xor_config)
    path = save_archive(str(tmp_path), archive, xor_config)[0]
    with pytest.raises(ConfigError, match=r"cell 1,1 of .*archive.json is empty: the filled cells are 0,0 3,1$"):
        load_elite(path, "1,1")
    with pytest.raises(ConfigError, match=r"--cell 4,0 is not a cell of .* grid of 4 x 2 cells"):
        load_elite(path, "4,0")
    with pytest.raises(ConfigError, match=r"--cell 1 is not a cell"):
        load_elite(path, "1")
    with pytest.raises(ConfigError, match=r"--cell a,b: give the cell's index per descriptor dimension"):
        parse_cell("a,b")
    other = tmp_path / "winner.json"
    other.write_text(json.dumps({"format": "neatpar-genome"}))
    assert not is_archive_file(str(other)) and not is_archive_file(str(tmp_path / "missing.json"))
    with pytest.raises(ConfigError, match="is not a MAP-Elites archive"):
        load_elite(str(other), "0,0")


def test_an_empty_cell_of_a_large_archive_names_the_count_the_nearest_filled_cells_and_the_fittest(tmp_path,
                                                                                                     xor_config):
    """Past a dozen filled cells the line gives their count, the eight nearest the cell asked (by
    index distance, ties in index order) and the fittest, not the first few of the file."""
    genomes = list(neat.Population(xor_config, seed=2).population.items())[:64]
    index = [(i, j) for i in range(0, 16, 2) for j in range(0, 16, 2)]            # 64 of 256 cells
    archive = EliteArchive(Grid(((-1.0, 1.0), (-1.0, 1.0)), (16, 16)))
    centres = np.array([[(i + 0.5) / 8 - 1, (j + 0.5) / 8 - 1] for i, j in index])
    archive.offer(genomes, np.array([float(i + j) for i, j in index]), centres, 1)
    path = save_archive(str(tmp_path), archive, xor_config)[0]
    assert len(json.load(open(path))["cells"]) == 64
    with pytest.raises(ConfigError) as raised:
        load_elite(path, "7,7")
    assert str(raised.value) == (f"cell 7,7 of {path} is empty: 64 of its 16 x 16 cells are filled, the nearest "
                                 f"6,6 6,8 8,6 8,8 4,6 4,8 6,4 6,10, the fittest 14,14 (fitness 28)")
    assert "\n" not in str(raised.value)
