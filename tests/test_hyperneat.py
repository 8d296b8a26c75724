"""neatpar.nn.hyperneat (nn/hyperneat.py): the C query of CPPNs over a substrate's node pairs,
against HyperNEAT written from its definition (tests/support/hyperneat.py: neat-python's
FeedForwardNetwork.activate per pair, PUREPLES' threshold and scaling in Python), bit for bit."""
import copy

import neat
import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from support.configs import ALL_ACTIVATIONS, ALL_AGGREGATIONS, evolved_genomes, hand_genome
from support.hyperneat import assert_same_bits, cppn_config, reference_weights
from neatpar.errors import ConfigError
from neatpar.nn.hyperneat import (build_blocks, check_cppn_config, compile_cppns, cppn_keys, phenotype,
                                  phenotype_of)
from neatpar.nn.substrate import IOShapes, Query, make_substrate

HYPERNEAT_FUNCTIONS = "sigmoid gauss sin tanh abs identity"
FUNCTIONS = {
    "hyperneat": dict(activation_options=HYPERNEAT_FUNCTIONS, activation_mutate_rate=0.3),
    "all": dict(activation_options=ALL_ACTIVATIONS, aggregation_options=ALL_AGGREGATIONS,
                activation_mutate_rate=0.4, aggregation_mutate_rate=0.4, response_mutate_rate=0.3,
                response_init_stdev=0.5),
}
SENSORS = {
    "vector": ((5,),),
    "grid": ((3, 4),),
    "image": ((2, 3, 2),),              # channels: a 3-D substrate
    "grid and vector": ((2, 3, 1), (3,)),
}


@pytest.fixture(scope="module")
def configs(tmp_path_factory):
    """CPPN configs, one per (substrate inputs and outputs, functions), written once."""
    folder = tmp_path_factory.mktemp("cppn")
    made = {}

    def get(substrate, functions):
        key = (substrate.cppn_inputs, substrate.query.outputs, functions)
        if key not in made:
            made[key] = cppn_config(folder, substrate, f"{len(made)}.cfg", pop_size=8, **FUNCTIONS[functions])
        return made[key]
    return get


def scaled(genomes, factor: float) -> list:
    """Copies with every connection weight multiplied (large factors reach the functions' clamps)."""
    out = []
    for genome in genomes:
        genome = copy.deepcopy(genome)
        for gene in genome.connections.values():
            gene.weight *= factor
        out.append(genome)
    return out


def assert_weights_match(genomes, config, substrate, threads=None) -> None:
    blocks = build_blocks(compile_cppns(genomes, config, substrate), range(len(genomes)), substrate, threads)
    for genome, block in zip(genomes, blocks):
        try:
            weights, biases = reference_weights(genome, config, substrate)
        except OverflowError:   # neat-python raises where float ** n overflows: nothing to compare
            continue
        built = phenotype_of(block, substrate)
        for k, (w, b) in enumerate(zip(weights, biases)):
            assert_same_bits(built.weights[k], w, f"genome {genome.key}, layer {k} weights")
            assert_same_bits(built.biases[k], b, f"genome {genome.key}, layer {k} biases")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10_000), sensors=st.sampled_from(sorted(SENSORS)),
       hidden=st.sampled_from(["", "3", "2x2", "2x2, 3"]), actions=st.sampled_from([(1, ()), (2, (2,))]),
       threshold=st.sampled_from([0.0, 0.2, 0.5]), max_weight=st.sampled_from([5.0, 1.0, 30.0]),
       bias=st.booleans(), leo=st.booleans(), functions=st.sampled_from(sorted(FUNCTIONS)),
       rounds=st.integers(0, 25), factor=st.sampled_from([1.0, 1.0, 30.0, 1e3]))
def test_weights_equal_the_definition_on_random_cppns(configs, seed, sensors, hidden, actions, threshold, max_weight,
                                                      bias, leo, functions, rounds, factor):
    substrate = make_substrate(IOShapes(SENSORS[sensors], *actions), hidden,
                               query=Query(threshold, max_weight, bias, leo))
    config = configs(substrate, functions)
    genomes = scaled(evolved_genomes(config, seed, rounds), factor)
    assert_weights_match(genomes, config, substrate)


def test_weights_equal_the_definition_across_blocks_and_threads(tmp_path):
    """Pairs in several blocks of the C loop (99 x 7 = 693 pairs: blocks start inside a source's
    run of targets), genomes split over two threads."""
    substrate = make_substrate(IOShapes(((9, 11, 1),), 3), "7", query=Query(bias=True))
    config = cppn_config(tmp_path, substrate, pop_size=10, **FUNCTIONS["hyperneat"])
    genomes = evolved_genomes(config, 5, 20)
    assert_weights_match(genomes, config, substrate, threads=2)
    tables = compile_cppns(genomes, config, substrate)
    one, two = (build_blocks(tables, range(10), substrate, threads) for threads in (1, 2))
    for a, b in zip(one, two):
        assert_same_bits(a, b, "one thread against two")


def dependence_genome(config, activation: str, aggregation: str):
    """A 2-D CPPN (weight and bias outputs) whose hidden nodes depend on the source only (10), the
    target only (11), neither (12 reads only the 1.0 input, 14 has no links: act(bias + response * agg([]))), both (13);
    large weights reach the clamps."""
    f = (activation, aggregation)
    nodes = {0: (*f, 0.3, 1.0), 1: (*f, -0.2, 0.8), 10: (*f, -0.4, 1.3), 11: (*f, 0.2, -0.7), 12: (*f, 0.5, 0.9),
             13: (*f, 0.1, 1.1), 14: (*f, 0.0, 1.0)}
    links = [(-1, 10, 2.5, True), (-2, 10, -40.0, True), (-5, 10, 0.3, True),      # x_s, y_s, 1.0
             (-3, 11, 1.7, True), (-4, 11, 25.0, True),                           # x_t, y_t
             (-5, 12, 1.2, True),                                                 # 1.0
             (10, 13, 0.8, True), (-3, 13, -3.0, True), (12, 13, 0.6, True), (14, 13, 2.0, True),
             (13, 0, 1.4, True), (10, 0, -0.9, True), (11, 0, 0.7, True), (12, 0, 0.5, True), (-2, 0, 6.0, True),
             (11, 1, 1.5, True), (13, 1, -2.0, True), (-4, 1, 0.9, True)]                 # the bias output
    return hand_genome(config, nodes, links)


@pytest.mark.parametrize("activation", ALL_ACTIVATIONS.split())
def test_every_function_at_every_dependence_is_exact(tmp_path, activation):
    """Each built-in activation with each aggregation in nodes computed once per source, once per
    target, once per genome and per pair (the C query's four cases) equals the definition."""
    substrate = make_substrate(IOShapes(((3, 5),), 2), "4", query=Query(bias=True))
    config = cppn_config(tmp_path, substrate, activation_options=ALL_ACTIVATIONS, aggregation_options=ALL_AGGREGATIONS)
    genomes = [dependence_genome(config, activation, aggregation) for aggregation in ALL_AGGREGATIONS.split()]
    for key, genome in enumerate(genomes):
        genome.key = key
    assert_weights_match(genomes, config, substrate)


def output_genome(config, bias_weight: float, chain: tuple = ()):
    """A 2-D CPPN whose weight output is identity(0.0 + 1.0 * (1.0 * bias_weight)) (o exactly
    bias_weight), or fed through a chain of identity nodes with the given weights."""
    nodes = {0: ("identity", "sum", 0.0, 1.0)}
    links = [(-5, 0, bias_weight, True)] if not chain else []
    previous = -5
    for n, (node, weights) in enumerate(chain):
        nodes[node] = ("identity", "sum", 0.0, 1.0)
        links += [(previous, node, w, True) for w in weights]
        previous = node
    if chain:
        links.append((previous, 0, 1.0, True))
    return hand_genome(config, nodes, links)


def weight_of(genome, config, substrate) -> float:
    block = build_blocks(compile_cppns([genome], config, substrate), [0], substrate)[0]
    return float(phenotype_of(block, substrate).weights[0][0, 0])


def test_query_maps_outputs_as_pureples(tmp_path):
    """o = +-threshold gives no link, the next float above gives a tiny one, larger outputs are
    (o -+ threshold) / (1 - threshold) * max_weight; +inf gives an infinite weight and NaN none."""
    substrate = make_substrate(IOShapes(((1,),), 1), query=Query(0.2, 5.0))
    config = cppn_config(tmp_path, substrate)
    above = float(np.nextafter(0.2, 1.0))
    assert weight_of(output_genome(config, 0.2), config, substrate) == 0.0
    assert weight_of(output_genome(config, -0.2), config, substrate) == 0.0
    assert weight_of(output_genome(config, above), config, substrate) == (above - 0.2) / (1.0 - 0.2) * 5.0 > 0.0
    assert weight_of(output_genome(config, 0.9), config, substrate) == (0.9 - 0.2) / (1.0 - 0.2) * 5.0
    assert weight_of(output_genome(config, -0.9), config, substrate) == (-0.9 + 0.2) / (1.0 - 0.2) * 5.0
    infinite = output_genome(config, 0.0, chain=((5, [1e308]), (6, [10.0])))
    assert weight_of(infinite, config, substrate) == np.inf
    identity = ("identity", "sum", 0.0, 1.0)
    nan = hand_genome(config, {0: identity, 5: identity, 6: identity, 7: identity},   # 1e309 - 1e309
                      [(-5, 5, 1e308, True), (-5, 7, 1e308, True), (5, 6, 10.0, True), (7, 6, -10.0, True),
                       (6, 0, 1.0, True)])
    assert weight_of(nan, config, substrate) == 0.0


def test_link_expression_gates_links_where_its_output_is_not_above_zero(tmp_path):
    substrate = make_substrate(IOShapes(((1,),), 1), query=Query(leo=True))
    config = cppn_config(tmp_path, substrate)
    for gate, expressed in ((0.0, False), (-0.0, False), (-1.0, False), (5e-324, True), (0.5, True)):
        genome = hand_genome(config, {0: ("identity", "sum", 0.0, 1.0), 1: ("identity", "sum", 0.0, 1.0)},
                             [(-5, 0, 0.9, True), (-5, 1, gate, True)])
        assert (weight_of(genome, config, substrate) != 0.0) == expressed, gate


def test_a_genome_without_its_config_gets_neat_pythons_defaults(tmp_path):
    """phenotype(genome, None, substrate): a genome read from winner.json alone."""
    substrate = make_substrate(IOShapes(((2, 2, 2),), 2), "3", query=Query(bias=True))
    config = cppn_config(tmp_path, substrate, **FUNCTIONS["all"])
    genome = evolved_genomes(config, 3, 15)[0]
    with_config, alone = phenotype(genome, config, substrate), phenotype(genome, None, substrate)
    for a, b in zip(with_config.weights + with_config.biases, alone.weights + alone.biases):
        assert_same_bits(b, a, "without the config")


def test_keys_name_the_cppn_and_the_substrate_not_the_genome(tmp_path):
    """Equal compiled CPPNs share a key whatever their genome keys; any parameter the CPPN computes
    with, or the coordinates, change it; the substrate's activation (not in the weights) does not."""
    substrate = make_substrate(IOShapes(((3,),), 1), "2")
    config = cppn_config(tmp_path, substrate)
    genome = evolved_genomes(config, 1, 5)[0]
    twin, changed = copy.deepcopy(genome), copy.deepcopy(genome)
    twin.key = 999
    changed.nodes[0].bias += 1e-12
    keys = cppn_keys(compile_cppns([genome, twin, changed], config, substrate), substrate)
    assert keys[0] == keys[1] != keys[2]
    other = make_substrate(IOShapes(((3,),), 1), "3")
    assert cppn_keys(compile_cppns([genome], config, other), other)[0] != keys[0]
    sigmoid = make_substrate(IOShapes(((3,),), 1), "2", activation="sigmoid")   # weights do not depend on it
    assert cppn_keys(compile_cppns([genome], config, sigmoid), sigmoid)[0] == keys[0]


def test_configs_that_do_not_fit_are_one_line_errors_naming_the_key(tmp_path):
    flat = make_substrate(IOShapes(((4,),), 1))
    deep = make_substrate(IOShapes(((2, 2, 3),), 1), query=Query(bias=True, leo=True))
    with pytest.raises(ConfigError, match=r"3-D, so its CPPN reads 7 inputs .*num_inputs = 7 \(it is 5\)"):
        check_cppn_config(cppn_config(tmp_path, flat, "a.cfg"), deep)
    with pytest.raises(ConfigError, match=r"reads 3 CPPN output\(s\) \(weight, bias, link expression\): set "
                                          r"\[DefaultGenome\] num_outputs = 3 \(it is 1\)"):
        check_cppn_config(cppn_config(tmp_path, make_substrate(IOShapes(((2, 2, 3),), 1)), "b.cfg"), deep)
    recurrent = cppn_config(tmp_path, flat, "c.cfg", feed_forward="false")
    with pytest.raises(ConfigError, match="feed_forward = true"):
        check_cppn_config(recurrent, flat)
    custom = cppn_config(tmp_path, flat, "d.cfg")
    custom.genome_config.add_activation("double", lambda z: 2.0 * z)
    genome = hand_genome(custom, {0: ("double", "sum", 0.0, 1.0)}, [(-1, 0, 1.0, True)])
    with pytest.raises(ConfigError, match="built-in activations and aggregations only"):
        compile_cppns([genome], custom, flat)


def test_neat_python_is_the_reference_itself(tmp_path):
    """The reference's CPPN is neat-python's own network: one pair queried by hand."""
    substrate = make_substrate(IOShapes(((2,),), 1))
    config = cppn_config(tmp_path, substrate)
    genome = evolved_genomes(config, 2, 3)[0]
    net = neat.nn.FeedForwardNetwork.create(genome, config)
    source, target = substrate.layers[0][1].tolist(), substrate.layers[1][0].tolist()
    o = net.activate(source + target + [1.0])[0]
    expected = 0.0 if abs(o) <= 0.2 else (o - 0.2 if o > 0 else o + 0.2) / (1.0 - 0.2) * 5.0
    assert phenotype(genome, config, substrate).weights[0][1, 0] == expected
