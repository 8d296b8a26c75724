"""Compiling genomes into the kernel's tables (neatpar/nn/compile.py): the nodes, links and node
attributes of each network are the ones neat-python's own `create` keeps, in its order."""
import neat
import neat.activations
import neat.aggregations
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import neatpar
from neatpar.errors import ConfigError
from neatpar.evolution.gene_arrays import genes, read_genes
from neatpar.nn.compile import (BUILTIN_ACTIVATIONS, BUILTIN_AGGREGATIONS, CUSTOM_BASE, Flat, FunctionTable, Tables,
                                _feed_forward_structure, _recurrent_structure)
from support.configs import ALL_ACTIVATIONS, ALL_AGGREGATIONS, evolved_genomes, make_config

OPTIONS = dict(activation_options=ALL_ACTIVATIONS, aggregation_options=ALL_AGGREGATIONS, activation_mutate_rate=0.4,
               aggregation_mutate_rate=0.4, response_mutate_rate=0.3, enabled_mutate_rate=0.2)


@pytest.fixture(scope="module")
def configs(tmp_path_factory):
    """A feed-forward and a recurrent config over every function, built once."""
    folder = tmp_path_factory.mktemp("configs")
    return {feed_forward: make_config(folder, f"{feed_forward}.cfg", feed_forward=str(feed_forward).lower(),
                                      num_hidden=1, initial_connection="partial_direct 0.5", **OPTIONS)
            for feed_forward in (True, False)}


def function(code: int, builtins, module, suffix: str, custom: list):
    return getattr(module, builtins[code] + suffix) if code < CUSTOM_BASE else custom[code - CUSTOM_BASE]


def kept_by_neat_python(genome, config, recurrent: bool) -> list[tuple]:
    """neat-python's node_evals: (key, activation, aggregation, bias, response, links), a source
    that is neither an input, an output nor evaluated named "zero" (neat-python reads 0.0 for it,
    the kernel a zero slot; an output no node evaluates reads 0.0 from its own slot in both)."""
    create = neat.nn.RecurrentNetwork.create if recurrent else neat.nn.FeedForwardNetwork.create
    evals = create(genome, config).node_evals
    gc = config.genome_config
    known = set(gc.input_keys) | set(gc.output_keys) | {node for node, *_ in evals}
    return [(node, act, agg, bias, response, [(i if i in known else "zero", w) for i, w in links])
            for node, act, agg, bias, response, links in evals]


def node_evals(flat: Flat, tables: Tables, g: int, keys: dict) -> list[tuple]:
    """Genome g's compiled network as node_evals, its slots named by `keys` (slot -> name)."""
    nodes = []
    for n in range(flat.genome_start[g], flat.genome_start[g + 1]):
        span = slice(flat.link_start[n], flat.link_start[n + 1])
        nodes.append((keys[int(flat.node_slot[n])],
                      function(int(flat.node_act[n]), BUILTIN_ACTIVATIONS, neat.activations, "_activation",
                               tables.custom_activations),
                      function(int(flat.node_agg[n]), BUILTIN_AGGREGATIONS, neat.aggregations, "_aggregation",
                               tables.custom_aggregations),
                      float(flat.node_bias[n]), float(flat.node_resp[n]),
                      [(keys.get(int(s), "zero"), float(w)) for s, w in zip(flat.link_src[span], flat.link_w[span])]))
    return nodes


def slot_names(tables: Tables, genome, recurrent: bool) -> dict[int, int]:
    """The Python walk's slots: inputs, then outputs, then the other nodes in the walk's order."""
    walk = _recurrent_structure if recurrent else _feed_forward_structure
    keys = tables.input_keys + tables.output_keys
    for key, _ in walk(genome.connections, set(tables.input_keys), tables.output_keys):
        if key not in keys:
            keys.append(key)
    return dict(enumerate(keys))


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), rounds=st.integers(0, 8), recurrent=st.booleans())
def test_each_network_keeps_the_nodes_links_and_attributes_neat_python_keeps(configs, seed, rounds, recurrent):
    """Recurrent networks in neat-python's order; feed-forward ones in an order where every node
    comes after the nodes it reads (neat-python's layers leave the order within a layer open)."""
    config = configs[not recurrent]
    genomes = evolved_genomes(config, seed, rounds)[:6]
    tables = Tables(genomes, config, recurrent=recurrent)
    flat = tables._in_python(genomes, *function_tables(config))
    walked_in_c = [tables._in_c(read_genes(g), *function_tables(config)) for g in (genomes, as_records(genomes))]
    for g, genome in enumerate(genomes):
        expected = kept_by_neat_python(genome, config, recurrent)
        got = node_evals(flat, tables, g, slot_names(tables, genome, recurrent))
        if recurrent:  # the C walk numbers the slots as the Python walk does
            assert got == expected
            assert all(node_evals(in_c, tables, g, slot_names(tables, genome, True)) == expected for in_c in walked_in_c)
            continue
        assert {node[0]: node for node in got} == {node[0]: node for node in expected}
        evaluated = set(config.genome_config.input_keys)
        for key, *_, links in got:
            assert all(source in evaluated for source, _ in links), f"node {key} reads a node evaluated later"
            evaluated.add(key)


def function_tables(config) -> tuple[FunctionTable, FunctionTable]:
    gc = config.genome_config
    return (FunctionTable(gc.activation_defs, BUILTIN_ACTIVATIONS, neat.activations, "activation"),
            FunctionTable(gc.aggregation_function_defs, BUILTIN_AGGREGATIONS, neat.aggregations, "aggregation"))


def by_attributes(flat: Flat, tables: Tables, g: int) -> dict:
    """Genome g's network with each evaluated node named by its attributes (inputs by key):
    comparable across walks that number hidden slots differently."""
    fixed = dict(enumerate(tables.input_keys))
    names = {int(flat.node_slot[n]): (int(flat.node_act[n]), int(flat.node_agg[n]), float(flat.node_bias[n]),
                                      float(flat.node_resp[n]))
             for n in range(flat.genome_start[g], flat.genome_start[g + 1])}
    assume(len(set(names.values())) == len(names))  # two nodes alike in every attribute: no name
    network = node_evals(flat, tables, g, {**fixed, **names})
    return {node[0]: sorted(node[5], key=repr) for node in network}


def as_records(genomes) -> list:
    """neatpar genomes with the same genes (assigned through their mappings: records)."""
    made = []
    for genome in genomes:
        twin = neatpar.Genome(genome.key)
        for k, gene in genome.nodes.items():
            twin.nodes[k] = gene
        for k, gene in genome.connections.items():
            twin.connections[k] = gene
        assert genes(twin) is not None
        made.append(twin)
    return made


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10_000), rounds=st.integers(0, 8), recurrent=st.booleans())
def test_the_walk_in_c_and_the_walk_in_python_build_the_same_networks(configs, seed, rounds, recurrent):
    """Over records read from neat-python's genomes' objects and over neatpar's genomes' own."""
    config = configs[not recurrent]
    genomes = evolved_genomes(config, seed, rounds)
    tables = Tables(genomes, config, recurrent=recurrent)
    in_python = tables._in_python(genomes, *function_tables(config))
    for subjects in (genomes, as_records(genomes)):
        in_c = tables._in_c(read_genes(subjects), *function_tables(config))
        assert in_c is not None
        assert list(in_c.genome_start) == list(in_python.genome_start)
        for g in range(len(genomes)):
            assert by_attributes(in_c, tables, g) == by_attributes(in_python, tables, g)


def twice(z):
    return 2.0 * z


def test_function_codes_builtins_by_index_custom_ones_aside_and_unknown_names_refused(tmp_path):
    config = make_config(tmp_path)
    config.genome_config.add_activation("twice", twice)
    config.genome_config.add_activation("sigmoid", twice)  # a built-in's name, redefined: not the built-in
    table = FunctionTable(config.genome_config.activation_defs, BUILTIN_ACTIVATIONS, neat.activations, "activation")
    assert table.code("tanh") == BUILTIN_ACTIVATIONS.index("tanh")
    assert table.code("twice") == CUSTOM_BASE and table.code("sigmoid") == CUSTOM_BASE + 1
    assert table.code("twice") == CUSTOM_BASE and table.custom == [twice, twice]
    with pytest.raises(ConfigError, match="genome uses activation function 'nope', which the config does not define"):
        table.code("nope")
