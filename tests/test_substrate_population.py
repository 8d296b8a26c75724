"""neatpar.nn.substrate_population (nn/substrate_population.py): every row's substrate network
against neat-python's FeedForwardNetwork of the reference weights (tests/support/hyperneat.py),
bit for bit; the population kernel's interface (in process, on a real spawn pool, inside a
MixedPopulation); phenotypes built once per key and freed with their populations; what 150
genomes on 84 x 84 x 3 images cost."""
import copy
import gc
import pickle
import tracemalloc
import weakref

import neat
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from support.configs import ALL_ACTIVATIONS, evolved_genomes, hand_genome, make_config
from support.hyperneat import assert_same_bits, cppn_config, reference_network, reference_outputs, reference_weights
from neatpar.nn import FeedForwardPopulation
from neatpar.nn.mixed import MixedPopulation
from neatpar.nn.substrate import IOShapes, Query, make_substrate
from neatpar.nn.substrate_population import SubstratePopulation
from neatpar.episodes.inference import InProcessInference, PoolInference

SENSORS = {"vector": ((6,),), "image": ((2, 3, 2),), "grid and vector": ((2, 2), (3,))}


@pytest.fixture(scope="module")
def configs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("cppn")
    made = {}

    def get(substrate):
        key = (substrate.cppn_inputs, substrate.query.outputs)
        if key not in made:
            made[key] = cppn_config(folder, substrate, f"{len(made)}.cfg", pop_size=6,
                                    activation_options="sigmoid gauss sin tanh abs identity",
                                    activation_mutate_rate=0.3)
        return made[key]
    return get


def reference_networks(genomes, config, substrate) -> list:
    return [reference_network(*reference_weights(g, config, substrate), substrate) for g in genomes]


def observations(rng, rows: int, width: int, scale: float, infinite: bool) -> np.ndarray:
    """Normal observations; with `infinite`, three of them +-inf."""
    x = rng.normal(scale=scale, size=(rows, width))
    if infinite:   # a link of weight 0.0 is absent: 0.0 * inf would be NaN, the network adds nothing
        x[rng.integers(0, rows, 3), rng.integers(0, width, 3)] = rng.choice([np.inf, -np.inf], 3)
    return x


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10_000), sensors=st.sampled_from(sorted(SENSORS)),
       hidden=st.sampled_from(["", "3", "2x2, 3", "19", "3x3, 8"]),     # 8 and more: the C loop's register blocks
       activation=st.sampled_from(ALL_ACTIVATIONS.split()), bias=st.booleans(), leo=st.booleans(),
       threshold=st.sampled_from([0.0, 0.2]), rounds=st.integers(0, 20), scale=st.sampled_from([0.5, 3.0, 1e3]),
       infinite=st.booleans())
def test_outputs_equal_neat_pythons_network_of_the_weights(configs, seed, sensors, hidden, activation, bias, leo,
                                                           threshold, rounds, scale, infinite):
    substrate = make_substrate(IOShapes(SENSORS[sensors], 2, (2,)), hidden, activation=activation,
                               query=Query(threshold=threshold, bias=bias, leo=leo))
    config = configs(substrate)
    genomes = evolved_genomes(config, seed, rounds)
    rng = np.random.default_rng(seed)
    index = rng.integers(0, len(genomes), 3 * len(genomes))      # rows share genomes
    x = observations(rng, len(index), substrate.num_inputs, scale, infinite)
    try:
        expected = reference_outputs(reference_networks(genomes, config, substrate), x, index)
    except OverflowError:   # neat-python raises where float ** n overflows: nothing to compare
        return
    out = SubstratePopulation.create(genomes, config, substrate).activate(x, index)
    assert_same_bits(out, expected, "outputs")


@pytest.fixture
def small(tmp_path):
    substrate = make_substrate(IOShapes(((2, 3, 1), (2,)), 1, (2,)), "4", query=Query(bias=True))
    config = cppn_config(tmp_path, substrate, pop_size=10, activation_options="sigmoid gauss sin tanh abs",
                         activation_mutate_rate=0.3)
    return substrate, config, evolved_genomes(config, 4, 10)


def test_it_has_the_population_kernels_interface(small):
    substrate, config, genomes = small
    population = SubstratePopulation.create([(g.key, g) for g in genomes], config, substrate)
    assert (population.num_inputs, population.num_outputs, len(population)) == (8, 3, 10)
    assert population.genome_keys == [g.key for g in genomes] and population.recurrent is False
    x = np.random.default_rng(0).normal(size=(10, 8))
    out = population.activate(x)                                   # row i: genome i
    rows = np.arange(100, 110)
    assert_same_bits(population.activate(x, np.arange(10), rows), out, "with state rows")
    population.reset(rows)
    assert population.activate(np.zeros((0, 8)), np.zeros(0, np.int64)).shape == (0, 3)
    expected = reference_outputs(reference_networks(genomes, config, substrate), x, range(10))
    assert_same_bits(out, expected, "outputs")


@pytest.mark.parametrize("call, message", [
    (lambda p: p.activate(np.zeros((2, 7))), r"inputs must be an \(agents, 8\) array"),
    (lambda p: p.activate(np.full((1, 8), np.nan)), "inputs hold NaN"),
    (lambda p: p.activate(np.zeros((11, 8))), "pass genome_index"),
    (lambda p: p.activate(np.zeros((2, 8)), np.array([0, 10])), "out of range"),
    (lambda p: p.activate(np.zeros((2, 8)), np.array([0.0, 1.0])), "must be an int array"),
])
def test_bad_calls_are_clear_errors(small, call, message):
    substrate, config, genomes = small
    with pytest.raises((ValueError, IndexError), match=message):
        call(SubstratePopulation.create(genomes, config, substrate))


def test_the_pool_and_a_mixed_population_give_the_same_outputs(small, tmp_path):
    """Workers receive the compiled CPPNs by value and build the phenotypes themselves; inside a
    MixedPopulation the substrate part keeps its own inputs and outputs."""
    substrate, config, genomes = small
    population = SubstratePopulation.create(genomes, config, substrate)
    rng = np.random.default_rng(1)
    local, pool = InProcessInference(), PoolInference(2)
    try:
        local.install(population)
        pool.install(population)
        for _ in range(5):
            rows = rng.permutation(40)[:25].astype(np.int64)
            obs, index, reset = rng.normal(size=(25, 8)), rng.integers(0, 10, 25), np.zeros(25, bool)
            assert_same_bits(pool.activate(obs, index, rows, reset), local.activate(obs, index, rows, reset), "pool")
    finally:
        pool.close()
    other_config = make_config(tmp_path, "ff.cfg", num_inputs=3, num_outputs=2)
    other = FeedForwardPopulation.create(evolved_genomes(other_config, 1, 3)[:4], other_config)
    mixed = MixedPopulation([population, other])
    index = np.array([0, 11, 3, 13])
    x = rng.normal(size=(4, 8))
    out = mixed.activate(x, index)
    assert_same_bits(out[[0, 2]], population.activate(x[[0, 2]], index[[0, 2]]), "substrate part")
    assert_same_bits(out[[1, 3], :2], other.activate(x[[1, 3], :3], index[[1, 3]] - 10), "feed-forward part")


def test_pickles_the_cppns_not_the_phenotypes(small):
    substrate, config, genomes = small
    population = SubstratePopulation.create(genomes, config, substrate)
    population.build()
    data = pickle.dumps(population)
    assert len(data) < 1000 * len(genomes)
    copied = pickle.loads(data)
    assert copied.substrate == substrate and copied.genome_keys == population.genome_keys
    x = np.random.default_rng(2).normal(size=(10, 8))
    assert_same_bits(copied.activate(x), population.activate(x), "unpickled")


def test_phenotypes_are_built_once_per_key_and_freed_with_their_populations(small):
    substrate, config, genomes = small
    first = SubstratePopulation.create(genomes[:6], config, substrate)
    first.build()
    elite = first._blocks[first.keys[0]]
    dropped = weakref.ref(first._blocks[first.keys[5]])
    twin = copy.deepcopy(genomes[0])
    twin.key = 12345                                               # the same CPPN under another key
    second = SubstratePopulation.create(genomes[:5] + [twin] + genomes[6:], config, substrate)
    assert second._blocks[second.keys[0]] is elite                 # found, not rebuilt
    assert second.keys[5] == second.keys[0] and second._blocks[second.keys[5]] is elite
    second.build()
    del first
    gc.collect()
    assert dropped() is None                                       # genome 5 is in no live population
    kept = weakref.ref(second._blocks[second.keys[9]])
    pickled = pickle.dumps(second)
    del second                                                     # as a pool worker drops last generation's
    gc.collect()
    assert kept() is not None                                      # the last population's stay until the next
    third = pickle.loads(pickled)
    assert third._blocks[third.keys[9]] is kept()
    SubstratePopulation.create(genomes[:1], config, substrate)     # the next population: only its own stay
    del third
    gc.collect()
    assert kept() is None


def test_what_150_genomes_on_84_by_84_by_3_images_cost(tmp_path):
    """2,710,312 bytes per phenotype (338,789 doubles), 406.5 MB for 150, built only for genomes
    asked for; the population pickles in 0.5 MB (the CPPNs in under 100 KB, the rest the input
    nodes' coordinates); the memory is given back."""
    substrate = make_substrate(IOShapes(((84, 84, 3),), 5), "16")
    assert substrate.parameters == 84 * 84 * 3 * 16 + 16 + 16 * 5 + 5 == 338_789
    config = cppn_config(tmp_path, substrate, pop_size=150)
    genomes = evolved_genomes(config, 1, 5)
    population = SubstratePopulation.create(genomes, config, substrate, threads=1)
    coordinates = sum(layer.nbytes for layer in substrate.layers)
    assert len(pickle.dumps(population.cppn)) < 100_000 and population.phenotype_bytes == 0
    assert len(pickle.dumps(population)) < coordinates + 100_000
    assert 150 * substrate.parameters * 8 == 406_546_800
    x, index = np.zeros((6, substrate.num_inputs)), np.array([0, 1, 2, 3, 0, 1])
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        population.activate(x, index)
        current, peak = tracemalloc.get_traced_memory()
        assert population.phenotype_bytes == 4 * substrate.parameters * 8
        assert current - before < 4 * substrate.parameters * 8 + 1_000_000
        # numpy's allocations (the C query's scratch, about 2 MB, is not traced)
        assert peak - before < 4 * substrate.parameters * 8 + 1_000_000
        del population
        gc.collect()
        SubstratePopulation.create(genomes[5:6], config, substrate)    # the next population drops them
        assert tracemalloc.get_traced_memory()[0] - before < 1_000_000
    finally:
        tracemalloc.stop()


def edge_values(rng) -> np.ndarray:
    """Finite values at and next to every clamp limit, very large and very small ones, signed zeros,
    infinities and random bit patterns (NaN left out: activate() refuses it)."""
    limits = np.array([0.0, 1e-7, 1.0, 2.4, 3.4, 12.0, 24.0, 60.0, 1e102, 5.65e102, 1.34e154, 1e308])
    limits = np.concatenate([limits, -limits])
    near = np.concatenate([limits, np.nextafter(limits, np.inf), np.nextafter(limits, -np.inf)])
    bits = rng.integers(-2**63, 2**63 - 1, 20_000, dtype=np.int64).view(np.float64)
    return np.concatenate([near, [-0.0, np.inf, -np.inf, 5e-324, -5e-324], bits[np.isfinite(bits)],
                           rng.normal(size=5_000) * rng.choice([0.01, 1.0, 30.0], 5_000), rng.uniform(-70, 70, 5_000)])


@pytest.mark.parametrize("activation", ALL_ACTIVATIONS.split())
def test_every_activation_of_the_substrate_is_neat_pythons_bit_for_bit(tmp_path, activation):
    """A one-link substrate of weight exactly 1.0 (a CPPN whose output is 1.0, threshold 0, max
    weight 1): each row's output is act(0.0 + 1.0 * (x * 1.0)), against neat-python's function on
    every edge value; where neat-python raises OverflowError (square, cube of huge values) the
    substrate gives the infinity of the right sign, as the population kernel does."""
    substrate = make_substrate(IOShapes(((1,),), 1), activation=activation, query=Query(threshold=0.0, max_weight=1.0))
    config = cppn_config(tmp_path, substrate)
    genome = hand_genome(config, {0: ("identity", "sum", 0.0, 1.0)}, [(-5, 0, 1.0, True)])
    population = SubstratePopulation.create([genome], config, substrate)
    assert population.phenotype(0).weights[0][0, 0] == 1.0
    x = edge_values(np.random.default_rng(5))
    out = population.activate(x[:, None], np.zeros(len(x), np.int64))[:, 0]
    function = neat.activations.ActivationFunctionSet().get(activation)
    expected = []
    for value in x.tolist():
        try:
            expected.append(function(0.0 + 1.0 * sum([value * 1.0])))
        except OverflowError:
            expected.append(np.copysign(np.inf, value) if activation == "cube" else np.inf)
    assert_same_bits(out, np.array(expected), activation)
