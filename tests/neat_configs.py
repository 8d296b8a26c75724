"""Build neat-python 2.0 configs with chosen options (all keys explicit, as 2.0 requires)."""
import os

import neat

ALL_ACTIVATIONS = ("sigmoid tanh sin gauss relu elu lelu selu softplus identity clamped inv log exp "
                   "abs hat square cube")
ALL_AGGREGATIONS = "sum product max min maxabs median mean"

DEFAULTS = dict(
    pop_size=20, num_inputs=3, num_outputs=2, num_hidden=0, feed_forward="true",
    initial_connection="full_direct", activation_default="sigmoid", activation_options="sigmoid",
    activation_mutate_rate=0.0, aggregation_default="sum", aggregation_options="sum",
    aggregation_mutate_rate=0.0, conn_add_prob=0.5, conn_delete_prob=0.2, node_add_prob=0.3,
    node_delete_prob=0.1, bias_mutate_rate=0.7, response_mutate_rate=0.0, response_init_stdev=0.0,
    enabled_mutate_rate=0.05, weight_init_stdev=1.0,
)

TEMPLATE = """
[NEAT]
fitness_criterion = max
fitness_threshold = 1e9
pop_size = {pop_size}
reset_on_extinction = false
no_fitness_termination = true

[DefaultGenome]
num_inputs = {num_inputs}
num_hidden = {num_hidden}
num_outputs = {num_outputs}
initial_connection = {initial_connection}
feed_forward = {feed_forward}
compatibility_disjoint_coefficient = 1.0
compatibility_weight_coefficient = 0.5
conn_add_prob = {conn_add_prob}
conn_delete_prob = {conn_delete_prob}
node_add_prob = {node_add_prob}
node_delete_prob = {node_delete_prob}
single_structural_mutation = false
structural_mutation_surer = default
activation_default = {activation_default}
activation_options = {activation_options}
activation_mutate_rate = {activation_mutate_rate}
aggregation_default = {aggregation_default}
aggregation_options = {aggregation_options}
aggregation_mutate_rate = {aggregation_mutate_rate}
bias_init_mean = 0.0
bias_init_stdev = 1.0
bias_init_type = gaussian
bias_replace_rate = 0.1
bias_mutate_rate = {bias_mutate_rate}
bias_mutate_power = 0.5
bias_max_value = 30.0
bias_min_value = -30.0
response_init_mean = 1.0
response_init_stdev = {response_init_stdev}
response_init_type = gaussian
response_replace_rate = 0.1
response_mutate_rate = {response_mutate_rate}
response_mutate_power = 0.5
response_max_value = 30.0
response_min_value = -30.0
weight_init_mean = 0.0
weight_init_stdev = {weight_init_stdev}
weight_init_type = gaussian
weight_max_value = 30
weight_min_value = -30
weight_mutate_rate = 0.8
weight_replace_rate = 0.1
weight_mutate_power = 0.5
enabled_default = true
enabled_mutate_rate = {enabled_mutate_rate}
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


def write_config(directory, name="neat.cfg", neatpar: dict | None = None, **options) -> str:
    """Write a config with `options` over DEFAULTS (and a [neatpar] section) into `directory`."""
    unknown = set(options) - set(DEFAULTS)
    if unknown:
        raise KeyError(f"unknown config options {sorted(unknown)}")
    path = os.path.join(str(directory), name)
    with open(path, "w") as f:
        f.write(TEMPLATE.format(**{**DEFAULTS, **options}))
        if neatpar is not None:
            f.write("\n[neatpar]\n" + "".join(f"{k} = {v}\n" for k, v in neatpar.items()))
    return path


def make_config(directory, name="neat.cfg", **options) -> neat.Config:
    """Write a config with `options` over DEFAULTS into `directory` and load it."""
    return neat.Config(neat.DefaultGenome, neat.DefaultReproduction, neat.DefaultSpeciesSet,
                       neat.DefaultStagnation, write_config(directory, name, **options))
