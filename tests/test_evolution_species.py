"""neatpar/evolution/species.py's speciation (the C core's grid of distances and its replay of
neat-python's distance cache) against neat.DefaultSpeciesSet.speciate, on genes holding any float
(NaN, infinities, signed zeros, huge and tiny values), any coefficients and thresholds: the same
representatives, the same members in the same order, and the mean and deviation of exactly the
distances neat-python's cache holds, bit for bit."""
import copy
import math
import random
from unittest import mock

import neat
import pytest
from hypothesis import given, settings, strategies as st
from neat.math_util import mean, stdev

import neatpar
from support.evolution import as_neat_genome, grown
from neatpar.evolution import _core

FLOATS = st.floats(allow_nan=True, allow_infinity=True) | st.sampled_from([0.0, -0.0, 1.0, -1.0, 5e-324])
COEFFICIENTS = st.sampled_from([0.5, 1.0, -0.5, 0.0, 3.0, 1e308, math.inf])


def disturb(rng: random.Random, values: list, genome: neat.DefaultGenome) -> None:
    """Values drawn from `values` in some genes, some genes dropped or toggled."""
    for key in list(genome.connections):
        gene, choice = genome.connections[key], rng.random()
        if choice < 0.3:
            gene.weight = rng.choice(values)
        elif choice < 0.4:
            del genome.connections[key]
        elif choice < 0.5:
            gene.enabled = not gene.enabled
    for gene in genome.nodes.values():
        if rng.random() < 0.4:
            setattr(gene, rng.choice(["bias", "response"]), rng.choice(values))


class RecordingCache(neat.species.GenomeDistanceCache):
    made: list = []

    def __init__(self, config):
        super().__init__(config)
        RecordingCache.made.append(self)


def same_float(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a.hex() == b.hex()


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2 ** 32), values=st.lists(FLOATS, min_size=1, max_size=12), feed_forward=st.booleans(), cdc=COEFFICIENTS, cwc=COEFFICIENTS,
       threshold=st.floats(0.05, 20.0), threads=st.sampled_from([1, 2]))
def test_speciation_on_any_gene_values_is_neat_pythons(seed, values, feed_forward, cdc, cwc, threshold, threads):
    pop = grown(feed_forward, 40)
    config = copy.deepcopy(pop.config)
    config.genome_config.compatibility_disjoint_coefficient = cdc
    config.genome_config.compatibility_weight_coefficient = cwc
    population = {key: as_neat_genome(g) for key, g in pop.population.items()}
    rng = random.Random(seed)
    for genome in population.values():
        disturb(rng, values, genome)
    species = neat.DefaultSpeciesSet(config.species_set_config, neat.reporting.ReporterSet())
    species.species, species.indexer = copy.deepcopy(pop.species.species), copy.deepcopy(pop.species.indexer)
    for s in species.species.values():
        s.representative = as_neat_genome(s.representative)
        disturb(rng, values, s.representative)
    old = [(sid, species.species[sid].representative) for sid in sorted(species.species)]
    indexer = copy.deepcopy(species.indexer)

    previous = _core.set_threads(threads)
    try:
        found = _core.speciate(config.genome_config, population, sorted(population), old, threshold, indexer)
    finally:
        _core.set_threads(previous)
    RecordingCache.made.clear()
    species.species_set_config.compatibility_threshold = threshold
    with mock.patch.object(neat.species, "GenomeDistanceCache", RecordingCache):
        try:
            species.speciate(config, population, 5)
            raised = None
        except OverflowError as error:  # its stdev squares a finite distance out of range
            raised = error

    representatives, members, spread = found
    assert dict(representatives) == {sid: s.representative.key for sid, s in species.species.items()}
    assert {sid: group for (sid, _), group in zip(representatives, members)} == \
           {sid: list(s.members) for sid, s in species.species.items()}
    if raised is not None:
        assert isinstance(spread, OverflowError) and spread.args == raised.args, spread
        return
    distances = list(RecordingCache.made[0].distances.values())
    got_mean, got_stdev = spread
    assert same_float(got_mean, mean(distances)) and same_float(got_stdev, stdev(distances)), \
        (got_mean, got_stdev, mean(distances), stdev(distances))


def test_a_distance_spread_out_of_range_raises_as_neat_python_after_the_species_are_updated():
    """neat-python's stdev of the distances raises OverflowError after the species are set; the
    drop-in raises the same error at the same point, its species set as neat-python's."""
    pop = grown(False, 40)
    population = {key: as_neat_genome(g) for key, g in pop.population.items()}
    for genome in list(population.values())[::2]:
        for gene in genome.connections.values():
            gene.weight = 1e200
    sets = []
    for cls in (neat.DefaultSpeciesSet, neatpar.SpeciesSet):
        species = cls(copy.deepcopy(pop.config.species_set_config), neat.reporting.ReporterSet())
        species.species, species.indexer = copy.deepcopy(pop.species.species), copy.deepcopy(pop.species.indexer)
        with pytest.raises(OverflowError, match="Numerical result out of range"):
            species.speciate(pop.config, copy.deepcopy(population), 5)
        sets.append(({sid: (s.representative.key, list(s.members)) for sid, s in species.species.items()},
                     species.genome_to_species))
    assert sets[0] == sets[1]
