"""neatpar/evolution/reproduction.py's reproduction step against neat.DefaultReproduction, one call
at a time: on grown populations with any member fitnesses (ties included), elitism, survival
threshold, minimum species size and stagnation settings, with parents holding neatpar's gene
records or neat-python's gene objects, the same children (keys, genes bit for bit, in dict order),
ancestors, species left behind, reporter lines, counters and random state after; create_new
likewise, and a generation in which every species stagnates empties the species set as
neat-python does."""
import copy
import pickle
import random
import tempfile

import neat
from hypothesis import event, given, settings, strategies as st

import neatpar
from support.evolution import Transcript, as_neat_genome, genes_of, grown, random_text, tracker_state, write_config

FITNESSES = st.sampled_from([0.0, 1.0, 1.0, 2.5, -3.0]) | st.floats(-1e6, 1e6, allow_nan=False)


def reproduction(cls, grown_pop: neat.Population, config: neat.Config, lines: list):
    """A reproduction object of `cls` continuing `grown_pop`'s counters, reporting into `lines`."""
    reporters = neat.reporting.ReporterSet()
    reporters.add(Transcript(lines))
    made = cls(config.reproduction_config, reporters, neat.DefaultStagnation(config.stagnation_config, reporters))
    source = grown_pop.reproduction
    made.genome_indexer = copy.deepcopy(source.genome_indexer)
    made.innovation_tracker = copy.deepcopy(source.innovation_tracker)
    made.ancestors = copy.deepcopy(source.ancestors)
    return made


def species_of(grown_pop: neat.Population, config: neat.Config, fitnesses: list, neat_genomes: bool):
    """A copy of the grown population's species set, its members given `fitnesses` in turn (and, for
    the species' fitness history, each species the mean of its members'), as neat-python's genomes
    or as records."""
    species = type(grown_pop.species)(config.species_set_config, neat.reporting.ReporterSet())
    species.species = copy.deepcopy(grown_pop.species.species)
    species.indexer = copy.deepcopy(grown_pop.species.indexer)
    position = 0
    for s in species.species.values():
        if neat_genomes:
            s.members = {k: as_neat_genome(g) for k, g in s.members.items()}
            s.representative = as_neat_genome(s.representative)
        for genome in s.members.values():
            genome.fitness = fitnesses[position % len(fitnesses)]
            position += 1
    return species


def outcome(repro, species, children: dict, lines: list) -> tuple:
    return ([genes_of(g) for g in children.values()], list(repro.ancestors.items()),
            [(sid, list(s.members), s.adjusted_fitness, s.representative.key) for sid, s in species.species.items()],
            lines, repr(repro.genome_indexer), tracker_state(repro.innovation_tracker), random_text(random.getstate()))


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 2 ** 32), fitnesses=st.lists(FITNESSES, min_size=1, max_size=40),
       feed_forward=st.booleans(), elitism=st.integers(0, 3), survival=st.floats(0.05, 1.0),
       min_species_size=st.integers(1, 4), max_stagnation=st.integers(1, 15), species_elitism=st.integers(0, 3),
       pop_size=st.integers(10, 40), generation=st.integers(4, 30), object_parents=st.booleans())
def test_reproduce_makes_neat_python_s_children_draw_for_draw(seed, fitnesses, feed_forward, elitism, survival,
                                                              min_species_size, max_stagnation, species_elitism,
                                                              pop_size, generation, object_parents):
    pop = grown(feed_forward, 30)
    base = copy.deepcopy(pop.config)
    rc, sc = base.reproduction_config, base.stagnation_config
    rc.elitism, rc.survival_threshold, rc.min_species_size = elitism, survival, min_species_size
    sc.max_stagnation, sc.species_elitism = max_stagnation, species_elitism
    frozen = pickle.dumps(base)   # copying a genome config moves its node indexer: both start at one position
    results = []
    for cls, genome, neat_genomes in ((neat.DefaultReproduction, neat.DefaultGenome, True),
                                      (neatpar.Reproduction, neatpar.Genome, object_parents)):
        config = pickle.loads(frozen)
        config.genome_type = genome
        lines: list = []
        repro = reproduction(cls, pop, config, lines)
        species = species_of(pop, config, fitnesses, neat_genomes)
        random.seed(seed)
        try:
            children = repro.reproduce(config, species, pop_size, generation)
        except RuntimeError as error:  # more species than pop_size allows: neat-python's own error
            results.append(((type(error), error.args), lines, random_text(random.getstate())))
            event("more species than the population allows")
        else:
            results.append(outcome(repro, species, children, lines))
            event(f"{len(species.species)} species left" if species.species else "every species stagnant")
    reference, candidate = results
    names = ("children", "ancestors", "species", "reporter lines", "genome indexer", "innovation tracker",
             "random state") if len(reference) > 3 else ("error", "reporter lines", "random state")
    assert len(candidate) == len(reference), (reference[0], candidate[0])
    for name, expected, got in zip(names, reference, candidate):
        assert got == expected, name


def test_every_species_stagnant_leaves_no_species_and_no_children_as_in_neat_python():
    pop = grown(True, 30)
    config = copy.deepcopy(pop.config)
    config.stagnation_config.max_stagnation, config.stagnation_config.species_elitism = 0, 0
    results = []
    for cls in (neat.DefaultReproduction, neatpar.Reproduction):
        lines: list = []
        repro = reproduction(cls, pop, config, lines)
        species = species_of(pop, config, [1.0], cls is neat.DefaultReproduction)
        random.seed(1)
        children = repro.reproduce(config, species, 30, 50)
        results.append((children, species.species, [line.split(" with ")[0] for line in lines]))
    assert results[0] == results[1] and results[1][:2] == ({}, {})
    assert results[1][2] and all(line.startswith("species_stagnant") for line in results[1][2])


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2 ** 32), count=st.integers(1, 20),
       initial=st.sampled_from(["full", "partial_direct 0.5", "fs_neat_hidden", "unconnected"]),
       hidden=st.integers(0, 3))
def test_create_new_makes_neat_python_s_first_genomes(seed, count, initial, hidden):
    path = write_config(tempfile.mkdtemp() + "/neat.cfg", pop_size=count, num_inputs=3, num_outputs=2,
                        initial_connection=initial, num_hidden=hidden)
    results = []
    for genome, repro_cls in ((neat.DefaultGenome, neat.DefaultReproduction), (neatpar.Genome, neatpar.Reproduction)):
        config = neat.Config(genome, repro_cls, neat.DefaultSpeciesSet, neat.DefaultStagnation, path)
        repro = repro_cls(config.reproduction_config, neat.reporting.ReporterSet(),
                          neat.DefaultStagnation(config.stagnation_config, neat.reporting.ReporterSet()))
        random.seed(seed)
        made = repro.create_new(genome, config.genome_config, count)
        results.append(([genes_of(g) for g in made.values()], dict(repro.ancestors),
                        tracker_state(repro.innovation_tracker), random_text(random.getstate())))
    assert results[1] == results[0]
