"""neatpar/evolution/gene_arrays.py: a genome's genes as arrays (what the kernel's compile reads), equal
to its gene objects, read without turning the genome's records into objects."""
import copy

import neat
import numpy as np
import pytest

import neatpar
from support.evolution import write_config
from neatpar.evolution.gene_arrays import enabled_links, gene_dicts, gene_records, genes
from neatpar.nn import FeedForwardPopulation, RecurrentPopulation


def evolved(tmp_path, feed_forward=True):
    path = write_config(str(tmp_path / "neat.cfg"), pop_size=40, num_inputs=3, num_outputs=2,
                        feed_forward=feed_forward, conn_add_prob=0.5, node_add_prob=0.4,
                        activation_options="sigmoid tanh relu abs", activation_mutate_rate=0.3,
                        aggregation_options="sum max product", aggregation_mutate_rate=0.2)
    pop = neat.Population(neat.Config(neatpar.Genome, neatpar.Reproduction, neatpar.SpeciesSet,
                                      neat.DefaultStagnation, path), seed=8)
    pop.run(lambda genomes, config: [setattr(g, "fitness", float(g.size()[0] + k % 5)) for k, g in genomes], 6)
    return pop


def test_records_are_the_gene_objects_field_by_field(tmp_path):
    for genome in evolved(tmp_path).population.values():
        records = gene_records(genome)
        nodes, connections = gene_dicts(genome)
        names = records.names
        assert [(int(r["key"]), float(r["bias"]), float(r["response"]), float(r["time_constant"]),
                 names[r["activation"]], names[r["aggregation"]]) for r in records.nodes] == \
            [(k, n.bias, n.response, n.time_constant, n.activation, n.aggregation) for k, n in nodes.items()]
        assert [((int(r["input"]), int(r["output"])), int(r["innovation"]), float(r["weight"]), bool(r["enabled"]))
                for r in records.connections] == \
            [(k, c.innovation, c.weight, c.enabled) for k, c in connections.items()]
        assert genes(genome) is not None


def test_enabled_links_are_every_genomes_enabled_connections_in_order(tmp_path):
    genomes = list(evolved(tmp_path).population.values())
    ins, outs, weights, starts = enabled_links(genomes)
    for i, genome in enumerate(genomes):
        span = slice(starts[i], starts[i + 1])
        expected = [(k, c.weight) for k, c in gene_dicts(genome)[1].items() if c.enabled]
        assert list(zip(zip(ins[span].tolist(), outs[span].tolist()), weights[span].tolist())) == expected
    genomes[0].nodes, genomes[0].connections  # read: still records
    assert enabled_links(genomes) is not None
    genomes[0].nodes = dict(genomes[0].nodes)  # replaced: its genes are objects, no arrays for the lot
    assert enabled_links(genomes) is None and gene_records(genomes[0]) is None


@pytest.mark.parametrize("feed_forward", [True, False])
def test_the_kernel_compiles_record_genomes_as_their_neat_python_twins_without_making_gene_objects(tmp_path,
                                                                                                   feed_forward):
    pop = evolved(tmp_path, feed_forward)
    genomes = list(pop.population.values())
    twins = []
    for g in genomes:
        twin = neat.DefaultGenome(g.key)
        twin.nodes, twin.connections = copy.deepcopy(gene_dicts(g))
        twins.append(twin)
    kind = FeedForwardPopulation if feed_forward else RecurrentPopulation
    inputs = np.random.default_rng(3).uniform(-2, 2, (len(genomes) * 4, 3))
    index = np.repeat(np.arange(len(genomes)), 4)
    ours, theirs = kind.create(genomes, pop.config), kind.create(twins, pop.config)
    for _ in range(3):  # recurrent networks carry state from step to step
        assert np.array_equal(ours.activate(inputs, index), theirs.activate(inputs, index))
    assert all(genes(g) is not None for g in genomes)
