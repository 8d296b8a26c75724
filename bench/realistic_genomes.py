"""Realistic evolved genomes for benchmarks: 8 inputs, 2 outputs, each genome mutated on its own
with neat-python's operators until it has 10-30 hidden nodes and 40-150 enabled connections."""
import os
import random
import re
import tempfile

import neat

CONFIG_TEXT = """
[NEAT]
fitness_criterion = max
fitness_threshold = 1e9
pop_size = {pop}
reset_on_extinction = false
no_fitness_termination = true

[DefaultGenome]
num_inputs = 8
num_hidden = 0
num_outputs = 2
initial_connection = full_direct
feed_forward = {feed_forward}
compatibility_disjoint_coefficient = 1.0
compatibility_weight_coefficient = 0.5
conn_add_prob = 0.9
conn_delete_prob = 0.05
node_add_prob = 0.3
node_delete_prob = 0.05
single_structural_mutation = false
structural_mutation_surer = default
activation_default = tanh
activation_options = tanh sigmoid relu
activation_mutate_rate = 0.1
aggregation_default = sum
aggregation_options = sum
aggregation_mutate_rate = 0.0
bias_init_mean = 0.0
bias_init_stdev = 1.0
bias_init_type = gaussian
bias_replace_rate = 0.1
bias_mutate_rate = 0.7
bias_mutate_power = 0.5
bias_max_value = 30.0
bias_min_value = -30.0
response_init_mean = 1.0
response_init_stdev = 0.0
response_init_type = gaussian
response_replace_rate = 0.0
response_mutate_rate = 0.0
response_mutate_power = 0.0
response_max_value = 30.0
response_min_value = -30.0
weight_init_mean = 0.0
weight_init_stdev = 1.0
weight_init_type = gaussian
weight_max_value = 30
weight_min_value = -30
weight_mutate_rate = 0.8
weight_replace_rate = 0.1
weight_mutate_power = 0.5
enabled_default = true
enabled_mutate_rate = 0.01
enabled_rate_to_true_add = 0.0
enabled_rate_to_false_add = 0.0

[DefaultSpeciesSet]
compatibility_threshold = 3.0

[DefaultStagnation]
species_fitness_func = max
max_stagnation = 20
species_elitism = 2

[DefaultReproduction]
elitism = 2
survival_threshold = 0.2
min_species_size = 2
"""


def config_text(count, feed_forward=True, **keys):
    """CONFIG_TEXT for a population of `count`, with the [DefaultGenome] `keys` given set to other
    values (another benchmark's genomes: HyperNEAT's CPPNs)."""
    text = CONFIG_TEXT.format(pop=count, feed_forward=str(feed_forward).lower())
    for key, value in keys.items():
        text, found = re.subn(rf"^{key} = .*$", f"{key} = {value}", text, flags=re.M)
        if found != 1:
            raise KeyError(f"{key} is not a key of the benchmark's neat config")
    return text


def write_config(path, count, feed_forward=True):
    with open(path, "w") as f:
        f.write(config_text(count, feed_forward))


def load_config(path):
    return neat.Config(neat.DefaultGenome, neat.DefaultReproduction, neat.DefaultSpeciesSet,
                       neat.DefaultStagnation, path)


def realistic(count, seed=0, feed_forward=True, hidden=(10, 30), extra_links=(0, 40)):
    """Return (config, genomes) with `count` genomes of realistic size (hidden nodes before
    pruning drawn from `hidden`, plus a number of extra links drawn from `extra_links`)."""
    path = os.path.join(tempfile.mkdtemp(prefix="neatpar-bench-"), "neat.cfg")
    write_config(path, count, feed_forward)
    config = load_config(path)
    os.remove(path)
    os.rmdir(os.path.dirname(path))
    genomes = list(neat.Population(config, seed=seed).population.values())
    rng = random.Random(seed)
    for genome in genomes:
        target_hidden = rng.randint(*hidden)
        while len(genome.nodes) - 2 < target_hidden:
            genome.mutate(config.genome_config)
        for _ in range(rng.randint(*extra_links)):
            genome.mutate_add_connection(config.genome_config)
    return config, genomes[:count]
