"""Tests of search/search_evaluator.py: a neat-python script's search, its fitness function returning
(fitness, descriptor): novelty in process selects on novelty and keeps the true fitness and the
best genome; MAP-Elites through neatpar.ParallelEvaluator (real spawn workers, which hand the
descriptors back) gives the archive the same function gives in process; a number where a
descriptor is needed, or descriptors of two widths, stop the first generation naming the genome; a
novelty search refuses a neat config that would stop on the novelty crossing fitness_threshold,
before scoring a genome."""
import os
import re

import neat
import pytest

import neatpar
from neatpar import ConfigError
from neatpar.errors import DescriptorError
from neatpar.search import SearchEvaluator
from support.fitness_fns import described, described_unevenly
from support.paths import CONFIGS


def xor_config(reproduction=neatpar.Reproduction, pop_size=12):
    config = neat.Config(neatpar.Genome, reproduction, neatpar.SpeciesSet, neat.DefaultStagnation,
                         os.path.join(CONFIGS, "xor.cfg"))
    config.pop_size, config.no_fitness_termination = pop_size, True
    return config


def test_novelty_in_process_selects_on_novelty_and_keeps_the_true_fitness_and_the_best_genome():
    population = neat.Population(xor_config(), seed=4)
    search = SearchEvaluator("novelty", described, seed=4, novelty_k=3)
    seen = {}

    def evaluate(genomes, config):
        search.evaluate(genomes, config)
        seen.update((key, (genome, genome.fitness)) for key, genome in genomes)

    population.run(evaluate, 3)
    assert [s.generation for s in search.history] == [0, 1, 2] and search.history[-1].search == "novelty"
    last = list(search.fitness)
    assert {k: seen[k][1] for k in last} == pytest.approx(search.search.novelty)   # genome.fitness is novelty
    assert {k: described(seen[k][0], None)[0] for k in last} == search.fitness     # the true fitness is kept
    best = max(seen.values(), key=lambda pair: described(pair[0], None)[0])[0]
    assert search.best.genome.key == best.key and search.best.fitness == described(best, None)[0]
    assert search.search.archive.size > 0 and search.history[0].archive_size == search.history[0].archive_added


def run_map_elites(evaluate_with, seed=6):
    config = xor_config(neatpar.MapElitesReproduction)
    population = neat.Population(config, seed=seed)
    search = evaluate_with(seed)
    search.attach(population)
    population.run(search.evaluate, 3)
    cells = {cell: (e.genome.key, e.fitness, e.descriptor.tolist()) for cell, e in search.search.archive.cells.items()}
    return cells, search


def test_map_elites_through_the_parallel_evaluator_gives_the_archive_the_function_gives_in_process():
    grid = dict(descriptor_bounds="-1 1, -1 1", descriptor_bins="4 4")
    local, _ = run_map_elites(lambda seed: SearchEvaluator("map-elites", described, **grid))
    with neatpar.ParallelEvaluator(2, described, seed=1) as pool:
        remote, search = run_map_elites(lambda seed: SearchEvaluator("map-elites", evaluator=pool, **grid))
        assert pool.pids and len(pool.last_descriptors) == 12
    assert remote == local and len(local) > 1
    assert search.history[-1].coverage == len(local) / 16 and search.history[-1].qd_score is not None


def test_a_number_where_a_descriptor_is_needed_and_uneven_descriptors_name_the_genome():
    config = xor_config()
    genomes = list(neat.Population(config, seed=1).population.items())
    with pytest.raises(DescriptorError, match=r"genome 1's fitness function returned a number, not \(fitness, "
                                              r"descriptor\)"):
        SearchEvaluator("novelty", lambda genome, config: 1.0).evaluate(genomes, config)
    with pytest.raises(DescriptorError, match=r"genome 3's descriptor has 3 values, the search's have 2"):
        SearchEvaluator("novelty", described_unevenly).evaluate(genomes, config)
    with neatpar.ParallelEvaluator(0, neatpar_number) as serial:   # the pool's path, in this process
        with pytest.raises(DescriptorError, match=r"genome 1 has no descriptor: this search needs one"):
            SearchEvaluator("novelty", evaluator=serial).evaluate(genomes, config)
    fitness_only = SearchEvaluator("fitness", described)
    fitness_only.evaluate(genomes, config)   # search = fitness takes a pair's fitness
    assert all(g.fitness == described(g, config)[0] for _, g in genomes)
    with pytest.raises(ConfigError, match="needs a fitness function"):
        SearchEvaluator("novelty")


def neatpar_number(genome, config):
    return float(genome.key)


@pytest.mark.parametrize("name", ["novelty", "novelty+fitness"])
def test_a_novelty_search_refuses_fitness_termination_before_any_generation_is_scored(name):
    """neat-python would stop as soon as the novelty (genome.fitness) crossed fitness_threshold and
    return the most novel genome: the search refuses the config as the command line does."""
    config = xor_config()
    config.no_fitness_termination, config.fitness_threshold = False, 0.0   # any novelty would cross it
    calls = []

    def counted(genome, config):
        calls.append(genome.key)
        return described(genome, config)

    population = neat.Population(config, seed=2)
    with pytest.raises(ConfigError, match=rf"search = {re.escape(name)} sets genome.fitness to .*: set \[NEAT\] "
                                          r"no_fitness_termination = true"):
        population.run(SearchEvaluator(name, counted, seed=2).evaluate, 5)
    assert calls == [] and population.generation == 0
    with pytest.raises(ConfigError, match=r"no_fitness_termination = true"):
        SearchEvaluator(name, counted).attach(neat.Population(config, seed=2))
    fitness = SearchEvaluator("fitness", counted)   # the fitness search's genome.fitness is the fitness
    assert neat.Population(config, seed=2).run(fitness.evaluate, 5) is not None and calls
