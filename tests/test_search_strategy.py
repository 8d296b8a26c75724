"""Tests of search/strategy.py: the strategy each `search = ...` names, with its settings checked;
`search = fitness` selecting on the true fitness; the reproduction class each needs; and every
strategy's state restored to a strategy that continues the same way."""
import pickle
import types

import neat
import numpy as np
import pytest

import neatpar
from neatpar.errors import ConfigError
from neatpar.search.map_elites import MapElitesReproduction, MapElitesSearch
from neatpar.search.novelty import NoveltySearch
from neatpar.search.results import Outcome
from neatpar.search.strategy import SEARCHES, FitnessSearch, make_search, reproduction_type, restore


def batch(offset):
    keys = list(range(offset, offset + 6))
    genomes = [(key, types.SimpleNamespace(key=key, fitness=None)) for key in keys]
    outcomes = {key: Outcome(float((key * 7) % 5), np.array([np.sin(key), np.cos(key)])) for key in keys}
    return genomes, outcomes


def test_each_name_makes_its_strategy_with_its_settings():
    assert isinstance(make_search("fitness"), FitnessSearch)
    novelty = make_search("novelty", novelty_k=7, novelty_archive="random", seed=3)
    assert isinstance(novelty, NoveltySearch) and (novelty.k, novelty.weight, novelty.archive.kind) == (7, None, "random")
    blend = make_search("novelty+fitness", novelty_weight=0.3)
    assert blend.weight == 0.3 and blend.name == "novelty+fitness"
    elites = make_search("map-elites", descriptor_bounds="-1 1, -1 1", descriptor_bins="8 4", map_elites_crossover=0.2)
    assert isinstance(elites, MapElitesSearch) and elites.archive.grid.bins == (8, 4) and elites.crossover == 0.2
    assert [make_search(name, descriptor_bounds="0 1", descriptor_bins="2").name for name in SEARCHES] == list(SEARCHES)


def test_bad_names_and_missing_grids_are_one_line_config_errors():
    with pytest.raises(ConfigError, match=r"search = 'novel' is not one of fitness \| novelty"):
        make_search("novel")
    with pytest.raises(ConfigError, match="search = map-elites needs descriptor_bounds"):
        make_search("map-elites", descriptor_bins="8 8")
    with pytest.raises(ConfigError, match="not a search state"):
        restore({"search": "other"})


def test_fitness_search_selects_on_the_true_fitness_and_keeps_the_best():
    search = make_search("fitness")
    genomes, outcomes = batch(1)
    stats = search.score(genomes, outcomes, 0)
    assert [g.fitness for _, g in genomes] == [outcomes[k].fitness for k, _ in genomes]
    assert (stats.best_fitness, stats.archive_size, stats.mean_novelty, stats.coverage) == (4.0, 0, None, None)
    assert search.best.genome.key == 2 and not search.needs_descriptor


@pytest.mark.parametrize("name", SEARCHES)
def test_every_strategy_attaches_to_a_population_with_the_reproduction_it_names(name, tmp_path):
    from support.evolution import write_config
    config = neat.Config(neatpar.Genome, reproduction_type(name, neatpar.Reproduction), neatpar.SpeciesSet,
                         neat.DefaultStagnation, write_config(str(tmp_path / "neat.cfg"), pop_size=5))
    population = neat.Population(config, seed=1)
    search = make_search(name, descriptor_bounds="0 1", descriptor_bins="4")
    search.attach(population)
    if name == "map-elites":
        assert population.reproduction.elites is search.archive


def test_map_elites_alone_replaces_the_reproduction_class():
    assert reproduction_type("map-elites", neatpar.Reproduction) is MapElitesReproduction
    for name in ("fitness", "novelty", "novelty+fitness"):
        assert reproduction_type(name, neatpar.Reproduction) is neatpar.Reproduction
    assert MapElitesReproduction.__name__ == neat.DefaultReproduction.__name__   # reads [DefaultReproduction]


@pytest.mark.parametrize("name", SEARCHES)
def test_every_strategys_state_restores_to_one_that_continues_the_same_way(name):
    search = make_search(name, descriptor_bounds="-1 1, -1 1", descriptor_bins="4 4", novelty_k=3,
                         novelty_threshold=0.01, seed=2)
    search.score(*batch(0), 0)
    copy = restore(pickle.loads(pickle.dumps(search.state())))
    assert type(copy) is type(search) and copy.name == name
    for generation, offset in enumerate((10, 20, 30), start=1):
        a, b = batch(offset), batch(offset)
        assert search.score(*a, generation) == copy.score(*b, generation)
        assert [g.fitness for _, g in a[0]] == [g.fitness for _, g in b[0]]
    assert search.best.fitness == copy.best.fitness and search.best.genome.key == copy.best.genome.key
