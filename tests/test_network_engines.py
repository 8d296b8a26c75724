"""The network kinds' engines (neatpar/nn/network_engines.py): every kind the settings know has one, and
only those; each kind's kernel computes what its population class computes (a CTRNN with the
settings' clock), and each kind's export is the ONNX model of its network (recurrent state for
recurrent networks, the settings' clock for CTRNNs); hyperneat's and es-hyperneat's kernel and export
run on the run's substrate (its geometry), made from the game's layout and the settings."""
import neat
import numpy as np
import pytest

from neatpar.config import network_kinds as kinds
from neatpar.config.settings_model import Settings
from neatpar.nn import CTRNNPopulation, FeedForwardPopulation, RecurrentPopulation
from neatpar.errors import ConfigError
from neatpar.nn.network_engines import ENGINES, engine, run_geometry, run_substrate
from neatpar.nn.es_hyperneat import es_population
from neatpar.nn.es_substrate import make_es_substrate
from neatpar.nn.onnx_es import export_es_policy
from neatpar.nn.onnx_export import export_policy
from neatpar.nn.onnx_substrate import export_substrate_policy
from neatpar.nn.substrate import IOShapes, Query, make_substrate
from neatpar.nn.substrate_population import SubstratePopulation
from neatpar.environment import Layout, Sensor
from support.configs import CTRNN_GENES, make_config

LAYOUT = Layout((3,), 2)
CLOCK = {"ctrnn_decision_time": 0.1, "ctrnn_time_step": 0.03}


def settings(network: str) -> Settings:
    return Settings.create({"env": "gymnasium:CartPole-v1", "network": network, **CLOCK})


@pytest.fixture(scope="module")
def populations(tmp_path_factory):
    """Mutated genomes of each kind: feed-forward ones, and recurrent ones with time constants."""
    folder, found = tmp_path_factory.mktemp("nets"), {}
    for network, feed_forward in (("feedforward", "true"), ("recurrent", "false"), ("ctrnn", "false"),
                                  ("hyperneat", "true"), ("es-hyperneat", "true")):
        sizes = dict(num_inputs=5, num_outputs=1) if "hyperneat" in network else dict(num_inputs=3, num_outputs=2)
        config = make_config(folder, f"{network}.cfg", num_hidden=2, feed_forward=feed_forward, **sizes,
                             **CTRNN_GENES)
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
    if network == "es-hyperneat":
        return es_population(genomes, config, make_es_substrate(IOShapes(((3,),), 2)))
    if network == "hyperneat":
        return SubstratePopulation.create(genomes, config, make_substrate(IOShapes(((3,),), 2)))
    if network == "ctrnn":
        return CTRNNPopulation.create(genomes, config, CLOCK["ctrnn_decision_time"], CLOCK["ctrnn_time_step"])
    return {"feedforward": FeedForwardPopulation, "recurrent": RecurrentPopulation}[network].create(genomes, config)


@pytest.mark.parametrize("network", list(kinds.KINDS))
def test_a_kind_s_kernel_computes_what_its_population_class_computes(populations, network):
    genomes, config = populations[network]
    geometry = run_geometry(settings(network), config, {"b": LAYOUT}, ["b"])
    kernel = engine(settings(network).network_kind).kernel(genomes, config, settings(network), geometry)
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


def test_the_es_hyperneat_export_is_the_model_of_the_network_found_on_the_run_s_substrate(populations):
    genomes, config = populations["es-hyperneat"]
    run = settings("es-hyperneat")
    geometry = run_geometry(run, config, {"b": LAYOUT}, ["b"])
    model = engine(run.network_kind).export(genomes[0], config, LAYOUT, run, geometry)
    assert model == export_es_policy(genomes[0], config, make_es_substrate(IOShapes(((3,),), 2)), LAYOUT)


def test_the_hyperneat_export_is_the_substrate_model_of_the_run_s_substrate(populations):
    genomes, config = populations["hyperneat"]
    run = settings("hyperneat")
    substrate = run_substrate(LAYOUT, run, config)
    model = engine(run.network_kind).export(genomes[0], config, LAYOUT, run, substrate)
    assert model == export_substrate_policy(genomes[0], config, make_substrate(IOShapes(((3,),), 2)))
    assert engine(run.network_kind).export(genomes[0], config, LAYOUT, run) == model   # made from the layout


def test_the_run_s_substrate_follows_the_settings_and_the_sensors_shapes(populations):
    _, config = populations["hyperneat"]
    run = Settings.create({"env": "gymnasium:CartPole-v1", "network": "hyperneat", "substrate_hidden": "2x3, 4",
                           "hyperneat_activation": "sigmoid", "hyperneat_weight_threshold": 0.1,
                           "hyperneat_max_weight": 3.0})
    camera = Layout.of_sensors((Sensor((4, 5, 1), visual=True), Sensor((3,))), 2, (3,))
    substrate = run_geometry(run, config, {"cam": camera, "other": camera}, ["cam", "other"])
    assert substrate == make_substrate(IOShapes(((4, 5, 1), (3,)), 2, (3,)), "2x3, 4", activation="sigmoid",
                                       query=Query(0.1, 3.0))
    assert substrate.sizes == (23, 6, 4, 5)
    assert run_geometry(settings("feedforward"), config, {"cam": camera}, ["cam"]) is None


def test_the_substrate_s_problems_are_one_line_errors_at_the_start(populations):
    _, config = populations["hyperneat"]
    run = settings("hyperneat")
    with pytest.raises(ConfigError, match="num_inputs = 7"):   # channels make the substrate 3-D
        run_substrate(Layout.of_sensors((Sensor((4, 4, 3), visual=True),), 2), run, config)
    with pytest.raises(ConfigError, match="channels first"):
        run_substrate(Layout.of_sensors((Sensor((3, 4, 4), True, channels_first=True),), 2), run, config)
    with pytest.raises(ConfigError, match="one substrate per run"):
        run_geometry(run, config, {"a": LAYOUT, "b": Layout((4,), 2)}, ["a", "b"])
    with pytest.raises(ConfigError, match="none of the behaviors"):
        run_geometry(run, config, {"a": LAYOUT}, ["b"])
