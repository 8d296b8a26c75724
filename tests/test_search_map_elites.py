"""Tests of search/map_elites.py: the grid over the descriptor (bounds and bins parsed, edge cells
for values outside), a cell's elite replaced only by a strictly fitter genome, coverage and
QD-score; the reproduction that breeds children from the elites with neat-python's own calls, so
that neatpar's NEAT-step genomes give neat-python's DefaultGenome's children draw for draw; and a
run resumed from everything pickled after k generations that equals the uninterrupted run."""
import pickle
import random
import types

import neat
import numpy as np
import pytest

import neatpar
from neatpar.errors import ConfigError
from neatpar.parallel.serialize import dumps
from neatpar.search.map_elites import (EliteArchive, Grid, MapElitesReproduction, MapElitesSearch, parse_bins,
                                       parse_bounds)
from neatpar.search.results import Outcome
from support.evolution import anchor, assert_same, genome_state, random_text, write_config


def test_bounds_and_bins_parse_and_bad_ones_are_one_line_config_errors():
    assert parse_bounds("-1 1, -1 1") == ((-1.0, 1.0), (-1.0, 1.0))
    assert parse_bounds("0 0.5") == ((0.0, 0.5),)
    assert parse_bins("8 4") == (8, 4)
    for text in ("-1 1, 1 -1", "-1", "a b", "-1 1 2", "0 inf"):
        with pytest.raises(ConfigError, match="each dimension needs two numbers, low below high"):
            parse_bounds(text)
    for text in ("8 0", "", "2.5", "-3"):
        with pytest.raises(ConfigError, match="one whole number of at least 1 per dimension"):
            parse_bins(text)
    with pytest.raises(ConfigError, match="descriptor_bounds has 2 dimensions but descriptor_bins has 1"):
        Grid(((-1.0, 1.0), (-1.0, 1.0)), (8,))


def test_cells_cut_each_dimension_into_equal_bins_with_outside_values_in_the_edge_bins():
    grid = Grid(((-1.0, 1.0), (0.0, 4.0)), (4, 2))
    descriptors = np.array([[-1.0, 0.0], [-0.5, 1.99], [0.0, 2.0], [0.99, 4.0], [5.0, -3.0], [-7.0, 9.0]])
    assert grid.index(descriptors).tolist() == [[0, 0], [1, 0], [2, 1], [3, 1], [3, 0], [0, 1]]
    assert grid.cell(descriptors).tolist() == [0, 2, 5, 7, 6, 1]
    assert grid.cells == 8
    with pytest.raises(ConfigError, match="the descriptors have 3 values but the grid has 2 dimensions"):
        grid.cell(np.zeros((1, 3)))


def offered(archive, entries, generation=0):
    """Offer (key, fitness, descriptor) entries to `archive`."""
    genomes = [(key, types.SimpleNamespace(key=key)) for key, _, _ in entries]
    return archive.offer(genomes, np.array([f for _, f, _ in entries]), np.array([d for _, _, d in entries]),
                         generation)


def test_a_cell_keeps_its_elite_unless_a_genome_is_strictly_fitter_and_genomes_come_in_key_order():
    archive = EliteArchive(Grid(((0.0, 1.0),), (2,)))
    assert offered(archive, [(5, 1.0, [0.1]), (3, 1.0, [0.2]), (4, -2.0, [0.9])]) == 2
    assert archive.cells[0].genome.key == 3         # key 3 came first; key 5's equal fitness does not replace it
    assert offered(archive, [(6, 1.0, [0.3]), (7, 0.5, [0.6])], generation=1) == 1
    assert (archive.cells[0].genome.key, archive.cells[1].genome.key, archive.cells[1].generation) == (3, 7, 1)
    assert archive.filled() == [0, 1] and archive.coverage == 1.0
    assert archive.qd_score() == 1.5 and archive.qd_score(offset=-2.0) == 5.5


def test_the_reproduction_refuses_to_breed_without_an_attached_archive_or_from_an_empty_one(tmp_path):
    config = neat.Config(neatpar.Genome, MapElitesReproduction, neatpar.SpeciesSet, neat.DefaultStagnation,
                         write_config(str(tmp_path / "me.cfg"), pop_size=6))
    population = neat.Population(config, seed=1)
    with pytest.raises(ConfigError, match="has no archive: call MapElitesSearch.attach"):
        population.reproduction.reproduce(config, population.species, 6, 0)
    search = MapElitesSearch(Grid(((0.0, 1.0),), (4,)))
    search.attach(population)
    with pytest.raises(ConfigError, match="archive is empty"):
        population.reproduction.reproduce(config, population.species, 6, 0)
    plain = neat.Population(neat.Config(neatpar.Genome, neatpar.Reproduction, neatpar.SpeciesSet,
                                        neat.DefaultStagnation, str(tmp_path / "me.cfg")), seed=1)
    with pytest.raises(ConfigError, match="needs the population's reproduction to be MapElitesReproduction"):
        search.attach(plain)


GRID = Grid(((1.0, 9.0), (0.0, 24.0)), (8, 8))


def evaluate_with(search, history):
    """A fitness and descriptor read off the genome without reading its gene objects (size() and
    distance to a fixed genome), so neatpar's genomes stay in their C form."""
    def evaluate(genomes, config):
        outcomes = {}
        for key, genome in genomes:
            nodes, enabled = genome.size()
            distance = genome.distance(anchor(config), config.genome_config)
            outcomes[key] = Outcome(round(distance, 6) - 0.1 * nodes, np.array([nodes, enabled], float))
        history.append(search.score(genomes, outcomes, len(history)))
    return evaluate


def map_elites_run(genome_type, species_type, path, seed, generations, crossover=0.5):
    config = neat.Config(genome_type, MapElitesReproduction, species_type, neat.DefaultStagnation, path)
    config.no_fitness_termination = True
    population = neat.Population(config, seed=seed)
    search = MapElitesSearch(GRID, crossover=crossover, qd_offset=-100.0)
    search.attach(population)
    history = []
    population.run(evaluate_with(search, history), generations)
    return population, search, history


def archive_snapshot(search):
    return tuple((f"cell {cell}", (("fitness", repr(e.fitness)), ("generation", repr(e.generation)),
                                   ("genome", genome_state(e.genome))))
                 for cell, e in sorted(search.archive.cells.items()))


@pytest.mark.parametrize("crossover", [0.0, 0.5, 1.0])
def test_neatpars_genomes_give_neat_pythons_children_draw_for_draw(tmp_path, crossover):
    path = write_config(str(tmp_path / "me.cfg"), pop_size=40, node_add_prob=0.3, conn_add_prob=0.5)
    runs = []
    for genome_type, species_type in ((neat.DefaultGenome, neat.DefaultSpeciesSet),
                                      (neatpar.Genome, neatpar.SpeciesSet)):
        population, search, history = map_elites_run(genome_type, species_type, path, seed=9, generations=12,
                                                     crossover=crossover)
        runs.append((population, search, history, random_text(random.getstate())))
    (p1, s1, h1, r1), (p2, s2, h2, r2) = runs
    assert type(next(iter(p2.population.values()))) is neatpar.Genome
    assert h1 == h2 and r1 == r2
    assert h1[-1].archive_size > 8          # the archive spread over many cells
    assert p1.reproduction.ancestors == p2.reproduction.ancestors
    assert_same(archive_snapshot(s1), archive_snapshot(s2), "archive", ("neat-python", "neatpar"))
    assert_same(tuple((f"genome {k}", genome_state(g)) for k, g in p1.population.items()),
                tuple((f"genome {k}", genome_state(g)) for k, g in p2.population.items()), "children",
                ("neat-python", "neatpar"))
    pairs = list(p1.reproduction.ancestors.values())
    crossed = sum(pair[0] != pair[1] for pair in pairs if pair)
    assert (crossed == 0) if crossover == 0.0 else (crossed > 0)


def test_the_children_come_from_the_archive_and_the_statistics_follow_it(tmp_path):
    path = write_config(str(tmp_path / "me.cfg"), pop_size=30, node_add_prob=0.3)
    population, search, history = map_elites_run(neatpar.Genome, neatpar.SpeciesSet, path, seed=2, generations=6)
    elites = {e.genome.key for e in search.archive.cells.values()}   # the archive the last children came from
    parents = {key for child in population.population for key in population.reproduction.ancestors[child]}
    assert parents <= elites and len(parents) > 1
    assert not set(population.population) & elites   # the children are new genomes, not elites
    last = history[-1]
    assert last.archive_size == len(search.archive.cells) and last.coverage == last.archive_size / 64
    total = 0.0
    for cell in sorted(search.archive.cells):
        total += search.archive.cells[cell].fitness + 100.0
    assert last.qd_score == total
    assert last.best_fitness_ever == max(e.fitness for e in search.archive.cells.values())
    assert search.best.fitness == last.best_fitness_ever
    assert population.species.species      # speciation still ran on the children


def test_a_run_resumed_from_everything_pickled_equals_the_uninterrupted_run(tmp_path):
    path = write_config(str(tmp_path / "me.cfg"), pop_size=30, node_add_prob=0.3, conn_add_prob=0.4)
    whole, whole_search, whole_history = map_elites_run(neatpar.Genome, neatpar.SpeciesSet, path, seed=5,
                                                        generations=10)
    first, search, history = map_elites_run(neatpar.Genome, neatpar.SpeciesSet, path, seed=5, generations=4)
    before = archive_snapshot(search)
    saved = dumps((first.config, first.population, first.species, first.generation, random.getstate(),
                   search.state(), history))
    del first, search
    random.seed(12345)                        # a new process's generator, until the state is restored
    config, members, species, generation, rndstate, state, history = pickle.loads(saved)
    resumed = neat.Population(config, (members, species, generation))
    resumed.reproduction.innovation_tracker = config.genome_config.innovation_tracker
    random.setstate(rndstate)
    resumed_search = MapElitesSearch.from_state(state)
    assert_same(before, archive_snapshot(resumed_search), "restored archive", ("saved", "restored"))
    resumed_search.attach(resumed)
    resumed.run(evaluate_with(resumed_search, history), 6)
    assert history == whole_history
    assert_same(archive_snapshot(whole_search), archive_snapshot(resumed_search), "archive",
                ("uninterrupted", "resumed"))
    assert_same(tuple((f"genome {k}", genome_state(g)) for k, g in whole.population.items()),
                tuple((f"genome {k}", genome_state(g)) for k, g in resumed.population.items()), "population",
                ("uninterrupted", "resumed"))
