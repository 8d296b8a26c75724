"""neatpar.Genome (evolution/genome.py) keeps neat.DefaultGenome's interface: genes as records, read
and written through mappings that hand out neat-python's gene classes' objects, whose changes
count; genes kept as objects once code replaces the dicts; pickling, copies, size(), str(),
get_pruned_copy(); subclasses and other gene classes get neat-python's code."""
import copy
import pickle
from collections.abc import MutableMapping

import neat
import pytest
from neat.genes import DefaultConnectionGene, DefaultNodeGene

import neatpar
from support.evolution import Implementation, Run, assert_runs_agree, genome_state, size_fitness, write_config
from neatpar.evolution.gene_arrays import gene_dicts, genes


def population(tmp_path, classes=(neatpar.Genome, neatpar.Reproduction, neatpar.SpeciesSet), generations=3,
               **options):
    path = write_config(str(tmp_path / "neat.cfg"), **{"pop_size": 30, "num_inputs": 3, "num_outputs": 2,
                                                       "conn_add_prob": 0.5, "node_add_prob": 0.3, **options})
    pop = neat.Population(neat.Config(*classes, neat.DefaultStagnation, path), seed=2)
    pop.run(lambda genomes, config: [setattr(g, "fitness", float(g.size()[1] + k % 7)) for k, g in genomes],
            generations)
    return pop


def as_neat_genome(genome) -> neat.DefaultGenome:
    """The same genes in a neat.DefaultGenome (copies)."""
    twin = neat.DefaultGenome(genome.key)
    twin.fitness = genome.fitness
    twin.nodes, twin.connections = copy.deepcopy(gene_dicts(genome))
    return twin


def test_a_run_that_reads_only_size_keeps_every_genome_s_genes_as_records(tmp_path):
    pop = population(tmp_path)
    assert all(genes(g) is not None for g in pop.population.values())


def test_the_mappings_hand_out_neat_pythons_gene_classes_and_the_genome_keeps_its_records(tmp_path):
    genome = next(iter(population(tmp_path).population.values()))
    nodes, connections = genome.nodes, genome.connections
    assert all(isinstance(g, DefaultNodeGene) and type(g).__name__ == "DefaultNodeGene" for g in nodes.values())
    assert all(isinstance(g, DefaultConnectionGene) and g.key == k for k, g in connections.items())
    assert genome.nodes is nodes and genome.connections is connections
    assert isinstance(nodes, MutableMapping) and isinstance(genome, neat.DefaultGenome)
    assert type(genome).__name__ == "DefaultGenome"
    assert genes(genome) is not None  # reading the genes kept them as records


def test_replaced_dicts_are_the_genome_s_genes_from_then_on(tmp_path):
    """genome.nodes = a dict: the genome keeps its genes as objects (that dict, and the connections
    mapping it had, which code holding it still sees as the genome's)."""
    genome = next(iter(population(tmp_path).population.values()))
    connections = genome.connections
    replaced = {k: g.copy() for k, g in genome.nodes.items()}
    genome.nodes = replaced
    assert genes(genome) is None and genome.nodes is replaced and genome.connections is connections
    gene = next(iter(connections.values()))
    gene.weight = 0.5
    assert as_neat_genome(genome).connections[gene.key].weight == 0.5


def test_changes_made_through_the_dicts_count(tmp_path):
    """A weight set through genome.connections changes distance, crossover and mutation exactly as
    it would in a neat.DefaultGenome."""
    pop = population(tmp_path)
    config = pop.config.genome_config
    a, b = list(pop.population.values())[:2]
    for cg in a.connections.values():
        cg.weight += 0.25
    twin_a, twin_b = as_neat_genome(a), as_neat_genome(b)
    assert a.distance(b, config) == twin_a.distance(twin_b, config)
    assert b.distance(a, config) == twin_b.distance(twin_a, config)
    import random
    state = random.getstate()
    child = neatpar.Genome(10 ** 6)
    child.configure_crossover(a, b, config)
    child.mutate(config)
    random.setstate(state)
    twin = neat.DefaultGenome(10 ** 6)
    twin.configure_crossover(twin_a, twin_b, config)
    twin.mutate(config)
    assert genome_state(child) == genome_state(twin)


@pytest.mark.parametrize("form", ["records", "objects"])
def test_pickle_and_deepcopy_keep_the_genes(tmp_path, form):
    genome = next(iter(population(tmp_path).population.values()))
    if form == "objects":
        genome.nodes = dict(genome.nodes)
    for made in (pickle.loads(pickle.dumps(genome)), copy.deepcopy(genome)):
        assert type(made) is neatpar.Genome and (genes(made) is None) == (form == "objects")
        assert genome_state(made) == genome_state(copy.deepcopy(genome))


def test_size_str_and_pruned_copy_are_neat_pythons(tmp_path):
    pop = population(tmp_path)
    for genome in list(pop.population.values())[:10]:
        twin = as_neat_genome(genome)
        assert genome.size() == twin.size()
        assert str(genome) == str(twin)
        pruned, twin_pruned = genome.get_pruned_copy(pop.config.genome_config), twin.get_pruned_copy(pop.config.genome_config)
        assert genome_state(pruned) == genome_state(twin_pruned)
        assert genes(genome) is not None  # none of these made gene objects of the genome


class CountingGenome(neatpar.Genome):
    """A subclass that changes one operator: neat-python's code runs, and calls the override."""
    added = 0

    def mutate_add_node(self, config):
        CountingGenome.added += 1
        super().mutate_add_node(config)


class CountingNeatGenome(neat.DefaultGenome):
    added = 0

    def mutate_add_node(self, config):
        CountingNeatGenome.added += 1
        super().mutate_add_node(config)


CountingGenome.__name__ = CountingNeatGenome.__name__ = "DefaultGenome"


def test_a_subclass_that_changes_an_operator_gets_neat_pythons_code_calling_its_override(tmp_path):
    path = write_config(str(tmp_path / "neat.cfg"), pop_size=30, node_add_prob=0.5)
    ours = Implementation("neatpar, subclass", CountingGenome, neatpar.Reproduction, neatpar.SpeciesSet)
    theirs = Implementation("neat-python, subclass", CountingNeatGenome, neat.DefaultReproduction,
                            neat.DefaultSpeciesSet)
    assert assert_runs_agree(Run.new(theirs, path, 3, size_fitness), Run.new(ours, path, 3, size_fitness), 4,
                             "a subclass overriding mutate_add_node") == 4
    assert CountingGenome.added == CountingNeatGenome.added > 0


class MarkedNodeGene(DefaultNodeGene):
    """Other gene classes than neat-python's defaults: left to neat-python's code."""


class MarkedGenome(neatpar.Genome):
    @classmethod
    def parse_config(cls, param_dict):
        config = super().parse_config(param_dict)
        config.node_gene_type = MarkedNodeGene
        return config


class MarkedNeatGenome(neat.DefaultGenome):
    @classmethod
    def parse_config(cls, param_dict):
        config = super().parse_config(param_dict)
        config.node_gene_type = MarkedNodeGene
        return config


MarkedGenome.__name__ = MarkedNeatGenome.__name__ = "DefaultGenome"


def test_gene_classes_other_than_neat_pythons_get_neat_pythons_code(tmp_path):
    path = write_config(str(tmp_path / "neat.cfg"), pop_size=30)
    ours = Implementation("neatpar, other genes", MarkedGenome, neatpar.Reproduction, neatpar.SpeciesSet)
    theirs = Implementation("neat-python, other genes", MarkedNeatGenome, neat.DefaultReproduction,
                            neat.DefaultSpeciesSet)
    reference, candidate = Run.new(theirs, path, 5, size_fitness), Run.new(ours, path, 5, size_fitness)
    assert assert_runs_agree(reference, candidate, 3, "other node gene class") == 3
    assert all(type(n) is MarkedNodeGene for g in candidate.population.population.values() for n in g.nodes.values())


def test_a_population_with_repeated_keys_is_speciated_as_neat_python_does(tmp_path):
    """neat-python's speciation tolerates two genomes with one key (its distance cache is keyed by
    genome key); neatpar leaves such a population to neat-python's code rather than differ."""
    pop = population(tmp_path)
    config = pop.config
    first, second = list(pop.population.values())[:2]
    twin = copy.deepcopy(second)
    twin.key = first.key
    members = {**pop.population, 10 ** 6: twin}
    ours = copy.deepcopy(pop.species)
    theirs = neat.DefaultSpeciesSet(config.species_set_config, pop.reporters)
    theirs.species, theirs.indexer = copy.deepcopy(pop.species.species), copy.deepcopy(pop.species.indexer)
    theirs_members = {k: as_neat_genome(g) for k, g in members.items()}
    ours.speciate(config, members, 4)
    theirs.speciate(config, theirs_members, 4)
    assert {sid: list(s.members) for sid, s in ours.species.items()} == \
           {sid: list(s.members) for sid, s in theirs.species.items()}
    assert ours.genome_to_species == theirs.genome_to_species
