"""The population kernel (neatpar.nn, nn/kernel.py) against neat-python's own networks."""
import math
import pickle
import sys

import neat
import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from neatpar.nn import FeedForwardPopulation, RecurrentPopulation
from support.configs import ALL_ACTIVATIONS, ALL_AGGREGATIONS, evolved_genomes, hand_genome, make_config, write_config

BASIC = dict(activation_options="sigmoid tanh relu", activation_mutate_rate=0.3)
ACTIVATIONS = ALL_ACTIVATIONS.split()
MIXED = dict(activation_options=ALL_ACTIVATIONS, aggregation_options=ALL_AGGREGATIONS,
             activation_mutate_rate=0.4, aggregation_mutate_rate=0.4)


@pytest.fixture(scope="module")
def configs(tmp_path_factory):
    """Config variants, built once: (functions, feed_forward, start) -> neat.Config."""
    folder = tmp_path_factory.mktemp("configs")
    made = {}

    def get(functions, feed_forward, start):
        key = (functions, feed_forward, start)
        if key not in made:
            options = dict(BASIC if functions == "basic" else MIXED)
            options.update(feed_forward=str(feed_forward).lower(), response_mutate_rate=0.3,
                           response_init_stdev=0.3)
            if start == "unconnected":
                options.update(initial_connection="unconnected", num_hidden=2)
            elif start == "partial":
                options.update(initial_connection="partial_direct 0.5", num_hidden=1)
            made[key] = make_config(folder, f"{len(made)}.cfg", **options)
        return made[key]
    return get


# The references hand neat-python lists of Python floats (`.tolist()`), as its networks are meant
# to be used: numpy.float64 items would make the builtin sum() (3.12 and later) leave its
# compensated float path for a plain one, which the kernel does not reproduce.

def ff_reference(genomes, config, x, index):
    nets = [neat.nn.FeedForwardNetwork.create(g, config) for g in genomes]
    return np.array([nets[g].activate(row) for g, row in zip(index, np.asarray(x, np.float64).tolist())])


def recurrent_reference(genomes, config, steps, index):
    nets = [neat.nn.RecurrentNetwork.create(genomes[g], config) for g in index]  # one per row
    return [np.array([net.activate(row) for net, row in zip(nets, x.tolist())]) for x in steps]


def assert_identical(out, ref):
    """Bit-identical (0.0 and -0.0 differ), NaN exactly where neat-python gives NaN."""
    assert out.shape == ref.shape
    nan = np.isnan(ref)
    assert np.array_equal(np.isnan(out), nan)
    assert np.array_equal(out[~nan].view(np.int64), ref[~nan].view(np.int64)), \
        f"{int((out[~nan] != ref[~nan]).sum())} outputs differ from neat-python's"


def inputs_for(rng, rows, width, scale):
    return rng.normal(scale=scale, size=(rows, width))


parity_settings = settings(max_examples=40, deadline=None,
                           suppress_health_check=[HealthCheck.function_scoped_fixture])


@parity_settings
@given(seed=st.integers(0, 10_000), functions=st.sampled_from(["basic", "mixed"]),
       feed_forward=st.booleans(), start=st.sampled_from(["full", "partial", "unconnected"]),
       rounds=st.integers(0, 30), scale=st.sampled_from([0.5, 3.0, 1e3]), shared=st.booleans())
def test_feed_forward_matches_neat_python(configs, seed, functions, feed_forward, start, rounds, scale, shared):
    config = configs(functions, feed_forward, start)
    genomes = evolved_genomes(config, seed, rounds)
    rng = np.random.default_rng(seed)
    rows = 2 * len(genomes) if shared else len(genomes)
    index = rng.integers(0, len(genomes), rows) if shared else np.arange(rows)
    x = inputs_for(rng, rows, config.genome_config.num_inputs, scale)
    try:
        ref = ff_reference(genomes, config, x, index)
    except OverflowError:  # neat-python raises where float ** n overflows; nothing to compare
        assume(False)
    out = FeedForwardPopulation.create(genomes, config).activate(x, index if shared else None)
    assert_identical(out, ref)  # the same C operations in the same order: bit-identical


@parity_settings
@given(seed=st.integers(0, 10_000), functions=st.sampled_from(["basic", "mixed"]),
       start=st.sampled_from(["full", "partial", "unconnected"]), rounds=st.integers(0, 30),
       scale=st.sampled_from([0.5, 3.0]), steps=st.integers(1, 6))
def test_recurrent_matches_neat_python_over_sequences(configs, seed, functions, start, rounds, scale, steps):
    config = configs(functions, False, start)
    genomes = evolved_genomes(config, seed, rounds)
    rng = np.random.default_rng(seed)
    index = rng.integers(0, len(genomes), len(genomes) + 5)
    sequence = [inputs_for(rng, len(index), config.genome_config.num_inputs, scale) for _ in range(steps)]
    try:
        refs = recurrent_reference(genomes, config, sequence, index)
    except OverflowError:
        assume(False)
    population = RecurrentPopulation.create(genomes, config)
    for x, ref in zip(sequence, refs):
        assert_identical(population.activate(x, index), ref)


# ---------------------------------------------------------------- hand-made edge cases

@pytest.fixture(scope="module")
def edge_config(tmp_path_factory):
    return make_config(tmp_path_factory.mktemp("edge"), num_inputs=3, num_outputs=2,
                       activation_options=ALL_ACTIVATIONS, aggregation_options=ALL_AGGREGATIONS)


EDGE_INPUTS = np.array([[0.0, 0.0, 0.0], [1.0, -2.0, 0.5], [-1e6, 1e6, 3.0], [1e-300, -1e-300, 0.0],
                        [-0.0, 0.0, -0.0], [40.0, -40.0, 1e-8], [0.2, 0.2, 0.2]])


@pytest.mark.parametrize("activation", ALL_ACTIVATIONS.split())
@pytest.mark.parametrize("aggregation", ALL_AGGREGATIONS.split())
def test_every_function_pair_exactly(edge_config, activation, aggregation):
    genome = hand_genome(edge_config, {
        0: (activation, aggregation, 0.3, -1.7),
        1: (activation, aggregation, 0.0, 1.0),      # fed only by a hidden node
        5: (activation, aggregation, -0.5, 0.9),     # hidden, four inputs (median: even count)
        6: (activation, aggregation, 1.0, 1.0),      # no input reaches it: a bias neuron
    }, [(-1, 0, 1.5, True), (-2, 0, -0.7, True), (-3, 0, 2.0, False), (-1, 5, 0.3, True),
        (-2, 5, -1.1, True), (-3, 5, 0.8, True), (6, 5, 0.4, True), (5, 1, 2.5, True),
        (6, 0, 0.1, True)], key=1)
    try:
        ref = ff_reference([genome], edge_config, EDGE_INPUTS, [0] * len(EDGE_INPUTS))
    except OverflowError:
        pytest.skip("neat-python itself overflows on these inputs")
    out = FeedForwardPopulation.create([genome], edge_config).activate(EDGE_INPUTS, np.zeros(7, dtype=int))
    assert np.array_equal(out, ref, equal_nan=True)


# ---------------------------------------------------------------- every function alone, bit for bit

@pytest.fixture(scope="module")
def single_config(tmp_path_factory):
    return make_config(tmp_path_factory.mktemp("single"), num_inputs=8, num_outputs=1,
                       activation_options=ALL_ACTIVATIONS, aggregation_options=ALL_AGGREGATIONS)


def kernel_values(population, inputs, index) -> np.ndarray:
    """Output 0 of each row from the C kernel, called as activate() calls it but with NaN allowed
    among the inputs (activate() refuses NaN from users; inside a network it occurs)."""
    assert not population.tables.uses_custom
    values = np.zeros((len(inputs), population.tables.stride))
    values[:, :population.num_inputs] = inputs
    population._run(np.ascontiguousarray(index, dtype=np.int64), values, values)
    return values[:, population.num_inputs]


def assert_bits_equal(out: np.ndarray, ref: np.ndarray, inputs, what: str) -> None:
    """Equal to the last bit (so 0.0 and -0.0 differ), NaN exactly where neat-python gives NaN."""
    nan = np.isnan(ref)
    same = (out.view(np.int64) == ref.view(np.int64)) | (nan & np.isnan(out))
    if not same.all():
        i = int(np.argmin(same))
        raise AssertionError(f"{what}: {(~same).sum()} of {len(same)} differ; first: input {inputs[i]!r} gives "
                             f"{out[i]!r}, neat-python {ref[i]!r}")


def activation_inputs(rng, n: int = 100_000) -> np.ndarray:
    """Ordinary values at several scales, integers, values at and next to every clamp limit and
    threshold, very large (past the overflow of z ** 2 and z ** 3), very small and subnormal values,
    +-0.0, +-inf, NaN, and random bit patterns (every exponent)."""
    limits = np.array([0.0, 1e-7, 1.0, 3.4, 12.0, 24.0, 60.0, 1e102, 5.65e102, 1.34e154, 1e308])
    limits = np.concatenate([limits, -limits])
    near = np.concatenate([limits, np.nextafter(limits, np.inf), np.nextafter(limits, -np.inf),
                           limits * (1 + rng.uniform(-1e-6, 1e-6, limits.size))])
    specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, -5e-324, 2.2250738585072014e-308,
                         np.finfo(np.float64).max, -np.finfo(np.float64).max, -1.523386358242358])
    parts = [
        specials, near, rng.choice(near, 10_000),
        rng.normal(size=10_000) * rng.choice([0.01, 0.3, 1.0, 5.0, 30.0], 10_000),
        rng.uniform(-70.0, 70.0, 10_000),
        rng.integers(-100, 101, 5_000).astype(np.float64),
        rng.choice([-1.0, 1.0], 8_000) * 10.0 ** rng.uniform(8, 308, 8_000),
        rng.choice([-1.0, 1.0], 8_000) * 10.0 ** rng.uniform(-307, -8, 8_000),
        rng.choice([-1.0, 1.0], 4_000) * rng.integers(1, 2**52, 4_000) * 5e-324,
        rng.integers(-2**63, 2**63 - 1, 15_000, dtype=np.int64).view(np.float64),
    ]
    x = np.concatenate(parts)
    return np.concatenate([x, rng.normal(size=n - x.size)])


def test_every_activation_alone_is_bit_identical(single_config):
    """Each built-in activation on 100,000 inputs, all in one kernel call, against neat-python's
    own function. The node is act(-0.0 + 1.0 * max([x * 1.0])), which hands x over unchanged,
    -0.0 and NaN included. Where neat-python raises OverflowError (z ** 2, z ** 3 of huge z), the
    kernel returns the infinity of the right sign."""
    x = activation_inputs(np.random.default_rng(12))
    genomes = [hand_genome(single_config, {0: (name, "max", -0.0, 1.0)}, [(-1, 0, 1.0, True)], key=k)
               for k, name in enumerate(ACTIVATIONS)]
    population = FeedForwardPopulation.create(genomes, single_config)
    inputs = np.zeros((len(ACTIVATIONS) * len(x), 8))
    inputs[:, 0] = np.tile(x, len(ACTIVATIONS))
    out = kernel_values(population, inputs, np.repeat(np.arange(len(ACTIVATIONS)), len(x)))
    for name, got in zip(ACTIVATIONS, out.reshape(len(ACTIVATIONS), -1)):  # identity: z is x itself
        function = getattr(neat.activations, f"{name}_activation")
        expected = np.empty_like(x)
        for i, z in enumerate(x.tolist()):
            try:
                expected[i] = function(z)
            except OverflowError:
                expected[i] = math.copysign(math.inf, z) if name == "cube" else math.inf
        assert_bits_equal(got, expected, x, name)


def aggregation_lists(rng, rows: int) -> np.ndarray:
    """Rows of 8 values; a row draws from a handful of values (so duplicates are common), among
    them +-0.0, +-1, infinities, NaN, huge and subnormal values and random ones."""
    pool = np.array([0.0, -0.0, 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, np.inf, -np.inf, np.nan, 1e300, -1e300,
                     5e-324, -5e-324])
    choices = np.where(rng.random((rows, 4)) < 0.5, rng.choice(pool, (rows, 4)), rng.normal(size=(rows, 4)))
    return choices[np.arange(rows)[:, None], rng.integers(0, 4, (rows, 8))]


def test_every_aggregation_alone_is_bit_identical(single_config):
    """Each built-in aggregation of lists of length 0 to 8, all in one kernel call, against
    neat-python's own function. The node is identity(-0.0 + 1.0 * agg([x_i * 1.0])), which hands
    the aggregate over unchanged."""
    rng = np.random.default_rng(13)
    rows = 2_500
    cases = [(name, k) for name in ALL_AGGREGATIONS.split() for k in range(9)]
    genomes = [hand_genome(single_config, {0: ("identity", name, -0.0, 1.0)}, [(-i - 1, 0, 1.0, True) for i in range(k)], key=g) for g, (name, k) in enumerate(cases)]
    population = FeedForwardPopulation.create(genomes, single_config)
    lists = aggregation_lists(rng, rows * len(cases))
    out = kernel_values(population, lists, np.repeat(np.arange(len(cases)), rows))
    for g, (name, k) in enumerate(cases):
        function = getattr(neat.aggregations, f"{name}_aggregation")
        block = lists[g * rows:(g + 1) * rows]
        expected = np.array([-0.0 + 1.0 * function([v * 1.0 for v in row[:k]]) for row in block.tolist()])
        assert_bits_equal(out[g * rows:(g + 1) * rows], expected, block[:, :k], f"{name} of {k}")


# Lists on which the two rules of the builtin sum() of floats differ (left to right up to Python
# 3.11, Neumaier's compensation from 3.12), and the edges of the compensation: signed zeros,
# infinities and NaN (a compensation that is not finite is never added), a compensation that
# overflows while the sum does, huge and tiny terms.
SUM_RULE_LISTS = [
    [1e16, 1.0, -1e16], [0.1] * 10, [1.0, 1e100, 1.0, -1e100], [2.0 ** 53, 1.0, 1.0], [1e-16, 1.0, -1.0],
    [0.1, 0.2, 0.3, -0.6], [-0.5, 1e16, 3.0, -1e16, -0.25], [5e-324, 1.0, -1.0, 5e-324],
    [-0.0], [-0.0, -0.0], [0.0, -0.0], [-0.0, 1e16, 1.0, -1e16, -0.0],
    [math.inf, 1.0], [1.0, math.inf, 1e16, -1e16], [math.inf, -math.inf, 1.0], [math.nan, 1e16, 1.0, -1e16],
    [1e16, 1.0, math.nan], [-math.inf, 0.1, 0.1, 0.1],
    [1e308, 1e308], [1e308, 1e308, -1e308], [-1.7e308, -1.7e308, 1.0], [1e308, 1e292, -1e308, 1.0],
]


def left_to_right_sum(values: list) -> float:
    """sum() of floats up to Python 3.11: 0 + x0, then each term in turn."""
    total = 0.0
    for x in values:
        total += x
    return total


def compensated_sum(values: list) -> float:
    """sum() of floats from Python 3.12 (Python/bltinmodule.c): Neumaier's compensation, added at
    the end where it is finite and not zero."""
    if not values:
        return 0.0
    total, compensation = 0.0 + values[0], 0.0
    for x in values[1:]:
        t = total + x
        compensation += (total - t) + x if abs(total) >= abs(x) else (x - t) + total
        total = t
    return total + compensation if compensation != 0.0 and math.isfinite(compensation) else total


def bits(value: float) -> int:
    return int(np.float64(value).view(np.int64))


def test_sum_and_mean_follow_the_running_pythons_sum_of_floats(tmp_path):
    """The kernel's sum, mean and median (mean of at most 2) against neat-python's on lists of
    Python floats where 3.11's and 3.12's sum() differ: bit for bit, whichever Python runs. The
    lists are checked to tell the two rules apart, and this Python's sum() to be the rule its
    version has."""
    rule = compensated_sum if sys.version_info >= (3, 12) else left_to_right_sum
    assert sum(bits(left_to_right_sum(v)) != bits(compensated_sum(v)) for v in SUM_RULE_LISTS) >= 8
    assert [bits(sum(v)) for v in SUM_RULE_LISTS] == [bits(rule(v)) for v in SUM_RULE_LISTS]
    width = max(map(len, SUM_RULE_LISTS))
    config = make_config(tmp_path, num_inputs=width, num_outputs=1, aggregation_options=ALL_AGGREGATIONS)
    cases = [(name, v) for name in ("sum", "mean", "median") for v in SUM_RULE_LISTS
             if name != "median" or len(v) <= 2]
    genomes = [hand_genome(config, {0: ("identity", name, -0.0, 1.0)}, [(-i - 1, 0, 1.0, True) for i in range(len(v))],
                           key=g) for g, (name, v) in enumerate(cases)]
    inputs = np.zeros((len(cases), width))
    for row, (_, v) in zip(inputs, cases):
        row[:len(v)] = v
    out = kernel_values(FeedForwardPopulation.create(genomes, config), inputs, np.arange(len(cases)))
    for got, (name, v) in zip(out.tolist(), cases):
        function = getattr(neat.aggregations, f"{name}_aggregation")
        expected = -0.0 + 1.0 * function([x * 1.0 for x in v])   # what the network node computes
        assert bits(got) == bits(expected) or (math.isnan(got) and math.isnan(expected)), \
            f"{name}({v}): kernel {got!r}, neat-python {expected!r} (Python {sys.version.split()[0]})"


def test_empty_aggregation_rules_and_unreached_outputs(edge_config):
    # Output 0 has only a disabled link (a bias neuron: act(bias + response * agg([]))); output 1
    # is fed by a node on a cycle, which neat-python's feed-forward network never evaluates (0.0).
    results = {}
    for aggregation in ALL_AGGREGATIONS.split():
        genome = hand_genome(edge_config, {
            0: ("identity", aggregation, 0.25, 2.0), 1: ("identity", "sum", 0.0, 1.0),
            7: ("identity", "sum", 0.0, 1.0), 8: ("identity", "sum", 0.0, 1.0),
        }, [(-1, 0, 1.0, False), (7, 8, 1.0, True), (8, 7, 1.0, True), (8, 1, 1.0, True)], key=1)
        out = FeedForwardPopulation.create([genome], edge_config).activate([[1.0, 2.0, 3.0]])
        assert np.array_equal(out, ff_reference([genome], edge_config, [[1.0, 2.0, 3.0]], [0]))
        results[aggregation] = out[0, 0]
        assert out[0, 1] == 0.0
    assert results["product"] == 0.25 + 2.0 and results["sum"] == 0.25 and results["max"] == 0.25


def test_inv_zero_and_log_floor(edge_config):
    genome = hand_genome(edge_config, {0: ("inv", "sum", 0.0, 1.0), 1: ("log", "sum", 0.0, 1.0)}, [(-1, 0, 1.0, True), (-1, 1, 1.0, True)], key=1)
    out = FeedForwardPopulation.create([genome], edge_config).activate([[0.0, 0, 0], [-0.0, 0, 0], [-5.0, 0, 0]],
                                                                        np.zeros(3, dtype=int))
    assert out[0, 0] == 0.0 and out[1, 0] == 0.0 and out[2, 0] == -0.2
    assert out[0, 1] == math.log(1e-7) and out[2, 1] == math.log(1e-7)


def test_custom_functions_registered_on_the_config_take_the_python_path(tmp_path):
    config = make_config(tmp_path, activation_options="sigmoid twice", aggregation_options="sum first",
                         activation_mutate_rate=0.5, aggregation_mutate_rate=0.5)
    config.genome_config.add_activation("twice", twice)
    config.genome_config.add_aggregation("first", first)
    genomes = evolved_genomes(config, 4, 10)
    for g in genomes:  # make sure both custom functions are in use
        next(iter(g.nodes.values())).activation = "twice"
        next(iter(g.nodes.values())).aggregation = "first"
    population = FeedForwardPopulation.create(genomes, config)
    assert population.tables.uses_custom
    x = np.random.default_rng(0).normal(size=(len(genomes), 3))
    assert np.array_equal(population.activate(x), ff_reference(genomes, config, x, range(len(genomes))))
    assert pickle.loads(pickle.dumps(population)).activate(x).tolist() == population.activate(x).tolist()


def twice(z):
    return 2.0 * z


def first(values):
    return values[0] if values else 0.0


def test_a_builtin_name_redefined_by_the_user_is_not_taken_for_the_builtin(tmp_path):
    config = make_config(tmp_path)
    config.genome_config.add_activation("sigmoid", twice)
    genomes = evolved_genomes(config, 1, 3)
    population = FeedForwardPopulation.create(genomes, config)
    x = np.ones((len(genomes), 3))
    assert population.tables.uses_custom
    assert np.array_equal(population.activate(x), ff_reference(genomes, config, x, range(len(genomes))))


# ---------------------------------------------------------------- API behaviour

@pytest.fixture
def small(tmp_path):
    config = make_config(tmp_path, feed_forward="false")
    return config, evolved_genomes(config, 2, 15)


def test_accepts_key_genome_pairs(small):
    config, genomes = small
    pairs = [(g.key, g) for g in genomes]
    x = np.ones((len(genomes), 3))
    assert np.array_equal(FeedForwardPopulation.create(pairs, config).activate(x),
                          FeedForwardPopulation.create(genomes, config).activate(x))
    assert FeedForwardPopulation.create(pairs, config).genome_keys == [g.key for g in genomes]


def test_bad_inputs_are_clear_errors(small):
    config, genomes = small
    population = FeedForwardPopulation.create(genomes, config)
    with pytest.raises(ValueError, match=r"\(agents, 3\) array; got shape \(20, 2\)"):
        population.activate(np.ones((20, 2)))
    x = np.ones((20, 3))
    x[4, 1] = np.nan
    with pytest.raises(ValueError, match="NaN .*row 4, input 1"):
        population.activate(x)
    with pytest.raises(IndexError, match=r"genome_index\[3\] = 20 is out of range for a population of 20"):
        population.activate(np.ones((4, 3)), np.array([0, 1, 2, 20]))
    with pytest.raises(ValueError, match="pass genome_index"):
        population.activate(np.ones((21, 3)))
    with pytest.raises(ValueError, match="int array"):
        population.activate(np.ones((2, 3)), np.array([0.0, 1.0]))


def test_pickles_cheaply_as_plain_arrays(small):
    config, genomes = small
    for cls in (FeedForwardPopulation, RecurrentPopulation):
        population = cls.create(genomes, config)
        data = pickle.dumps(population)
        assert b"neat.genome" not in data and b"neat.activations" not in data
        assert len(data) < 64 * len(genomes) * (1 + max(population.tables.link_counts))
        x = np.random.default_rng(1).normal(size=(len(genomes), 3))
        assert np.array_equal(pickle.loads(data).activate(x), cls.create(genomes, config).activate(x))


def test_recurrent_reset_clears_only_the_given_rows(small):
    config, genomes = small
    population = RecurrentPopulation.create(genomes, config)
    index = np.arange(len(genomes))
    x = np.random.default_rng(3).normal(size=(len(genomes), 3))
    first_step = population.activate(x, index)
    population.activate(x, index)
    population.reset([0, 5])
    third = population.activate(x, index)
    assert np.array_equal(third[[0, 5]], first_step[[0, 5]])
    fresh = RecurrentPopulation.create(genomes, config)
    for _ in range(3):
        expected = fresh.activate(x, index)
    assert np.array_equal(third[1:5], expected[1:5])


def test_recurrent_row_given_a_new_genome_starts_from_a_clean_state(small):
    config, genomes = small
    population = RecurrentPopulation.create(genomes, config)
    x = np.random.default_rng(4).normal(size=(2, 3))
    for _ in range(3):
        population.activate(x, np.array([0, 1]))
    swapped = population.activate(x, np.array([0, 7]))
    clean = RecurrentPopulation.create(genomes, config).activate(x, np.array([0, 7]))
    assert np.array_equal(swapped[1], clean[1])


def test_recurrent_rows_that_skip_a_step_keep_their_state(small):
    config, genomes = small
    index = np.arange(4)
    x = np.random.default_rng(5).normal(size=(4, 3))
    a = RecurrentPopulation.create(genomes, config)
    b = RecurrentPopulation.create(genomes, config)
    a.activate(x, index)
    b.activate(x, index)
    a.activate(x[[0, 2]], index[[0, 2]], rows=[0, 2])   # rows 1 and 3 skip this step
    b.activate(x, index)
    after_a = a.activate(x[[1, 3]], index[[1, 3]], rows=[1, 3])
    fresh = RecurrentPopulation.create(genomes, config)
    fresh.activate(x, index)
    assert np.array_equal(after_a, fresh.activate(x, index)[[1, 3]])  # their second step, not third


# ---------------------------------------------------------------- CTRNN (neat.ctrnn.CTRNN.advance)

# (advance_time, time_step) pairs: whole multiples of the step in decimal (neat-python's summed
# time then often leaves a remainder of about 1e-17 s, one more step that swaps its buffers), a
# last partial step, one step per call, a step longer than the call, dyadic (exact) times.
CTRNN_TIMES = [(0.1, 0.02), (0.1, 0.01), (0.1, 0.03), (0.02, 0.02), (0.05, 0.1), (1 / 30, 0.005), (0.25, 0.0625)]
TIME_CONSTANTS = dict(time_constant_init_mean=0.6, time_constant_init_stdev=0.4, time_constant_mutate_rate=0.5,
                      time_constant_mutate_power=0.3, time_constant_replace_rate=0.1, time_constant_min_value=0.03,
                      time_constant_max_value=5.0)


@pytest.fixture(scope="module")
def ctrnn_configs(tmp_path_factory):
    """CTRNN configs, built once: (functions, genome class name) -> neat.Config with evolving time
    constants, for neat-python's DefaultGenome or neatpar's Genome (genes kept as records)."""
    import neatpar
    folder = tmp_path_factory.mktemp("ctrnn-configs")
    made = {}

    def get(functions, genome):
        if (functions, genome) not in made:
            options = dict(BASIC if functions == "basic" else MIXED, feed_forward="false", response_mutate_rate=0.3,
                           response_init_stdev=0.3, initial_connection="partial_direct 0.5", num_hidden=2,
                           **TIME_CONSTANTS)
            path = write_config(folder, f"{len(made)}.cfg", **options)
            classes = ((neatpar.Genome, neatpar.Reproduction, neatpar.SpeciesSet) if genome == "neatpar" else
                       (neat.DefaultGenome, neat.DefaultReproduction, neat.DefaultSpeciesSet))
            made[functions, genome] = neat.Config(*classes, neat.DefaultStagnation, path)
        return made[functions, genome]
    return get


def ctrnn_reference(genomes, config):
    """neat-python's CTRNN of each genome, built from its gene dicts (a neatpar genome keeps its
    records: the kernel reads those)."""
    from types import SimpleNamespace
    from neatpar.evolution.gene_arrays import gene_dicts
    return [neat.ctrnn.CTRNN.create(SimpleNamespace(nodes=gene_dicts(g)[0], connections=gene_dicts(g)[1]), config)
            for g in genomes]


def advance_all(nets, x, advance_time, time_step) -> np.ndarray:
    """CTRNN.advance of each row's own network. A network where neat-python raises OverflowError
    (float ** n of a huge value; the kernel gives inf) is left half-advanced: it gets
    `overflowed = True`, and its rows read NaN from then on."""
    out = []
    for net, row in zip(nets, x.tolist()):
        try:
            if getattr(net, "overflowed", False):
                raise OverflowError
            out.append(net.advance(row, advance_time, time_step))
        except OverflowError:
            net.overflowed = True
            out.append([math.nan] * len(net.output_nodes))
    return np.array(out)


def assert_identical_where_defined(out, ref):
    """assert_identical on the rows where neat-python did not overflow (NaN in every output)."""
    defined = ~np.isnan(ref).all(axis=1)
    assert_identical(out[defined], ref[defined])
    return int(defined.sum())


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10_000), functions=st.sampled_from(["basic", "mixed"]),
       genome=st.sampled_from(["neat-python", "neatpar"]), rounds=st.integers(0, 30),
       times=st.sampled_from(CTRNN_TIMES), decisions=st.integers(30, 250), scale=st.sampled_from([0.5, 3.0]))
def test_ctrnn_matches_neat_python_over_long_sequences(ctrnn_configs, seed, functions, genome, rounds, times,
                                                       decisions, scale):
    """Rows driven by genomes mutated by neat-python's (or neatpar's) operators, time constants
    included, each advanced `decisions` times; every few decisions some rows take a new genome
    (a fresh network, as CTRNN.reset() makes it) and others skip a decision (state kept)."""
    from neatpar.nn import CTRNNPopulation
    config = ctrnn_configs(functions, genome)
    genomes = evolved_genomes(config, seed, rounds)
    rng = np.random.default_rng(seed)
    rows = len(genomes) + 4
    index = rng.integers(0, len(genomes), rows)
    population = CTRNNPopulation.create(genomes, config, *times)
    nets = [ctrnn_reference([genomes[g]], config)[0] for g in index]
    compared = 0
    for decision in range(decisions):
        if decision % 7 == 6:  # a few rows take a new genome
            taking = rng.choice(rows, 3, replace=False)
            population.reset(taking)  # as the runner does (the new genome may be the one it had)
            for r in taking.tolist():
                index[r] = rng.integers(0, len(genomes))
                nets[r] = ctrnn_reference([genomes[index[r]]], config)[0]
        acting = np.sort(rng.choice(rows, rows - 2, replace=False))  # two rows skip this decision
        x = inputs_for(rng, len(acting), config.genome_config.num_inputs, scale)
        ref = advance_all([nets[r] for r in acting], x, *times)
        compared += assert_identical_where_defined(population.activate(x, index[acting], acting), ref)
    assert compared >= decisions * len(genomes) // 2


def test_ctrnn_keeps_neat_pythons_rounding_step(tmp_path):
    """0.1 s in steps of 0.02 s is 5 steps, but neat-python sums the time in float64 and often
    takes a 6th step of about 1e-17 s, which swaps its two value buffers: the output then comes
    from the other buffer. The kernel does the same (and differs from 5 clean steps)."""
    from neatpar.nn import CTRNNPopulation
    config = make_config(tmp_path, num_inputs=1, num_outputs=1, feed_forward="false")
    genome = hand_genome(config, {0: ("tanh", "sum", 0.2, 1.0, 0.3), 4: ("sigmoid", "sum", -0.1, 1.0, 0.5)},
                         [(-1, 4, 1.2, True), (4, 0, -0.8, True), (0, 4, 0.7, True), (0, 0, 0.4, True)])
    net = ctrnn_reference([genome], config)[0]
    exact = CTRNNPopulation.create([genome], config, 0.1, 0.02)
    clean = CTRNNPopulation.create([genome], config, 0.02, 0.02)  # exactly one step per call
    odd_steps, differs = [], 0
    for k in range(60):
        x = np.array([[math.sin(0.3 * k)]])
        before = net.active
        ref = net.advance(x[0].tolist(), 0.1, 0.02)
        odd_steps.append(net.active != before)  # each step flips `active`: 5 steps flip it, 6 do not
        assert exact.activate(x)[0].tolist() == ref
        for _ in range(5):
            five = clean.activate(x)
        differs += five[0, 0] != ref[0]
    assert 0 < sum(odd_steps) < 60 and differs > 0


@pytest.fixture(scope="module")
def ctrnn_single_config(tmp_path_factory):
    return make_config(tmp_path_factory.mktemp("ctrnn-single"), num_inputs=8, num_outputs=1, feed_forward="false",
                       activation_options=ALL_ACTIVATIONS, aggregation_options=ALL_AGGREGATIONS)


def ctrnn_kernel_outputs(population, inputs, index, calls: int) -> list[np.ndarray]:
    """Output 0 of each row after each of `calls` advances, from the C kernel called as advance()
    calls it but with NaN allowed among the inputs (advance() refuses NaN from users)."""
    from neatpar.nn import _kernel
    t = population.tables
    assert not t.uses_custom
    state = np.zeros((len(inputs), population.state_width))
    outputs = np.empty((len(inputs), 1))
    result = []
    for _ in range(calls):
        _kernel.ctrnn_run(t.genome_start, t.node_slot, t.node_act, t.node_agg, t.node_bias, t.node_resp, t.link_start,
                          t.link_src, t.link_w, t.node_tau, np.ascontiguousarray(index, dtype=np.int64),
                          np.ascontiguousarray(inputs), state, outputs, t.num_inputs, 1, t.stride, t.max_fan_in,
                          population.advance_time, population.time_step)
        result.append(outputs[:, 0].copy())
    return result


def ctrnn_expected(genomes, config, inputs, index, calls, times) -> list[np.ndarray]:
    nets = ctrnn_reference(genomes, config)
    expected = np.empty((calls, len(inputs)))
    for r, (g, row) in enumerate(zip(index.tolist(), inputs.tolist())):
        net = nets[g]
        net.reset()
        for c in range(calls):
            try:
                expected[c, r] = net.advance(row, *times)[0]
            except OverflowError:  # the kernel's inf where neat-python raises; compared as such below
                expected[c:, r] = math.nan
                break
    return list(expected)


def test_every_activation_in_a_ctrnn_is_bit_identical(ctrnn_single_config):
    """Each built-in activation on 6,000 inputs (the edge values of activation_inputs among
    them), through three advances of two Euler steps each, against CTRNN.advance: the output node
    is act(-0.0 + 1.0 * max([x * 1.0])) with time constant 0.7, and a hidden node reads it (CTRNN
    evaluates a node fed by a required one)."""
    from neatpar.nn import CTRNNPopulation
    rng = np.random.default_rng(21)
    every = activation_inputs(rng)
    x = np.concatenate([every[:99], rng.choice(every[99:], 5_901, replace=False)])  # specials and limits first
    genomes = [hand_genome(ctrnn_single_config, {0: (name, "max", -0.0, 1.0, 0.7), 9: (name, "sum", 0.1, 0.5, 0.2)},
                           [(-1, 0, 1.0, True), (0, 9, 1.3, True)], key=k)
               for k, name in enumerate(ACTIVATIONS)]
    times = (0.1, 0.05)
    population = CTRNNPopulation.create(genomes, ctrnn_single_config, *times)
    assert population.tables.node_counts == [2] * len(ACTIVATIONS)
    inputs = np.zeros((len(ACTIVATIONS) * len(x), 8))
    inputs[:, 0] = np.tile(x, len(ACTIVATIONS))
    index = np.repeat(np.arange(len(ACTIVATIONS)), len(x))
    got = ctrnn_kernel_outputs(population, inputs, index, 3)
    expected = ctrnn_expected(genomes, ctrnn_single_config, inputs, index, 3, times)
    for call in range(3):
        for a, name in enumerate(ACTIVATIONS):
            block = slice(a * len(x), (a + 1) * len(x))
            overflowed = np.isnan(expected[call][block]) & ~np.isnan(got[call][block])
            keep = ~overflowed  # neat-python raised OverflowError there (square, cube of huge values)
            assert_bits_equal(got[call][block][keep], expected[call][block][keep], x[keep], f"{name}, call {call + 1}")
            assert name in ("square", "cube") or not overflowed.any()


def test_every_aggregation_in_a_ctrnn_is_bit_identical(ctrnn_single_config):
    """Each built-in aggregation of lists of 0 to 8 values (500 lists each), through three
    advances of 0.1 s in steps of 0.03 s (a last partial step), against CTRNN.advance."""
    from neatpar.nn import CTRNNPopulation
    rng = np.random.default_rng(22)
    rows = 500
    cases = [(name, k) for name in ALL_AGGREGATIONS.split() for k in range(9)]
    genomes = [hand_genome(ctrnn_single_config, {0: ("identity", name, -0.0, 1.0, 0.45)},
                           [(-i - 1, 0, 1.0, True) for i in range(k)], key=g) for g, (name, k) in enumerate(cases)]
    times = (0.1, 0.03)
    population = CTRNNPopulation.create(genomes, ctrnn_single_config, *times)
    lists = aggregation_lists(rng, rows * len(cases))
    index = np.repeat(np.arange(len(cases)), rows)
    got = ctrnn_kernel_outputs(population, lists, index, 3)
    expected = ctrnn_expected(genomes, ctrnn_single_config, lists, index, 3, times)
    for call in range(3):
        for g, (name, k) in enumerate(cases):
            block = slice(g * rows, (g + 1) * rows)
            assert_bits_equal(got[call][block], expected[call][block], lists[block, :k],
                              f"{name} of {k}, call {call + 1}")


def test_ctrnn_custom_functions_take_the_python_path(tmp_path):
    from neatpar.nn import CTRNNPopulation
    config = make_config(tmp_path, activation_options="sigmoid twice", aggregation_options="sum first",
                         activation_mutate_rate=0.5, aggregation_mutate_rate=0.5, feed_forward="false",
                         **TIME_CONSTANTS)
    config.genome_config.add_activation("twice", twice)
    config.genome_config.add_aggregation("first", first)
    genomes = evolved_genomes(config, 4, 10)
    for g in genomes:
        next(iter(g.nodes.values())).activation = "twice"
        next(iter(g.nodes.values())).aggregation = "first"
    population = CTRNNPopulation.create(genomes, config, 0.1, 0.02)
    assert population.tables.uses_custom
    nets = ctrnn_reference(genomes, config)
    rng = np.random.default_rng(0)
    for _ in range(30):
        x = rng.normal(size=(len(genomes), 3))
        assert_identical(population.activate(x), advance_all(nets, x, 0.1, 0.02))


def test_ctrnn_reset_restarts_the_network_and_its_clock(small):
    """A cleared row is CTRNN.reset(): zero values and time_seconds 0, so the rounding steps of
    its next decisions are those of a new network; other rows are untouched."""
    from neatpar.nn import CTRNNPopulation
    config, genomes = small
    population = CTRNNPopulation.create(genomes, config, 0.1, 0.02)
    nets = ctrnn_reference(genomes, config)
    rng = np.random.default_rng(6)
    for k in range(25):
        if k == 13:
            population.reset([2, 9])
            nets[2].reset()
            nets[9].reset()
        x = rng.normal(size=(len(genomes), 3))
        assert_identical(population.activate(x), advance_all(nets, x, 0.1, 0.02))
    state = np.zeros((len(genomes), population.state_width))
    x = rng.normal(size=(len(genomes), 3))
    fresh = ctrnn_reference(genomes, config)
    assert_identical(population.advance(x, None, state)[0], advance_all(fresh, x, 0.1, 0.02))


def test_ctrnn_pickles_its_times_but_not_its_state(small):
    from neatpar.nn import CTRNNPopulation
    config, genomes = small
    population = CTRNNPopulation.create(genomes, config, 0.25, 0.05)
    x = np.random.default_rng(7).normal(size=(len(genomes), 3))
    first_call = population.activate(x)
    copy = pickle.loads(pickle.dumps(population))
    assert (copy.advance_time, copy.time_step) == (0.25, 0.05)
    assert copy.activate(x).tolist() == first_call.tolist()  # a fresh state in the copy


def test_ctrnn_bad_arguments_are_clear_errors(small, tmp_path):
    from neatpar.errors import ConfigError
    from neatpar.nn import CTRNNPopulation
    config, genomes = small
    with pytest.raises(ValueError, match="time_step = 0.0: give the Euler step"):
        CTRNNPopulation.create(genomes, config, 0.1, 0.0)
    with pytest.raises(ValueError, match="advance_time = -1.0"):
        CTRNNPopulation.create(genomes, config, -1.0, 0.01)
    with pytest.raises(ValueError, match="advance_time = nan"):
        CTRNNPopulation.create(genomes, config, math.nan, 0.01)
    population = CTRNNPopulation.create(genomes, config, 0.1, 0.02)
    with pytest.raises(ValueError, match=rf"state must be an \(2, {population.state_width}\) array"):
        population.advance(np.ones((2, 3)), [0, 1], np.zeros((2, 3)))
    genomes[3].nodes[0].time_constant = 0.0
    with pytest.raises(ConfigError, match=f"genome {genomes[3].key} has a node with time_constant 0.0"):
        CTRNNPopulation.create(genomes, config)


def test_ctrnn_a_clock_too_late_to_move_is_an_error_not_a_hang(small):
    """neat-python loops forever once time_seconds + dt == time_seconds; the kernel says so."""
    from neatpar.nn import CTRNNPopulation
    config, genomes = small
    population = CTRNNPopulation.create(genomes, config, 1.0, 1e-3)
    state = np.zeros((2, population.state_width))
    state[1, -1] = 1e14  # 1e-3 is below half its float64 spacing
    with pytest.raises(ValueError, match="row 1: after 100000000000000.0 s a step of 0.001 s no longer moves the time"):
        population.advance(np.ones((2, 3)), [0, 1], state)
