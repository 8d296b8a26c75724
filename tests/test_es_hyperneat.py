"""neatpar.nn.es_hyperneat (nn/es_hyperneat.py): the C search of ES-HyperNEAT's hidden nodes and
links, against the algorithm written from the paper in PUREPLES' order (tests/support/es_hyperneat.py)
on many CPPNs, exactly (nodes, links and weights to the last bit), and the discovered networks in
the population kernel against neat-python's FeedForwardNetwork of the same links."""
import numpy as np
import pytest

from support.configs import ALL_ACTIVATIONS, ALL_AGGREGATIONS, evolved_genomes, hand_genome, make_config
from support.es_hyperneat import es_search, points_of, reference_network
from support.hyperneat import assert_same_bits
from neatpar.errors import ConfigError
from neatpar.nn.es_hyperneat import (compile_es_cppns, discover, discovered, es_population, network_tables,
                                    population_tables)
from neatpar.nn.es_substrate import ESParams, EvolvableSubstrate, make_es_substrate
from neatpar.nn.substrate import IOShapes

LINES = (np.array([[-1.0, -1.0], [-0.5, -1.0], [0.5, -1.0], [1.0, -1.0]]), np.array([[-0.5, 1.0], [0.5, 1.0]]))
# a 3 x 2 grid of inputs over the square (rows above one another: links into inputs), one output
GRID = (make_es_substrate(IOShapes(((3, 2),), 2)).inputs, np.array([[0.0, 1.0], [0.25, 0.75]]))
PARAMS = {
    "default": ESParams(),
    "deep": ESParams(initial_depth=2, max_depth=3, iteration_level=2),
    "shallow": ESParams(initial_depth=0, max_depth=1, iteration_level=0, band_threshold=0.1),
    "loose": ESParams(variance_threshold=0.0, division_threshold=0.0, band_threshold=0.05, max_weight=3.0),
}


@pytest.fixture(scope="module")
def cppns(tmp_path_factory):
    """A config of 5-input, 1-output CPPNs and 120 genomes of varied structure and functions."""
    folder = tmp_path_factory.mktemp("es")
    config = make_config(folder, "cppn.cfg", num_inputs=5, num_outputs=1, pop_size=40,
                         activation_options=ALL_ACTIVATIONS, aggregation_options=ALL_AGGREGATIONS,
                         activation_mutate_rate=0.4, aggregation_mutate_rate=0.3, response_mutate_rate=0.3,
                         response_init_stdev=0.5)
    genomes = [g for seed, rounds in ((1, 2), (2, 6), (3, 12)) for g in evolved_genomes(config, seed, rounds)]
    return config, genomes


def as_dicts(found, inputs, outputs):
    """The C search's result as the reference gives it: hidden points, {(source, target): weight}."""
    points = points_of(inputs) + points_of(outputs) + points_of(found.hidden.reshape(-1, 2))
    links = {(points[a], points[b]): w for a, b, w in zip(found.sources.tolist(), found.targets.tolist(),
                                                          found.weights.tolist())}
    return set(points_of(found.hidden.reshape(-1, 2))), links


def assert_same_search(genomes, config, es: EvolvableSubstrate, threads=None):
    found = discover(compile_es_cppns(genomes, config), range(len(genomes)), es, threads)
    for genome, mine in zip(genomes, found):
        hidden, links = es_search(genome, config, es.inputs, es.outputs, es.params)
        got_hidden, got_links = as_dicts(mine, es.inputs, es.outputs)
        assert got_hidden == hidden, f"genome {genome.key}: hidden nodes differ"
        assert got_links.keys() == links.keys(), f"genome {genome.key}: links differ"
        assert_same_bits(list(got_links.values()), [links[k] for k in got_links], f"genome {genome.key} weights")
        ys = np.concatenate([es.inputs, es.outputs, mine.hidden])[:, 1]
        assert (ys[mine.sources] < ys[mine.targets]).all()   # every link goes upwards
    return found


def test_the_search_finds_the_references_nodes_links_and_weights_on_120_cppns(cppns):
    config, genomes = cppns
    found = assert_same_search(genomes, config, EvolvableSubstrate(*LINES, PARAMS["default"]), threads=2)
    assert sum(len(f.hidden) > 0 for f in found) > 20 and sum(len(f.weights) == 0 for f in found) > 0


@pytest.mark.parametrize("params", ["deep", "shallow", "loose"])
def test_other_parameters_and_a_grid_of_inputs(cppns, params):
    config, genomes = cppns
    picked = genomes[::12] if params == "deep" else genomes[::4]
    for inputs, outputs in (LINES, GRID):
        assert_same_search(picked, config, EvolvableSubstrate(inputs, outputs, PARAMS[params]))


def test_a_cppn_without_variance_finds_nothing_and_its_outputs_are_zero(cppns, tmp_path):
    config = cppns[0]
    constant = hand_genome(config, {0: ("sigmoid", "sum", 1.5, 1.0)}, [])   # the same weight everywhere
    es = EvolvableSubstrate(*LINES, ESParams(initial_depth=3, max_depth=4))   # depth limits reached
    assert es_search(constant, config, *LINES, es.params) == (set(), {})
    found = discovered(constant, config, es)
    assert len(found.hidden) == 0 and len(found.weights) == 0
    population = es_population([constant], config, es, threads=1)
    assert population.activate(np.ones((3, 4)), np.zeros(3, np.int64)).tolist() == [[0.0, 0.0]] * 3


def test_links_pruned_to_nothing_leave_every_output_at_zero(cppns):
    config, genomes = cppns
    es = EvolvableSubstrate(*LINES, ESParams(band_threshold=100.0))
    assert all(len(f.weights) == 0 for f in discover(compile_es_cppns(genomes[:10], config), range(10), es))
    out = es_population(genomes[:10], config, es).activate(np.random.default_rng(0).normal(size=(10, 4)))
    assert (out == 0.0).all()


def test_the_kernel_runs_the_discovered_networks_as_neat_python_does(cppns):
    config, genomes = cppns
    rng = np.random.default_rng(5)
    for inputs, outputs in (LINES, GRID):
        es = EvolvableSubstrate(inputs, outputs, ESParams(activation="tanh"))
        population = es_population(genomes, config, es, threads=2)
        index = rng.integers(0, len(genomes), 300)
        x = rng.normal(size=(300, len(inputs)))
        networks = [reference_network(*es_search(g, config, inputs, outputs, es.params), inputs, outputs, "tanh")
                    for g in genomes]
        reference = np.array([networks[g].activate(row) for g, row in zip(index.tolist(), x.tolist())])
        assert_same_bits(population.activate(x, index), reference, "outputs")


def test_threads_change_nothing(cppns):
    config, genomes = cppns
    es = EvolvableSubstrate(*GRID)
    tables = compile_es_cppns(genomes, config)
    one, two = discover(tables, range(len(genomes)), es, 1), discover(tables, range(len(genomes)), es, 2)
    for a, b in zip(one, two):
        assert a.hidden.tobytes() == b.hidden.tobytes() and a.weights.tobytes() == b.weights.tobytes()
    t1 = network_tables(one, es, list(range(len(genomes))))
    assert t1.num_genomes == len(genomes) and t1.stride >= es.num_inputs + es.num_outputs


TABLE_ARRAYS = ("genome_start", "node_slot", "node_act", "node_agg", "node_bias", "node_resp", "link_start", "link_src",
                "link_w")


@pytest.mark.parametrize("params", ["default", "deep", "loose"])
def test_the_population_tables_built_in_c_are_those_of_the_discovered_networks(cppns, params):
    """population_tables (search and tables in C, blocks of genomes on threads) against
    network_tables of discover's networks, and against the rule written out here: each node a link
    enters (inputs aside) by (y, key), its links by source."""
    config, genomes = cppns
    tables = compile_es_cppns(genomes, config)
    for inputs, outputs in (LINES, GRID):
        es = EvolvableSubstrate(inputs, outputs, PARAMS[params])
        found = discover(tables, range(len(genomes)), es, 1)
        expected = network_tables(found, es, tables.genome_keys)
        for threads in (1, 2, 3):
            got = population_tables(tables, es, threads)
            for name in TABLE_ARRAYS:
                assert getattr(got, name).tobytes() == getattr(expected, name).tobytes(), (name, threads)
            assert (got.stride, got.genome_keys) == (expected.stride, expected.genome_keys)
        ys = np.concatenate([inputs[:, 1], outputs[:, 1]])
        for g, d in enumerate(found):
            y = np.concatenate([ys, d.hidden[:, 1]])
            into = d.targets >= len(inputs)
            nodes = sorted(set(d.targets[into].tolist()), key=lambda n: (y[n], n))
            first, last = expected.genome_start[g], expected.genome_start[g + 1]
            assert expected.node_slot[first:last].tolist() == nodes
            for k, node in zip(range(first, last), nodes):
                links = sorted((s, w) for s, t, w in zip(d.sources.tolist(), d.targets.tolist(), d.weights.tolist())
                               if t == node)
                span = slice(expected.link_start[k], expected.link_start[k + 1])
                assert list(zip(expected.link_src[span].tolist(), expected.link_w[span].tolist())) == links


def test_a_network_whose_link_names_no_node_is_refused_in_one_line():
    from neatpar.nn.es_substrate import Discovered
    es = EvolvableSubstrate(*LINES)
    bad = Discovered(np.zeros((0, 2)), np.array([0]), np.array([9]), np.array([1.0]))
    with pytest.raises(ValueError, match="^network 0: a link names a node it does not have$"):
        network_tables([bad], es, [0])


@pytest.mark.parametrize("change, words", [
    (dict(num_inputs=7), "num_inputs = 5"),
    (dict(num_outputs=2), "num_outputs = 1"),
])
def test_a_config_the_search_cannot_read_is_refused_in_one_line(tmp_path, change, words):
    config = make_config(tmp_path, **{**dict(num_inputs=5, num_outputs=1), **change})
    with pytest.raises(ConfigError, match=words):
        compile_es_cppns(list(config.genome_type(k) for k in range(1)), config)


def test_an_es_hyperneat_run_on_the_ball_build_evolves_exports_plays_and_repeats(tmp_path):
    """network = es-hyperneat through neatpar evolve on the ball build: substrate.json holds the
    search's parameters and the winner's discovered network, which the search finds again from
    winner.json alone; winner.onnx in onnxruntime acts as the run's kernel; export and play read
    the run folder; the seeded run repeats on two env hosts and resumes from a checkpoint."""
    import onnx
    from neatpar.genome_file import load_genome
    from neatpar.nn.substrate_file import read_substrate
    from support.configs import ball_cfg
    from support.onnx_models import checked_session
    from support.runs import exports_plays_and_repeats_on_two_hosts, neatpar_cli, stats_rows

    config = ball_cfg(tmp_path, network="es-hyperneat", es_activation="tanh", es_band_threshold=0.1, num_inputs=5,
                      num_outputs=1, activation_options="tanh sin gauss")
    full, hosted = tmp_path / "full", tmp_path / "hosted"
    evolved = neatpar_cli("evolve", "--config", config, "--out", str(full))
    assert evolved.returncode == 0 and f"  {full / 'substrate.json'}\n" in evolved.stdout, evolved.stderr
    es = read_substrate(str(full / "substrate.json"))
    assert (es.num_inputs, es.num_outputs, es.params.band_threshold, es.activation) == (8, 2, 0.1, "tanh")
    winner = load_genome(str(full / "winner.json"))   # neat-python's defaults: no config needed
    again = discovered(winner, None, es)
    assert again.hidden.tolist() == es.winner.hidden.tolist() and again.weights.tolist() == es.winner.weights.tolist()

    kernel = es_population([winner], make_config(tmp_path, "cppn.cfg", num_inputs=5, num_outputs=1), es)
    observations = np.random.default_rng(1).normal(size=(6, 8)).astype(np.float32)
    session = checked_session(onnx.load(str(full / "winner.onnx")))
    actions = session.run(["continuous_actions"], {"obs_0": observations})[0]
    assert np.allclose(actions, np.clip(kernel.activate(observations, np.zeros(6, np.int64)), -1, 1), atol=1e-5)

    exports_plays_and_repeats_on_two_hosts(config, full, hosted, tmp_path / "brain.onnx")
    resumed = neatpar_cli("evolve", "--resume", str(full / "checkpoints" / "checkpoint-1.gz"), "--generations", "4")
    assert resumed.returncode == 0, resumed.stderr
    assert stats_rows(full)[:3] == stats_rows(hosted)[:3] and len(stats_rows(full)) == 4
