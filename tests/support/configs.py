"""neat-python configs: the repository's, written from a template with any option changed, the
[neatpar] sections of small ball and hover runs, and genomes written by hand."""
import os

from .paths import BALL, BUILDS, CONFIGS, HOVER
from .simulators import free_worker_id

# neat-python is imported where used, so that the stock-stack script tests/fixtures/make_fixtures.py
# can import the support package without it.


def load_config(name: str = "xor.cfg"):
    import neat
    return neat.Config(neat.DefaultGenome, neat.DefaultReproduction, neat.DefaultSpeciesSet,
                       neat.DefaultStagnation, os.path.join(CONFIGS, name))


ALL_ACTIVATIONS = ("sigmoid tanh sin gauss relu elu lelu selu softplus identity clamped inv log exp "
                   "abs hat square cube")


ALL_AGGREGATIONS = "sum product max min maxabs median mean"


DEFAULTS = dict(
    pop_size=20, num_inputs=3, num_outputs=2, num_hidden=0, feed_forward="true",
    initial_connection="full_direct", activation_default="sigmoid", activation_options="sigmoid",
    activation_mutate_rate=0.0, aggregation_default="sum", aggregation_options="sum",
    aggregation_mutate_rate=0.0, conn_add_prob=0.5, conn_delete_prob=0.2, node_add_prob=0.3,
    node_delete_prob=0.1, bias_mutate_rate=0.7, response_mutate_rate=0.0, response_init_stdev=0.0,
    enabled_mutate_rate=0.05, weight_init_stdev=1.0, max_stagnation=20, species_elitism=2,
    # neat-python's own defaults for the node genes' time_constant (fixed at 1.0), which CTRNNs read
    time_constant_init_mean=1.0, time_constant_init_stdev=0.0, time_constant_mutate_rate=0.0,
    time_constant_mutate_power=0.0, time_constant_replace_rate=0.0, time_constant_min_value=0.01,
    time_constant_max_value=10.0,
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
time_constant_init_mean = {time_constant_init_mean}
time_constant_init_stdev = {time_constant_init_stdev}
time_constant_init_type = gaussian
time_constant_replace_rate = {time_constant_replace_rate}
time_constant_mutate_rate = {time_constant_mutate_rate}
time_constant_mutate_power = {time_constant_mutate_power}
time_constant_max_value = {time_constant_max_value}
time_constant_min_value = {time_constant_min_value}
enabled_default = true
enabled_mutate_rate = {enabled_mutate_rate}
enabled_rate_to_true_add = 0.0
enabled_rate_to_false_add = 0.0

[DefaultSpeciesSet]
compatibility_threshold = 3.0

[DefaultStagnation]
species_fitness_func = max
max_stagnation = {max_stagnation}
species_elitism = {species_elitism}

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


def make_config(directory, name="neat.cfg", **options):
    """Write a config with `options` over DEFAULTS into `directory` and load it."""
    import neat
    return neat.Config(neat.DefaultGenome, neat.DefaultReproduction, neat.DefaultSpeciesSet,
                       neat.DefaultStagnation, write_config(directory, name, **options))


def evolved_genomes(config, seed: int, rounds: int) -> list:
    """A population built and mutated with neat-python's own operators."""
    import neat
    population = neat.Population(config, seed=seed)
    genomes = list(population.population.values())
    for genome in genomes:
        for _ in range(rounds):
            genome.mutate(config.genome_config)
    return genomes


def hand_genome(config, nodes: dict, links: list, key: int = 1):
    """A genome written by hand: nodes {key: (activation, aggregation, bias, response[, time
    constant])}, links [(source, target, weight, enabled)] in connection order."""
    from neat.genes import DefaultConnectionGene, DefaultNodeGene
    genome = config.genome_type(key)
    for n, (act, agg, bias, response, *tau) in nodes.items():
        gene = DefaultNodeGene(n)
        gene.activation, gene.aggregation, gene.bias, gene.response = act, agg, bias, response
        gene.time_constant = tau[0] if tau else 1.0
        genome.nodes[n] = gene
    for innovation, (i, o, weight, enabled) in enumerate(links):
        gene = DefaultConnectionGene((i, o), innovation=innovation + 1)
        gene.weight, gene.enabled = weight, enabled
        genome.connections[(i, o)] = gene
    return genome


def run_cfg(folder, name: str, section: dict, over: dict, **neat_defaults) -> str:
    """A config file of [neatpar] `section` and the neat config's `neat_defaults`, with the options
    `over` (neat config keys to the neat config, the rest to [neatpar]); its path."""
    neat_options = {k: over.pop(k) for k in list(over) if k in DEFAULTS}
    section.update(over)
    return write_config(folder, name, neatpar=section, **{**neat_defaults, **neat_options})


def ball_cfg(folder, name="ball.cfg", generations=3, interval=1, **over):
    section = {"env": BALL, "env_args": "--agents 4 --max-steps 15", "behaviors": "Ball3D?team=0: population",
               "max_steps": 15, "generations": generations, "seed": 11, "checkpoint_interval": interval,
               "worker_id": free_worker_id()}
    return run_cfg(folder, name, section, over, pop_size=8, num_inputs=8, num_outputs=2, activation_options="tanh",
                   activation_default="tanh")


CTRNN_GENES = dict(time_constant_init_mean=0.2, time_constant_init_stdev=0.1, time_constant_mutate_rate=0.3,
                   time_constant_mutate_power=0.1, time_constant_replace_rate=0.05, time_constant_min_value=0.02,
                   time_constant_max_value=5.0)


def hover_cfg(folder, name="hover.cfg", generations=3, interval=1, **over):
    """configs/hover.cfg in small: CTRNNs on the hover build, decisions every 5 academy steps."""
    section = {"env": HOVER, "env_args": "--agents 6 --max-steps 150 --decision-period 5",
               "behaviors": "Hover?team=0: population", "network": "ctrnn", "ctrnn_decision_time": 0.1,
               "ctrnn_time_step": 0.02, "max_steps": 30, "generations": generations, "seed": 4,
               "checkpoint_interval": interval, "worker_id": free_worker_id()}
    return run_cfg(folder, name, section, over, pop_size=10, num_inputs=2, num_outputs=1, feed_forward="false",
                   num_hidden=1, activation_options="tanh", activation_default="tanh", **CTRNN_GENES)


def camera_cfg(folder, name="camera.cfg", generations=2, interval=1, **over):
    """configs/camera.cfg in small: HyperNEAT CPPNs on the camera build's 8 x 8 RGB image (a 3-D
    substrate, 7 CPPN inputs), 8 agents, episodes of 12 decisions."""
    section = {"env": os.path.join(BUILDS, "camera"), "env_args": "--agents 8 --max-steps 12 --size 8",
               "behaviors": "Camera?team=0: population", "network": "hyperneat", "max_steps": 12,
               "episodes_per_genome": 2, "generations": generations, "seed": 3, "checkpoint_interval": interval,
               "worker_id": free_worker_id()}
    return run_cfg(folder, name, section, over, pop_size=8, num_inputs=7, num_outputs=1,
                   activation_options="tanh sin gauss", activation_default="tanh", weight_init_stdev=1.0)
