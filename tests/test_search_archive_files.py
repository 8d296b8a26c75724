"""Tests of search/archive_files.py: archive.json holds every filled cell (index, descriptor,
fitness, genome key and the genome in the genome files' form, which loads back), archive.png is a
real heat map of the elites' fitness, and without matplotlib there is no picture and no error."""
import io
import json
import subprocess
import sys

import neat
import numpy as np
from PIL import Image

from neatpar.genome_file import genome_from_dict, genome_to_dict
from neatpar.search.archive_files import archive_json, archive_png, fitness_grid
from neatpar.search.map_elites import EliteArchive, Grid
from support.paths import ROOT


def filled_archive(xor_config, bins=(4, 2), bounds=((-1.0, 1.0), (0.0, 1.0))):
    population = neat.Population(xor_config, seed=5)
    genomes = list(population.population.items())[:3]
    archive = EliteArchive(Grid(bounds, bins))
    descriptors = np.array([[-0.9, 0.1], [0.6, 0.9], [0.7, 0.8]])[:, :len(bins)]
    archive.offer(genomes, np.array([1.5, -0.5, 2.0]), descriptors, generation=4)
    return archive, genomes


def test_archive_json_holds_every_cell_and_genomes_that_load_back(xor_config):
    archive, genomes = filled_archive(xor_config)
    data = json.loads(archive_json(archive, lambda g: genome_to_dict(g, xor_config), qd_offset=-1.0))
    assert (data["format"], data["descriptor_bins"], data["cells_total"], data["filled"]) == ("neatpar-archive", [4, 2], 8, 2)
    assert data["coverage"] == 0.25 and data["qd_score"] == (1.5 + 1.0) + (2.0 + 1.0)
    first, second = data["cells"]
    assert (first["cell"], first["index"], first["descriptor"], first["fitness"], first["genome_key"]) == \
        (0, [0, 0], [-0.9, 0.1], 1.5, genomes[0][0])
    assert (second["cell"], second["index"], second["fitness"], second["genome_key"], second["generation"]) == \
        (7, [3, 1], 2.0, genomes[2][0], 4)
    loaded = genome_from_dict(second["genome"])
    original = genomes[2][1]
    assert {k: c.weight for k, c in loaded.connections.items()} == {k: c.weight for k, c in original.connections.items()}


def test_the_heat_map_is_a_png_of_the_fitness_grid(xor_config):
    archive, _ = filled_archive(xor_config)
    grid = fitness_grid(archive)
    assert grid.shape == (4, 2) and grid[0, 0] == 1.5 and grid[3, 1] == 2.0 and np.isnan(grid).sum() == 6
    image = Image.open(io.BytesIO(archive_png(archive)))
    assert image.format == "PNG" and image.size[0] > 200


def test_one_and_three_dimensional_grids_fold_to_a_picture(xor_config):
    line, _ = filled_archive(xor_config, bins=(4,), bounds=((-1.0, 1.0),))
    assert fitness_grid(line).shape == (4, 1)
    archive = EliteArchive(Grid(((0.0, 1.0),) * 3, (2, 2, 3)))
    genomes = [(k, neat.DefaultGenome(k)) for k in (1, 2)]
    archive.offer(genomes, np.array([1.0, 3.0]), np.array([[0.1, 0.1, 0.1], [0.1, 0.1, 0.9]]), 0)
    folded = fitness_grid(archive)
    assert folded.shape == (2, 2) and folded[0, 0] == 3.0 and np.isnan(folded).sum() == 3
    assert Image.open(io.BytesIO(archive_png(archive))).format == "PNG"


def test_without_matplotlib_there_is_no_picture():
    script = ("import sys; sys.modules['matplotlib'] = None\n"
              "from neatpar.search.archive_files import archive_png\n"
              "from neatpar.search.map_elites import EliteArchive, Grid\n"
              "print(archive_png(EliteArchive(Grid(((0.0, 1.0),), (2,)))))\n")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert result.stdout.strip() == "None", result.stderr
