"""Tests of search/novelty.py: novelty is the mean distance to the k nearest among the generation and
the archive as it was before the generation; the threshold archive admits above a threshold that
rises by 1.2 after more than 4 admissions and falls by 0.95 after 5 quiet generations; the random
archive draws from its own seeded generator in genome-key order; novelty+fitness blends normalised
ranks; the selection value becomes genome.fitness while the true fitness and the best genome stay;
a restored state continues exactly; a neat-python run with novelty repeats per seed."""
import os
import pickle
import random
import types

import neat
import numpy as np
import pytest

import neatpar
from neatpar.errors import ConfigError, DescriptorError
from neatpar.search.knn import novelty as knn_novelty
from neatpar.search.novelty import FLOOR, LOWER, QUIET, RAISE, RAISE_ABOVE, NoveltyArchive, NoveltySearch, normalised_ranks
from neatpar.search.results import Outcome
from support.paths import CONFIGS


def generation(keys, descriptors, fitness=None):
    genomes = [(key, types.SimpleNamespace(key=key, fitness=None)) for key in keys]
    fitness = [float(-key) for key in keys] if fitness is None else fitness
    outcomes = {key: Outcome(f, np.asarray(d, float)) for key, d, f in zip(keys, descriptors, fitness)}
    return genomes, outcomes


def test_the_threshold_rises_after_more_than_four_admissions_and_falls_after_five_quiet_generations():
    archive = NoveltyArchive("threshold", threshold=1.0)
    rows = np.zeros((6, 1))
    assert archive.admit(range(6), rows, np.array([2.0, 2, 2, 2, 0.5, 2])) == RAISE_ABOVE + 1
    assert archive.threshold == RAISE and archive.size == 5
    assert archive.admit(range(4), rows[:4], np.full(4, 5.0)) == RAISE_ABOVE      # four: no change
    assert archive.threshold == RAISE
    for _ in range(QUIET - 1):
        archive.admit(range(3), rows[:3], np.zeros(3))
    assert archive.threshold == RAISE
    archive.admit(range(3), rows[:3], np.zeros(3))
    assert archive.threshold == RAISE * LOWER
    for _ in range(200 * QUIET):
        archive.admit(range(3), rows[:3], np.zeros(3))
    assert archive.threshold == FLOOR * 1.0


def test_only_novelty_above_the_threshold_enters_in_key_order():
    archive = NoveltyArchive("threshold", threshold=1.0)
    descriptors = np.array([[3.0], [1.0], [2.0]])
    archive.admit([9, 4, 6], descriptors, np.array([1.5, 1.0, 3.0]))
    assert archive.descriptors.tolist() == [[2.0], [3.0]]   # key 6, then key 9; key 4 (exactly 1.0) stays out


def test_the_random_archive_repeats_per_seed_follows_key_order_and_leaves_neat_pythons_generator_alone():
    keys = list(range(1, 401))
    descriptors = np.arange(400, dtype=float)[:, None]
    before = random.getstate()
    first = NoveltyArchive("random", seed=3)
    first.admit(keys, descriptors, np.zeros(400))
    assert random.getstate() == before
    again = NoveltyArchive("random", seed=3)
    shuffled = keys[::-1]
    again.admit(shuffled, descriptors[::-1], np.zeros(400))
    assert first.descriptors.tolist() == again.descriptors.tolist()
    other = NoveltyArchive("random", seed=4)
    other.admit(keys, descriptors, np.zeros(400))
    assert other.descriptors.tolist() != first.descriptors.tolist()
    assert 2 <= first.size <= 20    # probability 0.02 of 400


def test_novelty_is_measured_against_the_archive_before_the_generation_and_becomes_the_fitness():
    search = NoveltySearch(k=2, threshold=0.3)
    rng = np.random.default_rng(1)
    archived = []
    for gen in range(4):
        keys = list(range(10 * gen, 10 * gen + 10))
        descriptors = rng.uniform(-1, 1, (10, 2))
        genomes, outcomes = generation(keys, descriptors)
        threshold = search.archive.threshold
        stats = search.score(genomes, outcomes, gen)
        expected = knn_novelty(descriptors, np.array(archived) if archived else None, 2)
        assert [g.fitness for _, g in genomes] == expected.tolist()
        assert search.novelty == dict(zip(keys, expected.tolist()))
        archived += [descriptors[i].tolist() for i in range(10) if expected[i] > threshold]   # keys ascend
        assert search.archive.descriptors.tolist() == archived
        assert (stats.mean_novelty, stats.max_novelty) == (expected.mean(), expected.max())
        assert (stats.best_fitness, stats.mean_fitness) == (-10.0 * gen, float(np.mean([-k for k in keys])))
    assert search.best.fitness == 0.0 and search.best.genome.key == 0 and search.best.generation == 0


def test_novelty_plus_fitness_blends_normalised_ranks():
    assert normalised_ranks(np.array([3.0, 1.0, 2.0, 2.0])).tolist() == [1.0, 0.0, 0.5, 0.5]
    assert normalised_ranks(np.array([4.0])).tolist() == [0.5]
    search = NoveltySearch(k=1, weight=0.25)
    genomes, outcomes = generation([1, 2, 3], [[0.0], [1.0], [3.0]], fitness=[5.0, 1.0, 3.0])
    search.score(genomes, outcomes, 0)
    novelty = np.array([1.0, 1.0, 2.0])
    expected = 0.25 * normalised_ranks(novelty) + 0.75 * normalised_ranks(np.array([5.0, 1.0, 3.0]))
    assert [g.fitness for _, g in genomes] == expected.tolist()
    assert search.name == "novelty+fitness" and search.best.fitness == 5.0


def test_a_generation_missing_a_descriptor_is_an_error_naming_the_genome():
    search = NoveltySearch()
    genomes, outcomes = generation([1, 2], [[0.0, 1.0], [1.0, 1.0]])
    outcomes[2] = Outcome(1.0, None)
    with pytest.raises(DescriptorError, match="genome 2 has no descriptor"):
        search.score(genomes, outcomes, 0)


@pytest.mark.parametrize("kwargs, message", [
    ({"k": 0}, "novelty_k must be"), ({"archive": "grid"}, "novelty_archive = 'grid' is not one of"),
    ({"threshold": 0.0}, "novelty_threshold must be above 0"), ({"weight": 1.5}, "novelty_weight must be from 0 to 1")])
def test_bad_parameters_are_config_errors(kwargs, message):
    with pytest.raises(ConfigError, match=message):
        NoveltySearch(**kwargs)


@pytest.mark.parametrize("kind", ["threshold", "random"])
def test_a_restored_state_continues_exactly_as_the_search_would_have(kind):
    rng = np.random.default_rng(7)
    batches = [generation(list(range(20 * g, 20 * g + 20)), rng.uniform(-1, 1, (20, 3))) for g in range(8)]
    whole = NoveltySearch(k=4, archive=kind, threshold=0.2, seed=11, probability=0.2)
    resumed = NoveltySearch(k=4, archive=kind, threshold=0.2, seed=11, probability=0.2)
    seen_whole, seen_resumed = [], []
    for gen, batch in enumerate(batches):
        seen_whole.append(whole.score(*pickle.loads(pickle.dumps(batch)), gen))
        if gen == 4:
            resumed = NoveltySearch.from_state(pickle.loads(pickle.dumps(resumed.state())))
        seen_resumed.append(resumed.score(*pickle.loads(pickle.dumps(batch)), gen))
    assert seen_resumed == seen_whole
    assert resumed.archive.descriptors.tolist() == whole.archive.descriptors.tolist()
    assert resumed.state()["archive"]["rng"] == whole.state()["archive"]["rng"]


def novelty_run(seed: int, generations: int = 4):
    """A neat-python run on XOR's config with neatpar's classes, selected on novelty; the
    descriptor is the network's outputs on two cases."""
    config = neat.Config(neatpar.Genome, neatpar.Reproduction, neatpar.SpeciesSet, neat.DefaultStagnation,
                         os.path.join(CONFIGS, "xor.cfg"))
    config.no_fitness_termination = True
    search = NoveltySearch(k=5, threshold=0.05, seed=seed)
    history = []

    def evaluate(genomes, config):
        outcomes = {}
        for key, genome in genomes:
            net = neat.nn.FeedForwardNetwork.create(genome, config)
            outs = [net.activate(case)[0] for case in ((0, 1), (1, 1))]
            outcomes[key] = Outcome(-abs(outs[0] - 1) - abs(outs[1]), np.array(outs))
        history.append(search.score(genomes, outcomes, len(history)))

    population = neat.Population(config, seed=seed)
    population.run(evaluate, generations)
    return history, search.archive.descriptors.tolist(), sorted(population.population)


def test_a_neat_python_run_with_novelty_repeats_per_seed():
    first, again, other = novelty_run(3), novelty_run(3), novelty_run(4)
    assert first == again
    assert first != other
    assert first[0][0].archive_size > 0
