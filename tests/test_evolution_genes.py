"""neatpar's gene objects (evolution/core/gene_objects.c) and genome.nodes / genome.connections
(core/gene_maps.c) against neat-python's own: every attribute, copy, crossover, mutate, distance,
str, repr, pickling and copies, isinstance, == and hash, < , on every gene of evolved populations;
the mappings against dicts under random sequences of dict operations; what a gene object code keeps
becomes when its genome breeds, loses the gene or is gone; and an attribute code sets is what the
next generation inherits."""
import copy
import gc
import pickle
import random
import re

import neat
import pytest
from neat.genes import DefaultConnectionGene, DefaultNodeGene

from neatpar.evolution.gene_arrays import genes
from support import evolution as es

NODE_ATTRIBUTES = ("key", "bias", "response", "activation", "aggregation", "time_constant")
CONNECTION_ATTRIBUTES = ("key", "innovation", "weight", "enabled")


@pytest.fixture(params=[True, False], ids=["feed-forward", "recurrent"])
def population(request):
    """Genomes of neatpar's classes in several species (a deep copy: tests change them)."""
    return copy.deepcopy(es.grown(request.param, 40))


def pairs(genome):
    """(our gene, neat-python's twin gene) for every gene of a genome, nodes first."""
    twin = es.as_neat_genome(genome)
    return ([(genome.nodes[k], twin.nodes[k]) for k in twin.nodes]
            + [(genome.connections[k], twin.connections[k]) for k in twin.connections])


def state(gene) -> tuple:
    """Every attribute a gene has (typed, floats bit for bit), and whether it has an innovation number."""
    names = CONNECTION_ATTRIBUTES if hasattr(gene, "innovation") else NODE_ATTRIBUTES
    return (type(gene).__name__, isinstance(gene, (DefaultNodeGene, DefaultConnectionGene)),
            tuple((name, es.text(getattr(gene, name))) for name in names))


def outcome(call):
    """What a call returns, or the error it raises (neat-python's asserts included), as text."""
    try:
        return call()
    except Exception as error:
        return f"{type(error).__name__}: {error}"


def test_every_attribute_reads_as_neat_pythons(population):
    for genome in population.population.values():
        for ours, theirs in pairs(genome):
            assert state(ours) == state(theirs)
            assert isinstance(ours, type(theirs)) and type(ours).__module__ == "neat.genes"
            assert hasattr(ours, "innovation") == hasattr(theirs, "innovation")
        assert genes(genome) is not None  # reading made no dicts of the genome


def test_str_repr_and_order_are_neat_pythons(population):
    address = re.compile(r" at 0x[0-9a-f]+>$")
    for genome in population.population.values():
        for ours, theirs in pairs(genome):
            assert str(ours) == str(theirs)
            assert address.sub(">", repr(ours)) == address.sub(">", repr(theirs))
        twin = es.as_neat_genome(genome)
        assert [g.key for g in sorted(genome.nodes.values())] == [g.key for g in sorted(twin.nodes.values())]
        assert [g.key for g in sorted(genome.connections.values())] == [g.key for g in sorted(twin.connections.values())]


def test_copy_crossover_and_distance_are_neat_pythons_draw_for_draw(population):
    config = population.config.genome_config
    genomes = list(population.population.values())
    for first, second in zip(genomes, genomes[1:] + genomes[:1]):
        twin_first, twin_second = es.as_neat_genome(first), es.as_neat_genome(second)
        for name in ("nodes", "connections"):
            ours, theirs = getattr(first, name), getattr(twin_first, name)
            other, other_twin = getattr(second, name), getattr(twin_second, name)
            for key in theirs:
                assert state(ours[key].copy()) == state(theirs[key].copy())
                if key in other_twin:
                    seed = random.getstate()
                    made = outcome(lambda: state(ours[key].crossover(other[key])))
                    after = random.getstate()
                    random.setstate(seed)
                    assert made == outcome(lambda: state(theirs[key].crossover(other_twin[key])))
                    assert random.getstate() == after
                    assert ours[key].distance(other[key], config) == theirs[key].distance(other_twin[key], config)
                    assert ours[key].distance(other_twin[key], config) == theirs[key].distance(other_twin[key], config)
        assert es.genome_state(first) == es.genome_state(es.as_neat_genome(first))  # nothing changed the genome


def test_mutate_draws_and_writes_as_neat_pythons(population):
    """Each gene's own mutate(config) (neat-python's method on the records' attributes): the same
    draws, the same values, and the genome's record changed as the twin's gene was."""
    config = population.config.genome_config
    for genome in list(population.population.values())[:15]:
        twin = es.as_neat_genome(genome)
        seed = random.getstate()
        for gene in list(genome.nodes.values()) + list(genome.connections.values()):
            gene.mutate(config)
        after = random.getstate()
        random.setstate(seed)
        for gene in list(twin.nodes.values()) + list(twin.connections.values()):
            gene.mutate(config)
        assert random.getstate() == after
        assert es.genome_state(genome)[2:] == es.genome_state(twin)[2:]


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_pickles_and_copies_are_neat_pythons_genes(population, protocol):
    for genome in list(population.population.values())[:10]:
        for ours, theirs in pairs(genome):
            for made, expected in ((pickle.loads(pickle.dumps(ours, protocol)), pickle.loads(pickle.dumps(theirs, protocol))),
                                   (copy.deepcopy(ours), copy.deepcopy(theirs)), (copy.copy(ours), copy.copy(theirs))):
                assert type(made) is type(expected) is type(theirs)
                assert made.__dict__ == expected.__dict__ and list(made.__dict__) == list(expected.__dict__)


def test_connection_genes_compare_and_hash_by_innovation_as_neat_pythons(population):
    genome = next(iter(population.population.values()))
    twin = es.as_neat_genome(genome)
    ours, theirs = list(genome.connections.values()), list(twin.connections.values())
    for a, x in zip(ours, theirs):
        assert a == x and x == a and hash(a) == hash(x)
        for b, y in zip(ours, theirs):
            assert (a == b) == (x == y) and (a != b) == (x != y)
    assert {g.innovation for g in set(ours)} == {g.innovation for g in set(theirs)}


def test_a_new_gene_lacks_its_attributes_until_set_as_neat_pythons(population):
    genome = next(iter(population.population.values()))
    node_type, connection_type = type(genome.nodes[0]), type(next(iter(genome.connections.values())))
    for ours, theirs in ((node_type(7), DefaultNodeGene(7)), (connection_type((-1, 7), 3), DefaultConnectionGene((-1, 7), 3))):
        names = NODE_ATTRIBUTES if isinstance(ours, DefaultNodeGene) else CONNECTION_ATTRIBUTES
        for name in names:
            errors = []
            for gene in (ours, theirs):
                try:
                    errors.append(es.text(getattr(gene, name)))
                except AttributeError as error:
                    errors.append(f"AttributeError: {error}")
            assert errors[0] == errors[1], name
    with pytest.raises(AssertionError):
        node_type("seven")  # neat-python's __init__ checks the key


# ---------------------------------------------------------------- the mappings, against dicts


def fresh_gene(kind_of, key, template, innovation=None):
    """A gene with `template`'s attributes at `key`: neatpar's own kind (`kind_of` a gene object)
    or neat-python's class."""
    cls = type(kind_of)
    gene = cls(key) if innovation is None else cls(key, innovation)
    for a in template._gene_attributes:
        setattr(gene, a.name, getattr(template, a.name))
    return gene


def genome_view(genome) -> tuple:
    return tuple((k, state(g)) for k, g in genome.nodes.items()), tuple((k, state(g)) for k, g in genome.connections.items())


def apply(op: str, mapping, rng: random.Random, make, new_key):
    """One dict operation on `mapping` (a genome's mapping or a dict); what it returned, as text."""
    keys = list(mapping)
    key = rng.choice(keys) if keys else new_key
    try:
        if op == "get":
            found = mapping.get(key)
            return state(found) if found is not None else None
        if op == "get missing":
            return mapping.get(new_key, "default"), mapping.get(new_key), new_key in mapping, (7, 7, 7) in mapping
        if op == "index missing":
            return state(mapping[new_key])
        if op == "in":
            return key in mapping, len(mapping), list(mapping), list(reversed(mapping)), len(mapping.items())
        if op == "items":
            return [(k, state(g)) for k, g in mapping.items()], [state(g) for g in mapping.values()], list(mapping.keys())
        if op == "set ops":
            some = set(keys[::2])
            return (mapping.keys() & some, mapping.keys() - some, mapping.keys() | {new_key}, mapping.keys() == set(keys),
                    (key, mapping[key]) in mapping.items() if keys else None)
        if op == "pop":
            return state(mapping.pop(key))
        if op == "pop missing":
            return mapping.pop(new_key, "default")
        if op == "popitem":
            k, g = mapping.popitem()
            return k, state(g)
        if op == "delete":
            del mapping[key]
            return None
        if op == "delete missing":
            del mapping[new_key]
            return None
        if op == "replace":  # a copy of another gene's values at an existing key
            mapping[key] = make(key, mapping[rng.choice(keys)])
            return None
        if op == "add":
            mapping[new_key] = make(new_key, mapping[key])
            return None
        if op == "reassign":
            mapping[key] = mapping[key]
            return None
        if op == "setdefault":
            return state(mapping.setdefault(key, make(key, mapping[key])))
        if op == "update":
            mapping.update({new_key: make(new_key, mapping[key])})
            return None
        if op == "copy":
            return [(k, state(g)) for k, g in mapping.copy().items()], mapping == dict(mapping), dict(mapping) == mapping
        if op == "clear":
            mapping.clear()
            return len(mapping)
    except (KeyError, TypeError, IndexError) as error:
        return f"{type(error).__name__}: {error}"
    raise AssertionError(op)


OPS = ("get", "get missing", "index missing", "in", "items", "set ops", "pop", "pop missing", "popitem", "delete",
       "delete missing", "replace", "add", "reassign", "setdefault", "update", "copy", "clear")


@pytest.mark.parametrize("seed", range(12))
def test_the_mappings_behave_as_dicts_under_random_dict_operations(population, seed):
    """The same random operations on a genome's mappings and on its neat-python twin's dicts:
    the same results, the same genes in the same order after each; genes added both as neatpar's
    own (made by the class of its gene objects) and as neat-python's."""
    rng = random.Random(seed)
    genome = copy.deepcopy(rng.choice(list(population.population.values())))
    twin = es.as_neat_genome(genome)
    for step in range(60):
        op = rng.choice(OPS if step % 25 else OPS[:-1])
        kind = rng.choice(("nodes", "connections"))
        draw = rng.getstate()
        results = []
        for side, own in ((genome, True), (twin, False)):
            rng.setstate(draw)
            mapping = getattr(side, kind)
            new_key = 1000 + step if kind == "nodes" else (-1, 1000 + step)

            def make(key, template, own=own, side=side, kind=kind):
                kind_of = next(iter(getattr(genome, kind).values()), None) if own else None
                if kind_of is None:
                    kind_of = template if own else (DefaultNodeGene(0) if kind == "nodes" else DefaultConnectionGene((0, 0), 0))
                return fresh_gene(kind_of, key, template, None if kind == "nodes" else 500 + step)
            results.append(apply(op, mapping, rng, make, new_key))
        assert results[0] == results[1], (step, op, kind)
        assert genome_view(genome) == genome_view(twin), (step, op, kind)
        assert genes(genome) is not None


def test_iterating_while_the_keys_change_raises_as_a_dict_does(population):
    genome = next(iter(population.population.values()))
    twin = es.as_neat_genome(genome)
    for mapping in (genome.connections, twin.connections):
        with pytest.raises(RuntimeError, match="dictionary changed size during iteration"):
            for key in mapping:
                del mapping[key]
    for mapping in (genome.nodes, twin.nodes):
        for key in mapping:  # a value replaced at its key: the iteration goes on
            mapping[key] = mapping[key].copy()


# ---------------------------------------------------------------- what a kept gene object becomes


def test_a_gene_object_is_its_genome_s_gene_while_it_is_there(population):
    genome = next(iter(population.population.values()))
    key = next(iter(genome.connections))
    gene = genome.connections[key]
    assert genome.connections[key] is gene and next(iter(genome.connections.values())) is gene
    gene.weight, gene.enabled = 0.375, False
    assert genome.connections[key].weight == 0.375 and not genome.connections[key].enabled
    assert genes(genome).records()[1]  # still records, now with the new values
    twin = es.as_neat_genome(genome)
    assert twin.connections[key].weight == 0.375


def test_a_gene_removed_from_its_genome_keeps_its_values_and_changes_nothing(population):
    genome = next(iter(population.population.values()))
    key = list(genome.connections)[1]
    gene = genome.connections[key]
    before = state(gene)
    del genome.connections[key]
    assert state(gene) == before and key not in genome.connections
    gene.weight = 9.0
    assert all(g.weight != 9.0 for g in genome.connections.values())
    genome.connections[key] = fresh_gene(gene, key, gene, gene.innovation)
    assert genome.connections[key] is not gene  # a new gene at the old key; the kept one is on its own


def test_kept_gene_objects_follow_their_genome_s_mutations_as_neat_pythons_do(population):
    """genome.mutate on genomes whose gene objects code holds: each held object of ours ends as
    neat-python's held object does: still the genome's gene (with its mutated values) or removed
    (with its values as they were when it went)."""
    config = population.config.genome_config
    config.node_delete_prob = config.conn_delete_prob = 0.5
    population.reproduction.innovation_tracker.reset_generation()
    config.innovation_tracker = population.reproduction.innovation_tracker
    for genome in list(population.population.values())[:20]:
        genome = copy.deepcopy(genome)
        twin = es.as_neat_genome(genome)
        held = [(genome.nodes[k], twin.nodes[k], k, "nodes") for k in twin.nodes] + \
               [(genome.connections[k], twin.connections[k], k, "connections") for k in twin.connections]
        seed, counters = random.getstate(), copy.deepcopy((config.node_indexer, config.innovation_tracker))
        genome.mutate(config)
        random.setstate(seed)
        config.node_indexer, config.innovation_tracker = counters
        neat.DefaultGenome.mutate(twin, config)
        assert es.genome_state(genome)[2:] == es.genome_state(twin)[2:]
        for ours, theirs, key, name in held:
            assert (getattr(genome, name).get(key) is ours) == (getattr(twin, name).get(key) is theirs)
            assert state(ours) == state(theirs)


def test_a_gene_object_outlives_its_bred_and_dropped_genome(tmp_path):
    path = es.write_config(str(tmp_path / "neat.cfg"), pop_size=30, num_inputs=3, num_outputs=2)
    pop = neat.Population(es.neatpar_classes().config(path), seed=4)
    genome = next(iter(pop.population.values()))
    kept = [(genome.nodes[k], state(genome.nodes[k])) for k in genome.nodes]
    kept += [(genome.connections[k], state(genome.connections[k])) for k in genome.connections]
    key = genome.key
    del genome
    pop.run(lambda genomes, config: [setattr(g, "fitness", float(k % 5)) for k, g in genomes], 3)
    gc.collect()
    assert key not in pop.population
    assert [state(gene) for gene, _ in kept] == [before for _, before in kept]


# ---------------------------------------------------------------- what the next generation inherits


def test_an_attribute_code_sets_is_what_the_next_generation_inherits(tmp_path):
    """Weights and biases set through the gene objects in the fitness function (every gene a value
    of its own), with weight and bias mutation off: each child's gene has one of its parents' set
    values for that gene; and a run that sets them matches neat-python's doing the same."""
    path = es.write_config(str(tmp_path / "neat.cfg"), pop_size=40, num_inputs=3, num_outputs=2, elitism=1,
                           weight_mutate_rate=0.0, weight_replace_rate=0.0, bias_mutate_rate=0.0,
                           bias_replace_rate=0.0, conn_add_prob=0.0, node_add_prob=0.0, compatibility_threshold=1e9)
    pop = neat.Population(es.neatpar_classes().config(path), seed=6)
    marked: dict = {}

    def mark(genomes, config):
        for k, genome in genomes:
            for i, gene in enumerate(genome.connections.values()):
                gene.weight = k + i / 1000
            for i, gene in enumerate(genome.nodes.values()):
                gene.bias = -k - i / 1000
            marked[k] = es.genome_state(genome)
            genome.fitness = float(k % 7)

    children = 0
    for _ in range(3):
        parents_of = set(pop.population)
        pop.run(mark, 1)
        for k, genome in pop.population.items():
            if k in parents_of:
                continue  # an elite: the parent itself
            options = [dict(marked[p][3][1]) | dict(marked[p][4][1]) for p in pop.reproduction.ancestors[k]]
            for label, gene in es.genome_state(genome)[3][1] + es.genome_state(genome)[4][1]:
                name = "weight" if label.startswith("connection") else "bias"
                assert dict(gene)[name] in {dict(o[label])[name] for o in options if label in o}, (k, label)
            children += 1
    assert children > 60
    reference, candidate = (es.Run.new(impl, path, 6, es.editing_fitness) for impl in (es.NEAT_PYTHON, es.neatpar_classes()))
    assert es.assert_runs_agree(reference, candidate, 4, "genes edited by the fitness function") == 4
