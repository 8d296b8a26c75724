"""Genome files (neatpar/record/genomes.py): JSON that loads without pickle and keeps every gene,
pickles only from a file the user names, and a genome of another shape refused in one line when
it is loaded back."""
import os

import neat
import pytest

from support.configs import load_config
from neatpar.errors import ConfigError
from neatpar.record.genomes import load_genome, save_genome_json, save_genome_pickle


def evolved_genome():
    config = load_config()
    population = neat.Population(config, seed=3)

    def fitness(genomes, _config):
        for _, genome in genomes:
            genome.fitness = float(len(genome.connections))
    return population.run(fitness, 4), config


def genes(genome) -> tuple:
    nodes = sorted((k, n.bias, n.response, n.activation, n.aggregation) for k, n in genome.nodes.items())
    links = sorted((k, c.weight, c.enabled) for k, c in genome.connections.items())
    return genome.key, genome.fitness, nodes, links


def test_a_genome_saved_as_json_loads_with_every_gene(tmp_path):
    genome, config = evolved_genome()
    save_genome_json(genome, config, str(tmp_path / "winner.json"))
    assert genes(load_genome(str(tmp_path / "winner.json"), config)) == genes(genome)
    save_genome_pickle(genome, str(tmp_path / "winner.pickle"))
    assert genes(load_genome(str(tmp_path / "winner.pickle"), config)) == genes(genome)
    assert sorted(os.listdir(tmp_path)) == ["winner.json", "winner.pickle"]   # nothing half-written left


def test_a_genome_of_another_shape_is_refused_naming_both(tmp_path):
    genome, config = evolved_genome()
    save_genome_json(genome, config, str(tmp_path / "winner.json"))
    other = load_config()
    other.genome_config.num_inputs = 3
    with pytest.raises(ConfigError, match=r"has num_inputs = 2, num_outputs = 1 but the config has num_inputs = 3, "
                                          r"num_outputs = 1: it was evolved for another task"):
        load_genome(str(tmp_path / "winner.json"), other)
