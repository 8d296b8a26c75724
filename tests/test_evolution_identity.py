"""neatpar.Genome, neatpar.Reproduction and neatpar.SpeciesSet against neat-python's own classes:
with the same seed, a run produces, generation by generation, exactly neat-python's population
(every gene bit for bit and in dict order, species, innovation numbers, counters, ancestors,
Python's random state and every line the reporters print), on many configs, over checkpoints
restored mid-run, and call by call for the genome's own methods."""
import copy
import dataclasses
import glob
import os
import random
import tempfile
import traceback
from typing import NamedTuple

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from support import evolution as es
from support.evolution import NEAT_PYTHON, Run, assert_runs_agree
from support.paths import CONFIGS


@pytest.fixture
def neatpar_impl():
    return es.neatpar_classes()


def test_classes_keep_neat_python_names(neatpar_impl):
    """So neat.Config reads an unchanged file's [DefaultGenome], [DefaultReproduction] and [DefaultSpeciesSet]."""
    names = neatpar_impl.genome.__name__, neatpar_impl.reproduction.__name__, neatpar_impl.species_set.__name__
    assert names == ("DefaultGenome", "DefaultReproduction", "DefaultSpeciesSet")


# ---------------------------------------------------------------- configs (hypothesis)

rates = st.sampled_from([0.0, 0.05, 0.3, 1.0])
probabilities = st.sampled_from([0.0, 0.1, 0.5, 1.0])


@st.composite
def function_options(draw, names: list, prefix: str) -> dict:
    """All of neat-python's built-in names or a few, default random (or 'none') or one of them."""
    options = draw(st.one_of(st.just(names), st.lists(st.sampled_from(names), min_size=1, max_size=4, unique=True)))
    return {f"{prefix}_options": " ".join(options), f"{prefix}_mutate_rate": draw(rates),
            f"{prefix}_default": draw(st.sampled_from(["random", "none", *options]))}


@st.composite
def float_attribute(draw, name: str, mean: float, stdevs: list) -> dict:
    bound = draw(st.sampled_from([1.0, 5.0, 30.0]))
    return {f"{name}_init_mean": mean, f"{name}_init_stdev": draw(st.sampled_from(stdevs)),
            f"{name}_init_type": draw(st.sampled_from(["gaussian", "uniform"])),
            f"{name}_replace_rate": draw(st.sampled_from([0.0, 0.1, 0.5])), f"{name}_mutate_rate": draw(rates),
            f"{name}_mutate_power": draw(st.sampled_from([0.1, 0.5, 2.0])),
            f"{name}_max_value": max(bound, mean), f"{name}_min_value": min(-bound, mean)}


@st.composite
def time_constants(draw) -> dict:
    """Left at neat-python's defaults (drawn from, never changed) or mutating."""
    if draw(st.booleans()):
        return {}
    return {"time_constant_init_mean": 1.0, "time_constant_init_stdev": draw(st.sampled_from([0.0, 0.3])),
            "time_constant_mutate_rate": draw(rates), "time_constant_replace_rate": draw(st.sampled_from([0.0, 0.2])),
            "time_constant_mutate_power": 0.2}


@st.composite
def neat_options(draw) -> dict:
    """Every option of the four sections neat-python reads, over the values that change what it does."""
    large = draw(st.booleans())  # large populations with few inputs, or small ones with up to 40
    connection = draw(st.sampled_from(es.INITIAL_CONNECTIONS))
    if connection.startswith("partial"):
        connection += f" {draw(st.sampled_from([0.0, 0.25, 0.5, 1.0]))}"
    options = dict(
        pop_size=draw(st.integers(31, 150) if large else st.integers(2, 24)),
        num_inputs=draw(st.integers(1, 8) if large else st.integers(1, 40)),
        num_outputs=draw(st.integers(1, 4)), num_hidden=draw(st.sampled_from([0, 0, 1, 3])),
        feed_forward=draw(st.booleans()), initial_connection=connection,
        compatibility_disjoint_coefficient=draw(st.sampled_from([0.5, 1.0])),
        compatibility_weight_coefficient=draw(st.sampled_from([0.0, 0.5, 1.0])),
        conn_add_prob=draw(probabilities), conn_delete_prob=draw(probabilities),
        node_add_prob=draw(probabilities), node_delete_prob=draw(probabilities),
        single_structural_mutation=draw(st.booleans()),
        structural_mutation_surer=draw(st.sampled_from(["true", "false", "default"])),
        enabled_default=draw(st.sampled_from(["true", "false", "random"])),
        enabled_mutate_rate=draw(st.sampled_from([0.0, 0.01, 0.3])),
        enabled_rate_to_true_add=draw(st.sampled_from([0.0, 0.1, 1.0])),
        enabled_rate_to_false_add=draw(st.sampled_from([0.0, 0.1, 1.0])),
        compatibility_threshold=draw(st.sampled_from([0.3, 1.0, 3.0, 3.0, 50.0] if large else [1.0, 3.0, 50.0])),
        species_fitness_func=draw(st.sampled_from(es.SPECIES_FITNESS_FUNCS)),
        max_stagnation=draw(st.sampled_from([1, 3, 8, 15, 15])),
        species_elitism=draw(st.sampled_from([0, 1, 2, 2, 3])), elitism=draw(st.sampled_from([0, 1, 1, 2, 3])),
        survival_threshold=draw(st.sampled_from([0.0, 0.1, 0.2, 0.5, 1.0])),
        min_species_size=draw(st.sampled_from([1, 1, 1, 2, 3])),
        reset_on_extinction=draw(st.booleans()),
        no_fitness_termination=draw(st.sampled_from([True, True, False])),
        fitness_criterion=draw(st.sampled_from(["max", "min", "mean"])),
        fitness_threshold=draw(st.sampled_from([1e9, 0.5, -0.5])),
    )
    options.update(draw(function_options(es.ACTIVATIONS, "activation")))
    options.update(draw(function_options(es.AGGREGATIONS, "aggregation")))
    options.update(draw(float_attribute("bias", 0.0, [0.0, 1.0])))
    options.update(draw(float_attribute("response", 1.0, [0.0, 0.5])))
    options.update(draw(float_attribute("weight", 0.0, [1.0, 3.0])))
    options.update(draw(time_constants()))
    return options


def describe(options: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in options.items())


def both_runs(candidate, path: str, seed: int, fitness, checkpoints: str | None = None):
    reference = Run.new(NEAT_PYTHON, path, seed, fitness, None if checkpoints is None else checkpoints + "np-")
    return reference, Run.new(candidate, path, seed, fitness, None if checkpoints is None else checkpoints + "nc-")


GENERATIONS = 10
run_settings = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@run_settings
@given(options=neat_options(), fitness=st.sampled_from(sorted(es.FITNESS)), seed=st.integers(0, 2**31 - 1),
       watched=st.booleans())
def test_runs_match_neat_python_generation_by_generation(neatpar_impl, options, fitness, seed, watched):
    """Ten generations on a drawn config: the whole state equal after every one. Unwatched, the
    genes are compared only at the end (keys, fitness, species, counters, random state and output
    after every generation), so with a fitness that reads no gene object no code ever asks for one."""
    where = f"seed {seed}, {fitness} fitness, {'watched' if watched else 'genes read at the end'}"
    context = describe(options)
    with tempfile.TemporaryDirectory() as folder:
        path = es.write_config(os.path.join(folder, "neat.cfg"), **options)
        reference, candidate = both_runs(neatpar_impl, path, seed, es.FITNESS[fitness])
        done = assert_runs_agree(reference, candidate, GENERATIONS, where, genes=watched, context=context)
        es.assert_same(reference.snapshot(), candidate.snapshot(), f"{where}, at the end", context=context)
    event(f"generations run: {done}; outcome: {(reference.outcome or 'ran on')[:60]}")
    event(f"no gene object read before the end: {not watched and fitness in es.UNREAD}")


# Generations compared per shipped config: 5, and 2 where a genome starts with over 1,000 genes
# (neat-python's side of camera-direct.cfg, 768 x 2 links for 100 genomes, takes seconds a generation).
SHIPPED_GENERATIONS = {"camera-direct.cfg": 2}


@pytest.mark.parametrize("name", sorted(os.path.basename(p) for p in glob.glob(os.path.join(CONFIGS, "*.cfg"))))
def test_shipped_configs_match_neat_python(neatpar_impl, name):
    """The project's own configs, unchanged, with a fitness that builds networks from the genes."""
    path = os.path.join(CONFIGS, name)
    reference, candidate = both_runs(neatpar_impl, path, 11, es.network_fitness)
    assert_runs_agree(reference, candidate, SHIPPED_GENERATIONS.get(name, 5), name)


# Configs that force an event; each case names a line the reference's transcript must hold, so the
# case is known to cover what it is for.
EDGE_CASES = {
    "extinction, reset": (dict(pop_size=12, max_stagnation=1, species_elitism=0, reset_on_extinction=True),
                          es.tied_fitness, "complete_extinction"),
    "extinction, no reset": (dict(pop_size=12, max_stagnation=1, species_elitism=0, reset_on_extinction=False),
                             es.tied_fitness, "CompleteExtinctionException"),
    "stagnation, many species": (dict(pop_size=60, compatibility_threshold=1.0, max_stagnation=2, species_elitism=1,
                                      species_fitness_func="median2"), es.size_fitness, "species_stagnant"),
    "one species, no elitism": (dict(pop_size=40, compatibility_threshold=1000.0, elitism=0, survival_threshold=1.0),
                                es.editing_fitness, "species 1"),
    "solution found": (dict(no_fitness_termination=False, fitness_threshold=0.5), es.size_fitness,
                       "meets fitness threshold"),
    "population of two": (dict(pop_size=2, min_species_size=1, elitism=0, compatibility_threshold=0.3),
                          es.size_fitness, "Population of 2 members"),
    "spawn conflict": (dict(pop_size=6, compatibility_threshold=0.3, min_species_size=3), es.size_fitness,
                       "Configuration conflict"),
}


@pytest.mark.parametrize("case", sorted(EDGE_CASES))
def test_edge_runs_match_neat_python(neatpar_impl, tmp_path, case):
    options, fitness, expected = EDGE_CASES[case]
    path = es.write_config(str(tmp_path / "neat.cfg"), **options)
    reference, candidate = both_runs(neatpar_impl, path, 5, fitness)
    assert_runs_agree(reference, candidate, 12, case)
    happened = "\n".join(map(str, reference.history)) + f"\n{reference.outcome}"
    assert expected in happened, f"{case}: the reference run never shows {expected!r}; the config no longer covers it"


RECURRENT_ALL_FUNCTIONS = dict(
    pop_size=200, num_inputs=24, num_outputs=3, num_hidden=2, feed_forward=False, initial_connection="full_direct",
    activation_options=" ".join(es.ACTIVATIONS), activation_default="random", activation_mutate_rate=0.3,
    aggregation_options=" ".join(es.AGGREGATIONS), aggregation_default="random", aggregation_mutate_rate=0.3,
    response_init_stdev=0.5, response_mutate_rate=0.3, response_mutate_power=0.2,
    enabled_default="random", enabled_rate_to_true_add=0.1, compatibility_threshold=3.0)


@pytest.mark.slow
def test_large_recurrent_run_with_every_function_mutating(neatpar_impl, tmp_path):
    path = es.write_config(str(tmp_path / "neat.cfg"), **RECURRENT_ALL_FUNCTIONS)
    reference, candidate = both_runs(neatpar_impl, path, 3, es.editing_fitness)
    where = "pop 200, 24 inputs, recurrent, every function mutating"
    assert assert_runs_agree(reference, candidate, 15, where) == 15, f"the run ended: {reference.outcome}"


@pytest.mark.slow
def test_long_feed_forward_run_with_growing_genomes(neatpar_impl, tmp_path):
    """50 generations of growth, no gene object read until the end: innovation numbers far beyond
    the sets' sizes, deep feed-forward cycle checks, many species."""
    path = es.write_config(str(tmp_path / "neat.cfg"), pop_size=150, num_inputs=12, num_outputs=3,
                           initial_connection="partial_direct 0.3", conn_add_prob=0.8, node_add_prob=0.5,
                           compatibility_threshold=2.0)
    reference, candidate = both_runs(neatpar_impl, path, 8, es.size_fitness)
    where = "pop 150, 12 inputs, 50 generations"
    assert assert_runs_agree(reference, candidate, 50, where, genes=False) == 50, f"the run ended: {reference.outcome}"
    es.assert_same(reference.snapshot(), candidate.snapshot(), "pop 150, 12 inputs, after 50 generations")


def test_run_not_read_between_generations_matches_at_the_end(neatpar_impl, tmp_path):
    """A fitness that reads no gene and no snapshot of the genes until the last generation: the
    path where nothing ever asks a genome for its gene objects."""
    path = es.write_config(str(tmp_path / "neat.cfg"), pop_size=50, num_inputs=6, node_add_prob=0.5,
                           activation_options="tanh relu", activation_mutate_rate=0.2)
    reference, candidate = both_runs(neatpar_impl, path, 2, es.key_fitness)
    assert assert_runs_agree(reference, candidate, 8, "genes unread", genes=False) == 8, reference.outcome
    es.assert_same(reference.snapshot(), candidate.snapshot(), "genes unread, at the end")


# ---------------------------------------------------------------- checkpoints

# A run restored with a new config starts a new node counter from the first mutated genome's
# highest node key, so neat-python itself soon adds a node whose key a genome already has (an
# AssertionError, which the candidate must raise at the same point). Without node additions
# ("recurrent, no new nodes") such runs go on.
CHECKPOINT_CONFIGS = {
    "feed-forward": dict(pop_size=40, num_inputs=5, compatibility_threshold=2.0, node_add_prob=0.5, elitism=1,
                         min_species_size=1),
    "recurrent, no new nodes": dict(pop_size=40, num_inputs=5, feed_forward=False, compatibility_threshold=2.0,
                                    elitism=1, min_species_size=1, node_add_prob=0.0, conn_add_prob=0.8,
                                    activation_options="tanh sigmoid relu", activation_mutate_rate=0.2),
}


class Restore(NamedTuple):
    """A run restored from `checkpoint` with `impl`'s classes and the config file `config`, or
    with the config the checkpoint saved (config None; the classes are then the checkpoint's)."""
    impl: es.Implementation
    checkpoint: str
    config: str | None


def checkpointed(snapshot: tuple) -> tuple:
    """What a checkpoint carries of a snapshot: population, species, innovation tracker, random
    state. Not the node and species counters (pickling them calls next(), so not even neat-python's
    own restored run has the uninterrupted run's counters), the ancestors or the best genome (a
    restored run starts a new Reproduction and has seen no best genome yet)."""
    kept = dict(snapshot)
    tracker = dict(kept["counters"])["innovation tracker"]
    return tuple((name, kept[name]) for name in ("generation", "population", "species", "genome_to_species",
                                                  "random")) + (("innovation tracker", tracker),)


@pytest.mark.parametrize("kind", sorted(CHECKPOINT_CONFIGS))
def test_checkpoints_restored_mid_run_continue_as_neat_python(neatpar_impl, tmp_path, kind):
    """Both implementations save a checkpoint every generation (neat.Checkpointer) in lockstep; then
    from generations 3 and 6: each restores its own checkpoint, neatpar's classes restore
    neat-python's checkpoint (genomes of neat.DefaultGenome, the run continuing with neatpar's
    Reproduction), neat-python's classes restore neatpar's; each continues exactly as neat-python
    continues from the same checkpoint (saving checkpoints of its own), and starts from the
    uninterrupted run's state."""
    path = es.write_config(str(tmp_path / "neat.cfg"), **CHECKPOINT_CONFIGS[kind])
    folder = str(tmp_path) + os.sep
    reference, candidate = both_runs(neatpar_impl, path, 4, es.network_fitness, checkpoints=folder)
    uninterrupted = [reference.snapshot()]
    es.assert_same(uninterrupted[0], candidate.snapshot(), f"{kind}, at the start")
    for generation in range(1, 9):
        assert reference.step(), f"{kind}: the reference run ended ({reference.outcome}); the config must run on"
        candidate.step()
        uninterrupted.append(reference.snapshot())
        es.assert_same(uninterrupted[-1], candidate.snapshot(), f"{kind}, uninterrupted, after generation {generation}")
    on_neatpars = dataclasses.replace(NEAT_PYTHON, name="neat-python on neatpar's checkpoint")
    for generation in (3, 6):
        saved_np, saved_nc = f"{folder}np-{generation}", f"{folder}nc-{generation}"
        fresh_np = Restore(NEAT_PYTHON, saved_np, path)
        pairs = {  # label: (the reference's restore, the candidate's)
            "own checkpoints": (Restore(NEAT_PYTHON, saved_np, None), Restore(neatpar_impl, saved_nc, None)),
            "neat-python's checkpoint, neatpar's classes": (fresh_np, Restore(neatpar_impl, saved_np, path)),
            "neatpar's checkpoint, neat-python's classes": (fresh_np, Restore(on_neatpars, saved_nc, path)),
        }
        for number, (label, sides) in enumerate(pairs.items()):
            where = f"{kind}, restored at generation {generation} ({label})"
            restored_ref, restored_cand = (
                Run.restored(r.impl, r.checkpoint, es.network_fitness, r.config, f"{folder}r{generation}-{number}-{i}-")
                for i, r in enumerate(sides))
            start = restored_ref.snapshot()
            es.assert_same(checkpointed(uninterrupted[generation]), checkpointed(start), where,
                           ("uninterrupted run", "restored neat-python run"))
            es.assert_same(start, restored_cand.snapshot(), where, (restored_ref.impl.name, restored_cand.impl.name))
            ran = assert_runs_agree(restored_ref, restored_cand, 8 - generation, where)
            if sides[0].config is None or CHECKPOINT_CONFIGS[kind]["node_add_prob"] == 0.0:
                assert ran == 8 - generation, f"{where}: the run ended ({restored_ref.outcome}); it must run on"


# ---------------------------------------------------------------- the genome's methods, call by call


def evaluate(run: Run) -> None:
    """Fitness for the population a run has made (crossover reads the parents' fitness)."""
    with run.turn():
        es.evaluator(run.fitness)(list(run.population.population.items()), run.population.config)


def assert_methods_agree(reference: Run, candidate: Run, where: str, count: int = 20, context: str = "") -> None:
    """distance on every ordered pair of `count` genomes, configure_crossover on pairs (a genome
    with itself included), mutate on copies, configure_new, pickle and deepcopy: after each call
    the result, the random state and the counters equal on both sides."""
    names = (reference.impl.name, candidate.impl.name)
    evaluate(reference), evaluate(candidate)
    keys = list(reference.population.population)[:count]

    def check(label, call):
        results, raised = [], {}
        for run in (reference, candidate):
            with run.turn():
                try:
                    result = call(run.population.population, run.population.config)
                except Exception as error:  # the same error on both sides is the same behaviour
                    result = f"raised {type(error).__name__}: {error}"
                    raised[run.impl.name] = traceback.format_exc()
                results.append((("result", result), ("random", es.random_text(random.getstate())),
                                ("counters", es.counters_state(run.population))))
        try:
            es.assert_same(results[0], results[1], f"{where}, {label}", names, context)
        except AssertionError as error:
            tracebacks = "".join(f"\n{name} raised:\n{text}" for name, text in raised.items())
            raise AssertionError(f"{error}{tracebacks}") from None

    check("distance", lambda pop, config: tuple(
        (f"distance({a}, {b})", es.text(pop[a].distance(pop[b], config.genome_config))) for a in keys for b in keys))
    for i, a in enumerate(keys):
        b = keys[(7 * i + 3) % len(keys)] if i % 4 else a
        check(f"configure_crossover({a}, {b})", lambda pop, config: crossover(pop[a], pop[b], config, 10_000 + i))
        check(f"mutate({a})", lambda pop, config: mutated(pop[a], config))
        check(f"pickle and deepcopy of {a}", lambda pop, config: copied(pop[a]))
    for i in range(3):
        check(f"configure_new #{i}", lambda pop, config: fresh(config, 20_000 + i))


def crossover(parent1, parent2, config, key: int) -> tuple:
    child = config.genome_type(key)
    child.configure_crossover(parent1, parent2, config.genome_config)
    return es.genome_state(child)


def mutated(genome, config) -> tuple:
    child = copy.deepcopy(genome)
    child.mutate(config.genome_config)
    return es.genome_state(child)


def copied(genome) -> tuple:
    """Whether the genome's pickled and deep copies have its class and its genes."""
    made = es.copies(genome)  # before the original's genes are read
    return tuple((f"{how} copy", (("same class", es.text(type(c) is type(genome))),
                                  ("same genes", es.text(es.genome_state(c) == es.genome_state(genome)))))
                 for how, c in zip(("pickled", "deep"), made))


def fresh(config, key: int) -> tuple:
    genome = config.genome_type(key)
    genome.configure_new(config.genome_config)
    return es.genome_state(genome)


method_settings = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@method_settings
@given(options=neat_options(), seed=st.integers(0, 2**31 - 1), generations=st.integers(0, 6), read=st.booleans())
def test_genome_methods_match_neat_python_draw_for_draw(neatpar_impl, options, seed, generations, read):
    """Populations up to six generations into identical runs (or as far as the run got), their
    gene objects read first or not (the calls then start from genomes nobody has read); then each
    method called directly."""
    options["pop_size"] = max(options["pop_size"], 8)
    with tempfile.TemporaryDirectory() as folder:
        path = es.write_config(os.path.join(folder, "neat.cfg"), **options)
        reference, candidate = both_runs(neatpar_impl, path, seed, es.size_fitness)
        where, context = f"seed {seed}, genes {'read' if read else 'unread'} before the calls", describe(options)
        assert_runs_agree(reference, candidate, generations, where, genes=read, context=context)
        if len(reference.population.population) >= 2:  # an extinct run has no genomes left
            assert_methods_agree(reference, candidate, where, context=context)
        event(f"methods compared: {len(reference.population.population) >= 2}")


# ---------------------------------------------------------------- the comparison can fail

MUTANTS = {
    "one weight one ULP off": (es.broken("one-ulp", genome=es.OneUlpGenome), "after generation 1: population > "
                               "genome 40 > connections > connection (-1, 0) > weight"),
    "one extra random draw": (es.broken("extra-draw", genome=es.ExtraDrawGenome),
                              "after generation 1: population > genome 40"),
    "connections in another order": (es.broken("sorted", genome=es.SortedCrossoverGenome),
                                     "after generation 1: population > genome 31 > connections > entry 0"),
    "one species member moved": (es.broken("moved", species_set=es.MovedMemberSpeciesSet),
                                 "at the start: species > species 1 > members > member 0"),
    "innovations kept across generations": (es.broken("kept", reproduction=es.KeptInnovationsReproduction),
                                            "innovation tracker"),
}


@pytest.mark.parametrize("mutant", sorted(MUTANTS))
def test_run_comparison_names_a_one_detail_difference(tmp_path, mutant):
    """neat-python's classes with one detail changed are caught, and the message names the field."""
    impl, field = MUTANTS[mutant]
    path = es.write_config(str(tmp_path / "neat.cfg"), pop_size=30)
    reference, candidate = both_runs(impl, path, 1, es.network_fitness)
    with pytest.raises(AssertionError) as failure:
        assert_runs_agree(reference, candidate, 4, mutant)
    assert field in str(failure.value), str(failure.value)


def test_run_comparison_passes_neat_python_against_itself(tmp_path):
    """Two runs of neat-python's classes, alternating in one process, with checkpoints: no difference."""
    path = es.write_config(str(tmp_path / "neat.cfg"), pop_size=30, feed_forward=False)
    reference, candidate = both_runs(NEAT_PYTHON, path, 1, es.editing_fitness, checkpoints=str(tmp_path) + os.sep)
    assert assert_runs_agree(reference, candidate, 6, "neat-python twice") == 6


def test_method_comparison_catches_a_distance_one_ulp_off(tmp_path):
    """A distance one ULP larger changes no run here, but the call-by-call check names it."""
    path = es.write_config(str(tmp_path / "neat.cfg"), pop_size=20)
    reference, candidate = both_runs(es.broken("distance-ulp", genome=es.DistanceUlpGenome), path, 1, es.key_fitness)
    assert_runs_agree(reference, candidate, 2, "distance one ULP off")
    with pytest.raises(AssertionError, match=r"distance: result > distance\(\d+, \d+\)"):
        assert_methods_agree(reference, candidate, "distance one ULP off")


def test_method_comparison_catches_an_extra_draw_in_mutate(tmp_path):
    """One extra draw inside one genome's mutate: the check of that call names it."""
    path = es.write_config(str(tmp_path / "neat.cfg"), pop_size=60)
    reference, candidate = both_runs(es.broken("extra-draw", genome=es.ExtraDrawGenome), path, 1, es.size_fitness)
    with pytest.raises(AssertionError, match=r"mutate\(40\)"):
        assert_methods_agree(reference, candidate, "extra draw in mutate", count=60)
