"""neatpar.nn.onnx_export (nn/onnx_export.py): genomes as ONNX models for Unity ML-Agents. Every exported model passes
onnx's full checker and runs in onnxruntime; its actions are compared with neat-python's networks
under neatpar's policy (outputs_to_actions), and its contract is read the way ML-Agents'
C# loader reads it.

Precision terms used below (the model computes in float32, neat-python in float64):
- a value is ill-conditioned when neat-python's own float64 result moves by more than 1e-5 (scores:
  1e-5 * max(1, |score|)) when every weight, bias, response and observation is multiplied by an
  independent random factor in [1 - 2**-23, 1 + 2**-23] (the size of float32 rounding; the largest
  movement over three draws). float32 cannot promise anything there; elsewhere a continuous action
  must be within 1e-4 of neat-python's.
- a discrete choice may differ from neat-python's only at a near-tie: the model's choice is allowed
  by the mask, and neat-python's score of it is within 1e-4 * max(1, |best|) of the best allowed
  score, or one of the two scores is ill-conditioned or not finite.
"""
import copy
from dataclasses import dataclass

import neat
import numpy as np
import onnx
import pytest
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st
from onnx import TensorProto

from support.configs import ALL_ACTIVATIONS, ALL_AGGREGATIONS, hand_genome, make_config
from support.onnx_models import checked_session, memory_size, read_like_ml_agents, record_ball_episodes, replay_deviation, value_info
from neatpar.environment import Layout
from neatpar.envs.unity.adapter import outputs_to_actions
from neatpar.errors import ExportError
from neatpar.nn.onnx_export import export_policy

ACTIVATIONS, AGGREGATIONS = ALL_ACTIVATIONS.split(), ALL_AGGREGATIONS.split()
TOLERANCE = 1e-4
ILL_CONDITIONED = 1e-5
PERTURBATION = 2.0 ** -23
FLOAT32_RANGE = (1e-30, 1e30)  # magnitudes float32 holds with room to spare (normal: 1.2e-38 to 3.4e38)


# ---------------------------------------------------------------- genomes, configs, models

@pytest.fixture(scope="module")
def configs(tmp_path_factory):
    """(num_inputs, num_outputs) -> a config offering every built-in function, built once."""
    folder, made = tmp_path_factory.mktemp("configs"), {}

    def get(num_inputs: int, num_outputs: int):
        if (num_inputs, num_outputs) not in made:
            made[num_inputs, num_outputs] = make_config(
                folder, f"{num_inputs}-{num_outputs}.cfg", num_inputs=num_inputs, num_outputs=num_outputs,
                feed_forward="false", activation_options=ALL_ACTIVATIONS, aggregation_options=ALL_AGGREGATIONS,
                activation_mutate_rate=0.4, aggregation_mutate_rate=0.4, response_mutate_rate=0.3,
                response_init_stdev=0.3)
        return made[num_inputs, num_outputs]
    return get


# A network kind, as the helpers below take it: False (feed-forward), True (recurrent) or a CTRNN's
# (advance_time, time_step): each model decision is one CTRNN.advance.
CTRNN = (0.1, 0.02)   # Unity's defaults: decisions every 5 fixed steps of 0.02 s


def is_ctrnn(kind) -> bool:
    return isinstance(kind, tuple)


def exported(genome, config, layout: Layout, recurrent=False) -> onnx.ModelProto:
    """export_policy for a network kind, and onnx's full check of the model (with shape
    inference): every model the tests export goes through here."""
    if is_ctrnn(recurrent):
        model = export_policy(genome, config, layout, ctrnn=recurrent)
    else:
        model = export_policy(genome, config, layout, recurrent)
    onnx.checker.check_model(model, full_check=True)
    return model


# ---------------------------------------------------------------- episodes of observations and masks

@dataclass
class Episode:
    """Observations (one float32 array per step) and masks (per step, per branch: True = masked,
    as mlagents-envs gives them) for a batch of agents."""
    observations: list
    masks: list


def random_episode(layout: Layout, rng, rows: int, steps: int, scale: float) -> Episode:
    observations = [rng.normal(scale=scale, size=(rows, layout.inputs)).astype(np.float32) for _ in range(steps)]
    masks = []
    for _ in range(steps):
        step = []
        for size in layout.branches:
            masked = rng.random((rows, size)) < 0.4
            masked[0] = False          # every action allowed
            masked[1 % rows] = True    # none allowed: action 0
            step.append(masked)
        masks.append(step)
    return Episode(observations, masks)


def neat_outputs(genome, config, episode: Episode, recurrent) -> list:
    """neat-python's raw outputs per step (one RecurrentNetwork or CTRNN per row, memory carried)."""
    if is_ctrnn(recurrent):
        nets = [neat.ctrnn.CTRNN.create(genome, config) for _ in episode.observations[0]]
        return [np.array([net.advance(row.tolist(), *recurrent) for net, row in zip(nets, x)])
                for x in episode.observations]
    if not recurrent:
        net = neat.nn.FeedForwardNetwork.create(genome, config)
        return [np.array([net.activate(row.tolist()) for row in x]) for x in episode.observations]
    nets = [neat.nn.RecurrentNetwork.create(genome, config) for _ in episode.observations[0]]
    return [np.array([net.activate(row.tolist()) for net, row in zip(nets, x)]) for x in episode.observations]


def perturbed(genome, rng):
    genome = copy.deepcopy(genome)
    for gene in genome.connections.values():
        gene.weight *= 1 + PERTURBATION * rng.uniform(-1, 1)
    for gene in genome.nodes.values():
        gene.bias *= 1 + PERTURBATION * rng.uniform(-1, 1)
        gene.response *= 1 + PERTURBATION * rng.uniform(-1, 1)
        gene.time_constant *= 1 + PERTURBATION * rng.uniform(-1, 1)
    return genome


def perturbed_outputs(genome, config, episode: Episode, recurrent, rng, draws: int = 3) -> list:
    """neat-python's outputs per step (per draw) with every weight, bias, response, time constant
    and observation multiplied by an independent random factor in [1 - 2**-23, 1 + 2**-23]."""
    shaken = []
    for _ in range(draws):
        observations = [x * (1 + PERTURBATION * rng.uniform(-1, 1, x.shape)) for x in episode.observations]
        shaken.append(neat_outputs(perturbed(genome, rng), config, Episode(observations, episode.masks), recurrent))
    return shaken


def spread(view, reference: np.ndarray, shaken: list) -> np.ndarray:
    """The largest movement of view(outputs) over the perturbed draws; NaN where any is not finite."""
    with np.errstate(invalid="ignore"):
        return np.max([np.abs(view(p) - view(reference)) for p in shaken], axis=0)


def model_actions(model: onnx.ModelProto, layout: Layout, episode: Episode) -> list:
    """The model's (continuous, discrete) actions per step, memory carried from step to step as
    Unity carries it (zeros at the episode's start)."""
    session = checked_session(model)
    names = [o.name for o in session.get_outputs()]
    rows = len(episode.observations[0])
    memory = np.zeros((rows, 1, memory_size(model)), np.float32)
    actions = []
    for x, masks in zip(episode.observations, episode.masks):
        feeds, start = {}, 0
        for i, size in enumerate(layout.observation_sizes):
            feeds[f"obs_{i}"] = x[:, start:start + size]
            start += size
        if layout.branches:
            feeds["action_masks"] = 1.0 - np.concatenate(masks, axis=1).astype(np.float32)
        if memory.shape[2]:
            feeds["recurrent_in"] = memory
        out = dict(zip(names, session.run(None, feeds)))
        if memory.shape[2]:
            memory = out["recurrent_out"]
        actions.append((out.get("continuous_actions"), out.get("discrete_actions")))
    return actions


@dataclass
class Parity:
    """What one comparison found: continuous values compared, exempt as ill-conditioned and the
    worst error among the others; discrete choices compared and those that differ (near-ties)."""
    compared: int = 0
    exempt: int = 0
    worst: float = 0.0
    choices: int = 0
    near_ties: int = 0

    def __add__(self, other: "Parity") -> "Parity":
        return Parity(self.compared + other.compared, self.exempt + other.exempt, max(self.worst, other.worst),
                      self.choices + other.choices, self.near_ties + other.near_ties)


def assert_policy_parity(genome, config, layout: Layout, episode: Episode, recurrent, rng, draws: int = 3) -> Parity:
    """The exported model's actions against neatpar's policy on neat-python's outputs, step by step
    (`draws` perturbed runs decide which values are ill-conditioned; long CTRNN sequences need more
    to find them all)."""
    reference = neat_outputs(genome, config, episode, recurrent)
    draws = perturbed_outputs(genome, config, episode, recurrent, rng, draws)
    c = layout.continuous
    parity = Parity()
    model = exported(genome, config, layout, recurrent)
    for step, ((continuous, discrete), ref, masks) in enumerate(
            zip(model_actions(model, layout, episode), reference, episode.masks)):
        shaken = [d[step] for d in draws]
        expected = outputs_to_actions(layout, ref, masks if layout.branches else None)
        if c:
            sound = spread(lambda o: np.clip(o[:, :c], -1, 1), ref, shaken) <= ILL_CONDITIONED  # NaN: not sound
            error = np.abs(continuous - expected.continuous)
            assert continuous.dtype == np.float32 and continuous.shape == expected.continuous.shape
            assert np.all(error[sound] <= TOLERANCE), (
                f"step {step}: continuous action off by {error[sound].max():.3g} where neat-python is "
                f"well-conditioned")
            parity.compared += error.size
            parity.exempt += int((~sound).sum())
            parity.worst = max(parity.worst, float(error[sound].max(initial=0.0)))
        if layout.branches:
            assert discrete.dtype == np.int64 and discrete.shape == expected.discrete.shape
            parity.choices += discrete.size
            parity.near_ties += assert_choices(discrete, expected.discrete, ref[:, c:],
                                               spread(lambda o: o[:, c:], ref, shaken), masks, layout.branches, step)
    return parity


def assert_choices(chosen, expected, scores, moved, masks, branches, step) -> int:
    """Discrete choices equal neat-python's except at near-ties (module docstring); returns how
    many differ."""
    start = 0
    for b, size in enumerate(branches):
        s, m, masked = scores[:, start:start + size], moved[:, start:start + size], masks[b]
        for row in np.flatnonzero(chosen[:, b] != expected[:, b]):
            a, best = int(chosen[row, b]), int(expected[row, b])
            assert 0 <= a < size and not masked[row, a], f"step {step}, row {row}: chose masked action {a}"
            gap = s[row, best] - s[row, a]
            scale = max(1.0, abs(s[row, best]))
            shaky = not (m[row, a] <= ILL_CONDITIONED * scale and m[row, best] <= ILL_CONDITIONED * scale)
            assert shaky or gap <= TOLERANCE * scale, (
                f"step {step}, row {row}, branch {b}: chose {a} (score {s[row, a]!r}) over {best} "
                f"(score {s[row, best]!r}), not a near-tie")
        start += size
    return int((chosen != expected).sum())


def within_float32_range(genome, config, episode: Episode, recurrent) -> bool:
    """Whether neat-python's evaluation stays where float32 can follow it: every parameter, input,
    weighted input, aggregate, pre-activation and node value is 0 or of a magnitude in
    FLOAT32_RANGE, and neat-python raises no OverflowError (float ** n). (A CTRNN: its parameters
    and node values after each decision.)"""
    if is_ctrnn(recurrent):
        return ctrnn_within_float32_range(genome, config, episode, recurrent)
    make = neat.nn.RecurrentNetwork.create if recurrent else neat.nn.FeedForwardNetwork.create
    nets = [make(genome, config) for _ in episode.observations[0]]
    seen = []
    try:
        for x in episode.observations:
            for net, row in zip(nets, x):
                net.activate(row.tolist())
                read = net.values[1 - net.active] if recurrent else net.values  # this step's inputs
                written = net.values[net.active] if recurrent else net.values
                seen += read.values()
                for node, _, aggregation, bias, response, links in net.node_evals:
                    terms = [read[i] * w for i, w in links]
                    s = aggregation(terms)
                    seen += [*terms, *(w for _, w in links), s, bias, response, bias + response * s, written[node]]
    except OverflowError:
        return False
    return in_float32_range(seen)


def in_float32_range(seen) -> bool:
    magnitude = np.abs(np.array(seen, dtype=np.float64))
    return bool(np.all((magnitude == 0) | ((magnitude >= FLOAT32_RANGE[0]) & (magnitude <= FLOAT32_RANGE[1]))))


def ctrnn_within_float32_range(genome, config, episode: Episode, times) -> bool:
    nets = [neat.ctrnn.CTRNN.create(genome, config) for _ in episode.observations[0]]
    seen = [v for ne in nets[0].node_evals.values() for v in (ne.bias, ne.response, ne.time_constant,
                                                             *(w for _, w in ne.links))]
    try:
        for x in episode.observations:
            for net, row in zip(nets, x):
                net.advance(row.tolist(), *times)
                seen += [v for buffer in net.values for v in buffer.values()]
    except OverflowError:
        return False
    return in_float32_range(seen)


# ---------------------------------------------------------------- random genomes (hypothesis)

def parameters(limit: float):
    """0.0 or a magnitude in [1e-3, limit] of either sign, as neat-python's parameters are."""
    return st.one_of(st.just(0.0), st.floats(1e-3, limit), st.floats(-limit, -1e-3))


weights, biases, responses = parameters(3.0), parameters(2.0), st.one_of(st.just(1.0), parameters(2.0))


@st.composite
def policies(draw, recurrent: bool):
    """(layout, nodes, links): several sensors, both action kinds, hidden nodes, disabled links,
    unreachable nodes, outputs feeding other nodes; every built-in function."""
    continuous = draw(st.integers(0, 3))
    layout = Layout(tuple(draw(st.lists(st.integers(1, 3), min_size=1, max_size=3))), continuous,
                    tuple(draw(st.lists(st.integers(1, 3), min_size=0 if continuous else 1, max_size=2))))
    keys = list(range(layout.outputs + draw(st.integers(0, 4))))
    nodes = {k: (draw(st.sampled_from(ACTIVATIONS)), draw(st.sampled_from(AGGREGATIONS)), draw(biases),
                 draw(responses)) for k in keys}
    order = {k: i for i, k in enumerate(draw(st.permutations(keys)))}  # feed-forward: links run forward
    sources = [-i - 1 for i in range(layout.inputs)] + keys
    pairs = [(s, t) for s in sources for t in keys if recurrent or s < 0 or order[s] < order[t]]
    chosen = draw(st.lists(st.sampled_from(pairs), max_size=14, unique=True))
    links = [(s, t, draw(weights), draw(st.sampled_from([True, True, True, False]))) for s, t in chosen]
    return layout, nodes, links


def report(parity: Parity) -> None:
    """Hypothesis statistics (pytest --hypothesis-show-statistics): how often the exemptions apply."""
    event(f"ill-conditioned continuous values: {'some' if parity.exempt else 'none'}")
    event(f"discrete near-ties: {'some' if parity.near_ties else 'none'}")


parity_settings = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@parity_settings
@given(policy=policies(recurrent=False), seed=st.integers(0, 2**32 - 1), scale=st.sampled_from([0.5, 3.0]))
def test_feed_forward_models_act_as_neat_python(configs, policy, seed, scale):
    """Random feed-forward genomes and observations: the model's actions are neatpar's policy on
    neat-python's FeedForwardNetwork (continuous within 1e-4, choices equal but for near-ties)."""
    layout, nodes, links = policy
    config = configs(layout.inputs, layout.outputs)
    genome = hand_genome(config, nodes, links)
    rng = np.random.default_rng(seed)
    episode = random_episode(layout, rng, rows=8, steps=1, scale=scale)
    assume(within_float32_range(genome, config, episode, False))
    report(assert_policy_parity(genome, config, layout, episode, False, rng))


@parity_settings
@given(policy=policies(recurrent=True), seed=st.integers(0, 2**32 - 1), scale=st.sampled_from([0.5, 3.0]),
       steps=st.integers(1, 6))
def test_recurrent_models_act_as_neat_python_with_memory_carried(configs, policy, seed, scale, steps):
    """Random recurrent genomes over sequences of 1-6 steps, memory carried through recurrent_in /
    recurrent_out: the actions follow neat-python's RecurrentNetwork step by step."""
    layout, nodes, links = policy
    config = configs(layout.inputs, layout.outputs)
    genome = hand_genome(config, nodes, links)
    rng = np.random.default_rng(seed)
    episode = random_episode(layout, rng, rows=6, steps=steps, scale=scale)
    assume(within_float32_range(genome, config, episode, True))
    report(assert_policy_parity(genome, config, layout, episode, True, rng))


# Decision and step times (seconds) for CTRNN models: whole multiples of the step (neat-python's
# float64 clock then adds rounding steps the model must follow), a last partial step, one step per
# decision, a step longer than the decision, dyadic times.
CTRNN_TIMES = [CTRNN, (0.1, 0.01), (0.1, 0.03), (0.02, 0.02), (0.05, 0.1), (0.25, 0.0625)]


@st.composite
def ctrnn_policies(draw):
    """policies(recurrent=True) with a time constant per node."""
    layout, nodes, links = draw(policies(recurrent=True))
    return layout, {k: (*v, draw(st.floats(0.05, 2.0))) for k, v in nodes.items()}, links


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(policy=ctrnn_policies(), seed=st.integers(0, 2**32 - 1), scale=st.sampled_from([0.5, 3.0]),
       times=st.sampled_from(CTRNN_TIMES), decisions=st.integers(10, 60))
def test_ctrnn_models_act_as_neat_python_over_long_sequences(configs, policy, seed, scale, times, decisions):
    """Random CTRNN genomes over 10-60 decisions, memory carried: each decision of the model is
    neat-python's CTRNN.advance(observations, advance_time, time_step), rounding steps included."""
    layout, nodes, links = policy
    config = configs(layout.inputs, layout.outputs)
    genome = hand_genome(config, nodes, links)
    rng = np.random.default_rng(seed)
    episode = random_episode(layout, rng, rows=4, steps=decisions, scale=scale)
    assume(within_float32_range(genome, config, episode, times))
    report(assert_policy_parity(genome, config, layout, episode, times, rng, draws=8))


# ---------------------------------------------------------------- every function, and structure

PAIR_LAYOUT = Layout((2, 1), continuous=4, branches=(3,))
PAIR_INPUTS = np.array([[0.0, 0.0, 0.0], [-0.0, 0.0, -0.0], [0.3, -0.2, 0.1], [1.0, -2.0, 0.5], [15.0, -15.0, 3.0],
                        [1e-8, -1e-8, 0.0], [0.2, 0.2, 0.2], [-0.7, 0.05, 0.9], [2.5, 1.5, -3.0]], dtype=np.float32)


def pair_genome(config, activation: str, aggregation: str):
    """Every node computes the function pair under test, except the probes: outputs that pass
    another node's value on scaled by 0.05, so that values beyond [-1, 1] are compared too."""
    f = (activation, aggregation)
    probe = ("identity", "sum", 0.0, 1.0)
    return hand_genome(config, {
        0: (*f, 0.3, -1.7), 1: (*f, 0.0, 1.0), 2: probe, 3: probe, 4: (*f, 0.1, 0.5), 5: probe, 6: (*f, -0.2, 0.8),
        7: (*f, -0.5, 0.9),    # hidden, four inputs (median of an even count)
        8: (*f, 1.0, 1.0),     # no inputs reach it: a bias neuron
    }, [(-1, 0, 1.5, True), (-2, 0, -0.7, True), (-3, 0, 2.0, False), (8, 0, 0.1, True), (7, 1, 2.5, True),
        (0, 2, 0.05, True), (7, 3, 0.05, True), (-1, 4, 0.9, True), (-2, 4, 0.6, True), (-3, 4, -0.4, True),
        (1, 5, 0.05, True), (0, 6, -0.3, True), (-3, 6, 1.2, True), (-1, 7, 0.3, True), (-2, 7, -1.1, True),
        (-3, 7, 0.8, True), (8, 7, 0.4, True)])


@pytest.mark.parametrize("activation", ACTIVATIONS)
@pytest.mark.parametrize("aggregation", AGGREGATIONS)
def test_every_function_pair(configs, activation, aggregation):
    config = configs(3, 7)
    genome = pair_genome(config, activation, aggregation)
    rng = np.random.default_rng(0)
    for recurrent in (False, True, CTRNN):
        masks = [[np.zeros((len(PAIR_INPUTS), 3), bool)] for _ in range(3)]
        episode = Episode([PAIR_INPUTS] * 3, masks)
        # (A CTRNN's Euler steps scale values by dt / tau: on the largest inputs some reach 5e-31,
        # below FLOAT32_RANGE but normal in float32.)
        assert is_ctrnn(recurrent) or within_float32_range(genome, config, episode, recurrent)
        parity = assert_policy_parity(genome, config, PAIR_LAYOUT, episode, recurrent, rng)
        assert parity.compared and parity.exempt <= parity.compared // 4


def test_ties_and_scores_beyond_float32_resolve_as_neatpar(configs):
    """Exact ties go as neat-python and numpy break them (maxabs keeps the first of equal
    magnitudes, a branch takes the first of equal scores), the median of duplicates is one of
    them, and an allowed action whose score is beyond float32's range (-1.5e78 here, -inf in
    float32) still beats masked ones."""
    config = configs(2, 5)
    layout = Layout((2,), continuous=2, branches=(3,))
    genome = hand_genome(config, {
        0: ("identity", "maxabs", 0.0, 1.0), 1: ("identity", "median", 0.0, 1.0),
        2: ("clamped", "sum", 0.0, 1.0), 3: ("clamped", "sum", 0.0, 1.0), 4: ("identity", "sum", 0.0, 1.0),
        10: ("cube", "sum", 0.0, 1.0), 11: ("exp", "sum", 60.0, 1.0), 12: ("identity", "sum", 0.0, 1.0),
    }, [(-1, 0, 1.0, True), (-2, 0, 1.0, True), (-1, 12, 1.0, True), (-1, 1, 1.0, True), (12, 1, 1.0, True),
        (-2, 1, 1.0, True), (-1, 2, 10.0, True), (-2, 3, -10.0, True), (11, 10, 1.0, True), (10, 4, -1.0, True)])
    x = np.array([[0.5, -0.5], [-0.5, 0.5]] * 4, dtype=np.float32)
    allowed = [[True] * 3, [False, True, True], [False, False, True], [False] * 3]
    masks = [[~np.repeat(np.array(allowed), 2, axis=0)]]
    episode = Episode([x], masks)
    (continuous, discrete), = model_actions(exported(genome, config, layout), layout, episode)
    expected = outputs_to_actions(layout, neat_outputs(genome, config, episode, False)[0], masks[0])
    assert continuous.tolist() == expected.continuous.tolist() == [[0.5, 0.5], [-0.5, -0.5]] * 4
    assert discrete.tolist() == expected.discrete.tolist() == [[0], [0], [1], [1], [2], [2], [0], [0]]


def structure_genome(config):
    """Disabled links, an unreachable node, an output feeding another output and a hidden node,
    a bias neuron and a self-loop (recurrent only)."""
    return hand_genome(config, {
        0: ("tanh", "sum", 0.1, 1.0), 1: ("sigmoid", "max", -0.3, 1.2), 2: ("identity", "mean", 0.0, 1.0),
        10: ("relu", "sum", 0.2, 1.0),       # hidden, fed by output 0
        11: ("sin", "product", 0.5, 1.0),    # unreachable: its only way out is disabled
        12: ("gauss", "sum", 0.7, 1.0),      # a bias neuron feeding output 2
        13: ("cube", "sum", 0.0, 1.0),       # reachable only through a disabled link
    }, [(-1, 0, 0.8, True), (-2, 0, -0.5, True), (0, 1, 1.3, True), (0, 10, 0.9, True), (10, 1, -0.6, True),
        (-3, 11, 1.1, True), (11, 2, 0.4, False), (12, 2, 1.5, True), (-1, 13, 2.0, True), (13, 2, 0.3, False),
        (-4, 2, 0.25, True), (10, 10, 0.5, True)])


@pytest.mark.parametrize("recurrent", [False, True, CTRNN], ids=["feedforward", "recurrent", "ctrnn"])
def test_structure_follows_neat_python(configs, recurrent):
    config = configs(4, 3)
    genome = structure_genome(config)
    if not recurrent:
        del genome.connections[(10, 10)]  # feed-forward genomes have no cycles
    layout = Layout((3, 1), continuous=1, branches=(2,))
    episode = random_episode(layout, np.random.default_rng(1), rows=5, steps=4, scale=1.0)
    assert_policy_parity(genome, config, layout, episode, recurrent, np.random.default_rng(2))
    model = exported(genome, config, layout, recurrent)
    net = neat.nn.RecurrentNetwork.create(genome, config)
    # Memory holds exactly the nodes neat-python's RecurrentNetwork evaluates (a CTRNN: its two
    # buffers of the same nodes, and the decision count); none without it.
    if is_ctrnn(recurrent):
        assert memory_size(model) == 2 * len(neat.ctrnn.CTRNN.create(genome, config).node_evals) + 1
    else:
        assert memory_size(model) == (len(net.node_evals) if recurrent else 0)


# ---------------------------------------------------------------- float32 precision, measured

def test_float32_precision_on_genomes_evolved_by_neat_python(configs):
    """The documented precision (onnx_export's docstring): on genomes mutated by neat-python's own
    operators with every function, well-conditioned continuous actions are within 1e-4 (measured
    worst 1.3e-5), fewer than 1% of the values are ill-conditioned (measured 0.04% to 0.4%) and
    fewer than 2% of the choices are near-ties (measured 0.01% to 0.5%)."""
    layout = Layout((2, 3), continuous=2, branches=(3,))
    config = configs(5, 5)
    total = Parity()
    for recurrent, seed in ((False, 3), (True, 4)):
        rng = np.random.default_rng(seed)
        for genome in list(neat.Population(config, seed=seed).population.values())[:12]:
            for _ in range(30):
                genome.mutate(config.genome_config)
            episode = random_episode(layout, rng, rows=16, steps=4 if recurrent else 1, scale=3.0)
            if not within_float32_range(genome, config, episode, recurrent):
                continue
            total += assert_policy_parity(genome, config, layout, episode, recurrent, rng)
    assert total.compared > 1000 and total.exempt < 0.01 * total.compared
    assert total.worst < 5e-5
    assert total.choices > 500 and total.near_ties < 0.02 * total.choices


# ---------------------------------------------------------------- ML-Agents' C# loader


@pytest.mark.parametrize("recurrent", [False, True, CTRNN], ids=["feedforward", "recurrent", "ctrnn"])
@pytest.mark.parametrize("continuous, branches", [(2, ()), (0, (3, 2)), (1, (4,))])
@pytest.mark.parametrize("deterministic", [False, True])
def test_ml_agents_loader_accepts_the_model(configs, recurrent, continuous, branches, deterministic):
    """ML-Agents 3.0's C# checks (read_like_ml_agents) pass for feed-forward and recurrent models of
    every kind of action, with and without deterministic inference, and fail for a behavior with
    other sensors or actions."""
    sensors = [3, 1]
    layout = Layout(tuple(sensors), continuous, branches)
    config = configs(layout.inputs, layout.outputs)
    hidden = layout.outputs
    genome = hand_genome(config, {k: ("tanh", "sum", 0.1 * k, 1.0) for k in range(hidden + 1)},
                         [(-1, 0, 0.5, True), (-2, hidden, 0.7, True), (hidden, 0, 1.0, True),
                          (-4, hidden - 1, -0.4, True)])
    model = exported(genome, config, layout, recurrent)
    assert read_like_ml_agents(model, sensors, continuous, branches, deterministic) == []
    assert (memory_size(model) > 0) == bool(recurrent)
    # The same model for another behavior is refused by the same checks, naming what differs.
    assert any("Observation" in f for f in read_like_ml_agents(model, [3, 2], continuous, branches, deterministic))
    assert any("Continuous" in f for f in read_like_ml_agents(model, sensors, continuous + 1, branches, deterministic))
    assert any("Discrete" in f for f in read_like_ml_agents(model, sensors, continuous, branches + (2,), deterministic))
    assert any("Observation Placeholder" in f for f in read_like_ml_agents(model, sensors + [2], continuous, branches,
                                                                            deterministic))


def test_model_matches_ml_agents_own_exports_in_form(configs):
    """Opset 9 as ML-Agents exports, an IR version onnxruntime reads, float32 constants of the
    shapes ML-Agents writes, a dynamic batch on every action output, and nothing else."""
    layout = Layout((3, 1), continuous=1, branches=(2,))
    model = exported(structure_genome(configs(4, 3)), configs(4, 3), layout, recurrent=True)
    assert [(o.domain, o.version) for o in model.opset_import] == [("", 9)] and model.ir_version == 4
    inputs, outputs = value_info(model.graph.input), value_info(model.graph.output)
    assert list(inputs) == ["obs_0", "obs_1", "action_masks", "recurrent_in"]
    assert list(outputs) == ["version_number", "memory_size", "continuous_actions", "continuous_action_output_shape",
                             "deterministic_continuous_actions", "discrete_actions", "discrete_action_output_shape",
                             "deterministic_discrete_actions", "recurrent_out"]
    m = memory_size(model)
    assert outputs["version_number"] == (TensorProto.FLOAT, [1]) and outputs["memory_size"] == (TensorProto.FLOAT, [1])
    assert outputs["discrete_action_output_shape"] == (TensorProto.FLOAT, [1, 1])
    assert outputs["discrete_actions"] == (TensorProto.INT64, ["batch", 1])
    assert outputs["continuous_actions"] == (TensorProto.FLOAT, ["batch", 1])
    assert outputs["recurrent_out"] == (TensorProto.FLOAT, ["batch", 1, m])


# On Barracuda's Documentation~/SupportedOperators.md and Sentis 2.1's supported-operators.md (float
# on the CPU, GPUCompute and GPUPixel backends).
ON_BOTH_LISTS = {"Identity", "Slice", "Concat", "Flatten", "Unsqueeze", "Mul", "Add", "Sub", "Div", "Sum", "Max",
                 "Min", "Abs", "Relu", "LeakyRelu", "Elu", "Selu", "Sigmoid", "Tanh", "Sin", "Exp", "Log",
                 "Reciprocal", "Clip", "Greater", "Where", "Cast", "ReduceMax", "ArgMax", "Gather"}


def test_every_function_uses_only_operators_both_unity_engines_support(configs):
    used = set()
    for activation in ACTIVATIONS:
        for aggregation in AGGREGATIONS:
            for recurrent in (False, True, CTRNN):
                model = exported(pair_genome(configs(3, 7), activation, aggregation), configs(3, 7),
                                      PAIR_LAYOUT, recurrent)
                used |= {n.op_type for n in model.graph.node}
    assert used == ON_BOTH_LISTS


# ---------------------------------------------------------------- errors and files

def twice(z):
    return 2.0 * z


def first(values):
    return values[0] if values else 0.0


def test_functions_registered_on_the_config_are_refused_by_name(tmp_path):
    config = make_config(tmp_path, num_inputs=2, num_outputs=1, activation_options="sigmoid twice",
                         aggregation_options="sum first")
    config.genome_config.add_activation("twice", twice)
    config.genome_config.add_aggregation("first", first)
    genome = hand_genome(config, {0: ("twice", "first", 0.0, 1.0)}, [(-1, 0, 1.0, True)])
    with pytest.raises(ExportError, match="'twice' \\(activation\\), 'first' \\(aggregation\\)") as error:
        export_policy(genome, config, Layout((2,), 1), recurrent=False)
    assert "\n" not in str(error.value)
    config.genome_config.add_activation("sigmoid", twice)  # a built-in name redefined by the user
    genome = hand_genome(config, {0: ("sigmoid", "sum", 0.0, 1.0)}, [(-1, 0, 1.0, True)])
    with pytest.raises(ExportError, match="'sigmoid' \\(activation\\)"):
        export_policy(genome, config, Layout((2,), 1), recurrent=False)


def test_layouts_that_do_not_fit_are_one_line_errors(configs):
    config = configs(4, 3)
    genome = structure_genome(config)
    cases = [
        (lambda: export_policy(genome, config, Layout((3, 2), 1, (2,))), "num_inputs = 4.*observes 5 values"),
        (lambda: export_policy(genome, config, Layout((4,), 3, (2,))), "num_outputs = 3.*takes 5 action values"),
        (lambda: export_policy(genome, config, Layout((4,), 0, ())), "no actions"),
        (lambda: export_policy(genome, config, Layout((0, 4), 3)), "observation sizes"),
        (lambda: export_policy(genome, config, Layout((4,), 1, (0,))), "branch sizes >= 1"),
    ]
    for make, message in cases:
        with pytest.raises(ExportError, match=message) as error:
            make()
        assert "\n" not in str(error.value)


# ---------------------------------------------------------------- a real episode

def on_a_cycle(node, edges) -> bool:
    """Whether `node` can reach itself along `edges` ((source, target) pairs)."""
    seen, stack = set(), [b for a, b in edges if a == node]
    while stack:
        n = stack.pop()
        if n == node:
            return True
        if n not in seen:
            seen.add(n)
            stack += [b for a, b in edges if a == n]
    return False


def ball_genome(tmp_path):
    """A recurrent genome for the ball task: neat-python's first generation mutated by its own
    operators, the first with a hidden node on a loop (its value feeds back into itself)."""
    config = make_config(tmp_path, num_inputs=8, num_outputs=2, feed_forward="false",
                         activation_options="tanh sigmoid relu", activation_mutate_rate=0.3)
    population = neat.Population(config, seed=7)
    for genome in population.population.values():
        for _ in range(12):
            genome.mutate(config.genome_config)
        evaluated = {node for node, *_ in neat.nn.RecurrentNetwork.create(genome, config).node_evals}
        edges = [k for k, c in genome.connections.items() if c.enabled and k[0] in evaluated and k[1] in evaluated]
        if any(on_a_cycle(n, edges) for n in evaluated - {0, 1}):
            return genome, config
    raise AssertionError("no genome with a hidden node on a loop")


def test_a_real_ball_episode_replays_the_same_actions(tmp_path):
    genome, config = ball_genome(tmp_path)
    layout, recorded = record_ball_episodes(genome, config, agents=3, max_steps=150)
    model = exported(genome, config, layout, recurrent=True)
    assert memory_size(model) > 0
    steps, worst = replay_deviation(model, recorded)
    assert steps > 20 and len(recorded) == 3
    assert worst <= TOLERANCE


def test_ctrnn_float32_precision_on_genomes_evolved_by_neat_python(tmp_path):
    """The documented CTRNN precision (onnx_export's docstring): genomes mutated by neat-python's
    own operators with every function and evolving time constants, 80 decisions of 0.1 s in
    steps of 0.02 s (rounding steps included): well-conditioned continuous actions within 1e-4
    (measured worst 2.2e-6 to 1.1e-5 over seeds 5 to 8), ill-conditioned values under 5% (measured
    0.03% to 1.4%; 8 perturbed runs find them)."""
    layout = Layout((2, 3), continuous=3, branches=(2,))
    config = make_config(tmp_path, num_inputs=5, num_outputs=5, feed_forward="false",
                         activation_options=ALL_ACTIVATIONS, aggregation_options=ALL_AGGREGATIONS,
                         activation_mutate_rate=0.4, aggregation_mutate_rate=0.4,
                         response_mutate_rate=0.3, response_init_stdev=0.3, time_constant_init_mean=0.5,
                         time_constant_init_stdev=0.3, time_constant_mutate_rate=0.5, time_constant_mutate_power=0.2,
                         time_constant_min_value=0.05, time_constant_max_value=5.0)
    rng = np.random.default_rng(5)
    total, kept = Parity(), 0
    for genome in list(neat.Population(config, seed=5).population.values())[:12]:
        for _ in range(30):
            genome.mutate(config.genome_config)
        episode = random_episode(layout, rng, rows=6, steps=80, scale=1.0)
        if not within_float32_range(genome, config, episode, CTRNN):
            continue
        kept += 1
        total += assert_policy_parity(genome, config, layout, episode, CTRNN, rng, draws=8)
    assert kept >= 6 and total.compared > 10_000 and total.exempt < 0.05 * total.compared
    assert total.worst < 5e-5
