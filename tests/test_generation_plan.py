"""A generation compiled for play (neatpar/episodes/generation_plan.py): the match the roles give, and
compile_generation's plan and kernel: the population's genomes first, then the opponents', each index
computing its own genome's network (neat-python's), genomes of another config in a kernel of their own."""
import neat
import numpy as np

from neatpar import settings as run_config
from neatpar.episodes.generation_plan import GenerationPlan, Match, compile_generation, needs_geometry, standard_match
from neatpar.nn.mixed import MixedPopulation
from neatpar.record.genomes import save_genome_json
from support.configs import write_config
from support.paths import BALL

TEAMS = "Blue?team=0: population, Purple?team=1: champion"


def load(tmp_path, behaviors=TEAMS, name="run.cfg", inputs=3):
    section = {"env": BALL, "behaviors": behaviors, "max_steps": 10, "episodes_per_genome": 2}
    path = write_config(tmp_path, name, neatpar=section, pop_size=6, num_inputs=inputs, num_outputs=2,
                        activation_options="tanh", activation_default="tanh")
    return run_config.load(path)


def mutated(config, seed):
    genomes = list(neat.Population(config, seed=seed).population.values())
    for genome in genomes:
        for _ in range(4):
            genome.mutate(config.genome_config)
    return genomes


def outputs(kernel, genome_index, x):
    return kernel.activate(x, np.full(len(x), genome_index))


def neat_outputs(genome, config, x):
    network = neat.nn.FeedForwardNetwork.create(genome, config)
    return np.array([network.activate(row) for row in x])


def test_the_roles_match_has_the_champion_and_the_files_as_opponents(tmp_path):
    config, settings = load(tmp_path)
    champion = mutated(config, 1)[0]
    assert standard_match(settings, champion, {}) == Match({"Purple?team=1": champion}, 2)
    save_genome_json(champion, config, str(tmp_path / "opponent.json"))
    _, settings = load(tmp_path, "Blue?team=0: population, Purple?team=1: opponent.json", "file.cfg")
    assert standard_match(settings, None, {"Purple?team=1": champion}).opponents == {"Purple?team=1": champion}


def test_the_population_comes_first_then_the_opponents_each_index_its_own_network(tmp_path):
    config, settings = load(tmp_path)
    genomes, champion = mutated(config, 2), mutated(config, 3)[0]
    compiled = compile_generation(genomes, champion, {}, settings, config)
    assert compiled.plan == GenerationPlan(count=6, fixed={"Purple?team=1": 6}, episodes=2, round=0, inputs=0)
    x = np.random.default_rng(4).normal(size=(5, 3))
    for index, genome in enumerate(genomes + [champion]):
        assert np.allclose(outputs(compiled.kernel, index, x), neat_outputs(genome, config, x))
    assert compiled.geometry is None and not needs_geometry(settings)


def test_without_a_champion_the_first_genome_is_the_opponent_and_a_match_sets_episodes_and_round(tmp_path):
    config, settings = load(tmp_path)
    genomes = mutated(config, 5)
    compiled = compile_generation(genomes, None, {}, settings, config)
    x = np.random.default_rng(6).normal(size=(5, 3))
    assert np.allclose(outputs(compiled.kernel, 6, x), neat_outputs(genomes[0], config, x))
    rival = mutated(config, 7)[1]
    plan = compile_generation(genomes, None, {}, settings, config, Match({"Purple?team=1": rival}, 3, round=4)).plan
    assert (plan.episodes, plan.round, plan.fixed) == (3, 4, {"Purple?team=1": 6})


def test_an_opponent_of_another_config_runs_in_a_kernel_of_its_own(tmp_path):
    config, settings = load(tmp_path)
    wide, _ = load(tmp_path, name="wide.cfg", inputs=5)
    genomes, rival = mutated(config, 8), mutated(wide, 9)[0]
    compiled = compile_generation(genomes, rival, {}, settings, config, configs={"Purple?team=1": wide})
    assert isinstance(compiled.kernel, MixedPopulation)
    assert compiled.plan == GenerationPlan(count=6, fixed={"Purple?team=1": 6}, episodes=2, round=0, inputs=5)
    x = np.random.default_rng(10).normal(size=(5, 5))
    assert np.allclose(outputs(compiled.kernel, 6, x), neat_outputs(rival, wide, x))
    assert np.allclose(outputs(compiled.kernel, 0, x)[:, :2], neat_outputs(genomes[0], config, x[:, :3]))
