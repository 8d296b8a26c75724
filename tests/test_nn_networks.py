"""The network kinds' engines (neatpar/nn/networks.py): every kind the settings know has one, and
only those; each kind's kernel computes what its population class computes (a CTRNN with the
settings' clock), and each kind's export is the ONNX model of its network (recurrent state for
recurrent networks, the settings' clock for CTRNNs)."""
import neat
import numpy as np
import pytest

from neatpar.config import networks as kinds
from neatpar.config.settings import Settings
from neatpar.nn import CTRNNPopulation, FeedForwardPopulation, RecurrentPopulation
from neatpar.nn.networks import ENGINES, engine
from neatpar.nn.onnx_export import export_policy
from neatpar.types.environment import Layout
from support.configs import CTRNN_GENES, make_config

LAYOUT = Layout((3,), 2)
CLOCK = {"ctrnn_decision_time": 0.1, "ctrnn_time_step": 0.03}


def settings(network: str) -> Settings:
    return Settings.create({"env": "gymnasium:CartPole-v1", "network": network, **CLOCK})


@pytest.fixture(scope="module")
def populations(tmp_path_factory):
    """Mutated genomes of each kind: feed-forward ones, and recurrent ones with time constants."""
    folder, found = tmp_path_factory.mktemp("nets"), {}
    for network, feed_forward in (("feedforward", "true"), ("recurrent", "false"), ("ctrnn", "false")):
        config = make_config(folder, f"{network}.cfg", num_inputs=3, num_outputs=2, num_hidden=2,
                             feed_forward=feed_forward, **CTRNN_GENES)
        genomes = list(neat.Population(config, seed=2).population.values())[:5]
        for genome in genomes:
            for _ in range(3):
                genome.mutate(config.genome_config)
        found[network] = genomes, config
    return found


def test_every_kind_the_settings_know_has_an_engine_and_no_other():
    assert set(ENGINES) == set(kinds.KINDS)
    assert all(engine(kind) is ENGINES[name] for name, kind in kinds.KINDS.items())


def expected_kernel(network: str, genomes, config):
    if network == "ctrnn":
        return CTRNNPopulation.create(genomes, config, CLOCK["ctrnn_decision_time"], CLOCK["ctrnn_time_step"])
    return {"feedforward": FeedForwardPopulation, "recurrent": RecurrentPopulation}[network].create(genomes, config)


@pytest.mark.parametrize("network", list(kinds.KINDS))
def test_a_kind_s_kernel_computes_what_its_population_class_computes(populations, network):
    genomes, config = populations[network]
    kernel = engine(settings(network).network_kind).kernel(genomes, config, settings(network))
    reference = expected_kernel(network, genomes, config)
    assert type(kernel) is type(reference)
    rows = np.arange(len(genomes))
    for step in np.random.default_rng(4).normal(size=(3, len(genomes), 3)):   # state carries between steps
        assert np.array_equal(kernel.activate(step, rows, rows), reference.activate(step, rows, rows))


@pytest.mark.parametrize("network, recurrent, clock", [("feedforward", False, None), ("recurrent", True, None),
                                                       ("ctrnn", False, (0.1, 0.03))])
def test_a_kind_s_export_is_the_model_of_its_network(populations, network, recurrent, clock):
    genomes, config = populations[network]
    model = engine(settings(network).network_kind).export(genomes[0], config, LAYOUT, settings(network))
    assert model == export_policy(genomes[0], config, LAYOUT, recurrent=recurrent, ctrnn=clock)
