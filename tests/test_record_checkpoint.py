"""The Checkpoint record (neatpar/record/checkpoint.py): written and read in one module, readable by
neat-python's own Checkpointer, a checkpoint of the earlier layout (neatpar's state as a plain dict
after neat-python's 5-tuple) still loads, a restored population keeps its node and innovation
counters, and files that are not checkpoints are named so."""
import gzip
import pickle
import random

import neat
import pytest

from support.configs import load_config
from neatpar.errors import ConfigError
from neatpar.parallel.serialize import dumps
from neatpar.record.checkpoint import Checkpoint, PopulationState, checkpoint_path, save_bytes
from neatpar.config.run_settings import RunSettings
from neatpar.generation_stats import LeagueValues
from neatpar.run_state import RunState

RUN = RunSettings("/somewhere/xor.cfg", "[NEAT]\npop_size = 8\n", (("generations", "9"),))


@pytest.fixture
def folder(tmp_path) -> str:
    """A run folder's place for checkpoints (RunFolder makes checkpoints/ when it claims one)."""
    (tmp_path / "checkpoints").mkdir()
    return str(tmp_path)


def evolved(generations: int = 3) -> neat.Population:
    """A population a few generations on (new node keys and innovation numbers taken)."""
    config = load_config()
    config.pop_size = 20
    population = neat.Population(config, seed=2)

    def fitness(genomes, _config):
        for _, genome in genomes:
            genome.fitness = -abs(len(genome.connections) - 4) + random.random()
    population.run(fitness, generations)
    return population


COLUMNS = ["generation", "best_fitness", "elo", "game:Game/Goals"]


def test_a_checkpoint_written_is_the_checkpoint_read(folder):
    """With stats.csv's header as of then, and no stats rows: they are the run folder's."""
    population = evolved()
    state = RunState(champion=population.best_genome, generation=7, selfplay={"rng": (1, 2)})
    written = Checkpoint(PopulationState.of(population, COLUMNS), random.getstate(), state, RUN)
    path = written.save(folder)
    assert path == checkpoint_path(folder, population.generation)
    read = Checkpoint.load(path)
    assert read.generation == population.generation and read.run_settings == RUN
    assert read.population.columns == COLUMNS and read.population.rows == [] and read.rndstate == written.rndstate
    assert b"best_fitness" in written.to_bytes() and b"Goals" in written.to_bytes()   # the header, once
    assert sorted(read.population.population) == sorted(population.population)
    assert read.evaluator.generation == 7 and read.evaluator.selfplay == {"rng": (1, 2)}
    assert read.evaluator.champion.key == population.best_genome.key
    assert read.sides is None


def test_neat_python_s_checkpointer_reads_a_checkpoint(folder):
    population = evolved()
    path = Checkpoint(PopulationState.of(population, []), random.getstate(), RunState(), RUN).save(folder)
    restored = neat.Checkpointer.restore_checkpoint(path)
    assert restored.generation == population.generation
    assert sorted(restored.population) == sorted(population.population)


def test_a_checkpoint_of_the_earlier_layout_loads(tmp_path):
    """neatpar's state as the earlier code wrote it: a dict with the rows as stats.csv cells."""
    population = evolved()
    record = {"generation": 0, "best_fitness": 3.0, "mean_fitness": 1.5, "stdev_fitness": 0.5, "species": 2,
              "episodes": 8, "scored_steps": 80, "scored_steps_per_s": 100.0, "agent_steps": 90, "seconds": 0.8,
              "mean_return": 1.25, "mean_episode_length": "", "mean_nodes": 3.0, "mean_connections": 2.5,
              "elo": 1210.5, "league_size": 3, "mean_return:Blue?team=0": 1.0, "mean_episode_length:Blue?team=0": "",
              "game:Game/Goals": 2.0, "species_sizes": {1: 5, 2: 3}}
    extras = {"champion": population.best_genome, "evaluator_generation": 3, "rows": [record],
              "best_genome": population.best_genome, "run_settings": RUN.to_dict(), "selfplay": None}
    state = (population.generation, population.config, population.population, population.species, random.getstate())
    path = tmp_path / "old.gz"
    path.write_bytes(gzip.compress(dumps(state) + dumps(extras)))
    read = Checkpoint.load(str(path))
    (row,) = read.population.rows
    assert row.league == LeagueValues(1210.5, 3) and row.mean_episode_length is None
    assert row.behaviors["Blue?team=0"].mean_return == 1.0 and row.behaviors["Blue?team=0"].mean_episode_length is None
    assert row.game == {"Game/Goals": 2.0} and row.species_sizes == {1: 5, 2: 3}
    assert row.to_record() == record   # written back, the same cells
    assert read.run_settings == RUN and read.evaluator.generation == 3
    # ... and an even earlier one, with neat-python's part only
    path.write_bytes(gzip.compress(dumps(state)))
    bare = Checkpoint.load(str(path))
    assert bare.run_settings is None and bare.population.rows == []
    assert bare.evaluator.generation == population.generation


def test_an_asymmetric_run_s_second_population_travels_with_it(folder):
    first, second = evolved(2), evolved(3)
    sides = {"Keeper?team=1": PopulationState.of(second, COLUMNS, generation=second.generation + 1)}
    data = Checkpoint(PopulationState.of(first, COLUMNS[:2]), random.getstate(), RunState(generation=5), RUN,
                      sides).to_bytes()
    path = save_bytes(folder, 5, data)
    read = Checkpoint.load(path)
    assert read.generation == 5   # an asymmetric run's checkpoint counts both populations' generations
    keeper = read.sides["Keeper?team=1"]
    assert keeper.generation == second.generation + 1 and keeper.columns == COLUMNS and keeper.rows == []
    assert read.population.columns == COLUMNS[:2]
    assert sorted(keeper.population) == sorted(second.population)


def test_a_restored_population_continues_the_node_and_innovation_counters(folder):
    population = evolved()
    path = Checkpoint(PopulationState.of(population, []), random.getstate(), RunState(), RUN).save(folder)
    config = load_config()
    config.pop_size = 20
    restored = Checkpoint.load(path).restore(config, path)
    assert next(config.genome_config.node_indexer) == next(population.config.genome_config.node_indexer)
    assert restored.reproduction.innovation_tracker is config.genome_config.innovation_tracker is not None


def test_a_config_of_another_shape_is_refused_in_one_line(folder):
    population = evolved(1)
    path = Checkpoint(PopulationState.of(population, []), random.getstate(), RunState(), RUN).save(folder)
    other = load_config()
    other.genome_config.num_inputs = 3
    with pytest.raises(ConfigError, match=f"checkpoint {path} was made with num_inputs = 2, num_outputs = 1; the "
                                          f"config has 3 and 1: resume with the run's own config"):
        Checkpoint.load(path).restore(other, path)


def test_files_that_are_not_checkpoints_are_named_so(tmp_path):
    for name, data in (("winner.json", b'{"format": "neatpar-genome"}'), ("winner.pickle", pickle.dumps({"a": 1})),
                       ("genome.gz", gzip.compress(pickle.dumps({"a": 1})))):
        (tmp_path / name).write_bytes(data)
        with pytest.raises(ConfigError, match=f"{tmp_path / name} is not a checkpoint"):
            Checkpoint.load(str(tmp_path / name))
    (tmp_path / "cut.gz").write_bytes(gzip.compress(pickle.dumps((1, 2, 3, 4, 5)))[:20])
    with pytest.raises(ConfigError, match="is corrupt or truncated"):
        Checkpoint.load(str(tmp_path / "cut.gz"))
    with pytest.raises(ConfigError, match="not found"):
        Checkpoint.load(str(tmp_path / "missing.gz"))
