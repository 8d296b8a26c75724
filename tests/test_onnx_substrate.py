"""neatpar.nn.onnx_substrate (nn/onnx_substrate.py): a HyperNEAT genome's substrate network as an
ONNX model for ML-Agents, run in onnxruntime against the substrate population (its float64
outputs under neatpar's policy, outputs_to_actions), on random observations fed as ML-Agents feeds
them (images channels first) and on real ball episodes, one with the build's camera-like image; its
form read as ML-Agents reads it."""
import neat
import numpy as np
import pytest
from mlagents_envs.base_env import ActionTuple
from onnx import TensorProto

from support.configs import evolved_genomes
from support.hyperneat import cppn_config
from support.simulators import simulator
from support.onnx_models import (checked_session, memory_size, read_like_ml_agents, record_episodes, replay_deviation,
                                 value_info)
from neatpar.environment import Layout
from neatpar.envs.unity.adapter import outputs_to_actions
from neatpar.errors import ExportError
from neatpar.nn.hyperneat import Phenotype
from neatpar.nn.onnx_substrate import export_substrate_policy, onnx_shape
from neatpar.nn.substrate import IOShapes, Query, Substrate, make_substrate
from neatpar.nn.substrate_population import SubstratePopulation

# The float32 model against the float64 network (tests/test_onnx_export.py's terms): within
# TOLERANCE wherever the network is well-conditioned (its outputs move by at most ILL_CONDITIONED
# when its weights, biases and observations move by float32's rounding).
TOLERANCE = 1e-4
ILL_CONDITIONED = 1e-5
PERTURBATION = 2.0 ** -23
# onnx_export's operators (tests/test_onnx_export.py: on Barracuda's and Sentis' lists) and the
# two a substrate adds, also on both.
ALLOWED = {"Identity", "Slice", "Concat", "Flatten", "Unsqueeze", "Mul", "Add", "Sub", "Div", "Sum", "Max", "Min",
           "Abs", "Relu", "LeakyRelu", "Elu", "Selu", "Sigmoid", "Tanh", "Sin", "Exp", "Log", "Reciprocal", "Clip",
           "Greater", "Where", "Cast", "ReduceMax", "ArgMax", "Gather", "MatMul", "Transpose"}

CASES = {
    "vector": (((6,),), 2, ()),
    "image": (((7, 11, 3),), 2, ()),
    "grid, image and vector": (((4, 5), (3, 2, 2), (4,)), 1, (3, 2)),
    "discrete only": (((5,),), 0, (4,)),
}


def feeds(io: IOShapes, flat: np.ndarray, masks: np.ndarray) -> dict:
    """The flattened (H, W, C) observations as ML-Agents feeds a model: images [batch, C, H, W]."""
    out, start = {}, 0
    for i, shape in enumerate(io.sensors):
        size = int(np.prod(shape))
        part = flat[:, start:start + size].astype(np.float32).reshape((len(flat),) + shape)
        out[f"obs_{i}"] = part.transpose(0, 3, 1, 2) if len(shape) == 3 else part
        start += size
    if io.branches:
        out["action_masks"] = masks
    return out


def float64_outputs(weights, substrate, x: np.ndarray) -> np.ndarray:
    """The substrate network in float64 (numpy's sums, neat-python's activation on every value)."""
    activation = np.vectorize(neat.activations.ActivationFunctionSet().get(substrate.activation), otypes=[float])
    for w, b in zip(weights.weights, weights.biases):
        x = activation(b + x @ w)
    return x


def spread(weights, substrate, x: np.ndarray, rng, view, draws: int = 3) -> np.ndarray:
    """How far view(float64 outputs) moves when every weight, bias and observation is multiplied
    by an independent factor in [1 - 2**-23, 1 + 2**-23] (float32's rounding), the most over
    `draws`; NaN where a value is not finite."""
    base = view(float64_outputs(weights, substrate, x))
    shake = lambda a: a * (1 + PERTURBATION * rng.uniform(-1, 1, a.shape))  # noqa: E731
    moved = [view(float64_outputs(Phenotype(tuple(map(shake, weights.weights)), tuple(map(shake, weights.biases))),
                                  substrate, shake(x))) for _ in range(draws)]
    with np.errstate(invalid="ignore"):
        return np.max([np.abs(m - base) for m in moved], axis=0)


def assert_acts_as_the_population(model, population, genome: int, io: IOShapes, rng, rows: int = 32) -> tuple:
    """Continuous actions within TOLERANCE where the network is well-conditioned (its float64
    outputs move by at most ILL_CONDITIONED under float32's rounding); each discrete choice
    neatpar's, or a near-tie of it, or between ill-conditioned scores. Returns (worst error where
    well-conditioned, ill-conditioned values, values)."""
    layout = Layout(tuple(int(np.prod(s)) for s in io.sensors), io.continuous, io.branches)
    flat = rng.uniform(-1, 1, (rows, io.inputs)).astype(np.float32).astype(np.float64)
    masks = (rng.random((rows, sum(io.branches))) < 0.7).astype(np.float32)   # 1 allowed, as the model reads them
    masks[0] = 0.0                                                                # none allowed: action 0
    ends = np.cumsum(io.branches).tolist()
    masked = [masks[:, end - size:end] < 0.5 for size, end in zip(io.branches, ends)]   # True masked, as mlagents
    outputs = population.activate(flat, np.full(rows, genome))
    c, weights = io.continuous, population.phenotype(genome)
    moved_actions = spread(weights, population.substrate, flat, rng, lambda o: np.clip(o[:, :c], -1.0, 1.0))
    moved = spread(weights, population.substrate, flat, rng, lambda o: o)
    expected = outputs_to_actions(layout, outputs, masked if io.branches else None)
    session = checked_session(model)
    got = dict(zip([o.name for o in session.get_outputs()], session.run(None, feeds(io, flat, masks))))
    worst, shaky = 0.0, 0
    if io.continuous:
        sound = moved_actions <= ILL_CONDITIONED                      # NaN: not sound
        error = np.abs(got["continuous_actions"] - expected.continuous)
        assert np.all(error[sound] <= TOLERANCE), f"off by {error[sound].max():.3g} where well-conditioned"
        worst, shaky = float(error[sound].max(initial=0.0)), int((~sound).sum())
    start = io.continuous
    for b, size in enumerate(io.branches):
        scores, scores_moved = outputs[:, start:start + size], moved[:, start:start + size]
        for r in np.flatnonzero(got["discrete_actions"][:, b] != expected.discrete[:, b]):
            chosen, best = int(got["discrete_actions"][r, b]), int(expected.discrete[r, b])
            assert not masked[b][r, chosen]
            scale = max(1.0, abs(scores[r, best]))
            unsure = not (scores_moved[r, [chosen, best]] <= ILL_CONDITIONED * scale).all()
            assert unsure or scores[r, best] - scores[r, chosen] <= TOLERANCE * scale
        start += size
    return worst, shaky, rows * io.continuous


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("activation, query", [("tanh", Query()), ("sigmoid", Query(bias=True)),
                                                ("sin", Query(bias=True, leo=True)), ("relu", Query(threshold=0.0))])
def test_models_act_as_the_substrate_population(tmp_path, case, activation, query):
    sensors, continuous, branches = CASES[case]
    io = IOShapes(sensors, continuous, branches)
    substrate = make_substrate(io, "2x3, 5", activation=activation, query=query)
    config = cppn_config(tmp_path, substrate, pop_size=4, activation_options="sigmoid gauss sin tanh abs",
                         activation_mutate_rate=0.3)
    genomes = evolved_genomes(config, 3, 10)
    population = SubstratePopulation.create(genomes, config, substrate)
    rng = np.random.default_rng(7)
    results = [assert_acts_as_the_population(export_substrate_policy(genome, config, substrate), population, g, io,
                                             rng) for g, genome in enumerate(genomes)]
    shaky, values = sum(r[1] for r in results), sum(r[2] for r in results)
    # Measured: worst 3.9e-6 where well-conditioned; ill-conditioned at most 4% of the values, but
    # 22% to 68% with sin (three layers of sin(5 z) with weights up to 5: a chaotic network).
    assert shaky <= (0.75 if activation == "sin" else 0.05) * values, f"{shaky} of {values} ill-conditioned"


def test_inputs_are_declared_as_ml_agents_exports_declare_them(tmp_path):
    """Images channels first ([batch, C, H, W], ModelSerializer._get_onnx_shape), other sensors as
    they are; ML-Agents' outputs in its order; no memory."""
    io = IOShapes(((84, 84, 3), (4, 5), (6,)), 2, (3,))
    substrate = make_substrate(io, "4")
    config = cppn_config(tmp_path, substrate)
    model = export_substrate_policy(evolved_genomes(config, 1, 2)[0], config, substrate)
    inputs, outputs = value_info(model.graph.input), value_info(model.graph.output)
    assert inputs == {"obs_0": (TensorProto.FLOAT, ["batch", 3, 84, 84]), "obs_1": (TensorProto.FLOAT, ["batch", 4, 5]),
                      "obs_2": (TensorProto.FLOAT, ["batch", 6]), "action_masks": (TensorProto.FLOAT, ["batch", 3])}
    assert list(outputs) == ["version_number", "memory_size", "continuous_actions", "continuous_action_output_shape",
                             "deterministic_continuous_actions", "discrete_actions", "discrete_action_output_shape",
                             "deterministic_discrete_actions"]
    assert memory_size(model) == 0 and onnx_shape((84, 84, 3)) == [3, 84, 84] and onnx_shape((6,)) == [6]
    assert {n.op_type for n in model.graph.node} <= ALLOWED
    assert [(o.domain, o.version) for o in model.opset_import] == [("", 9)] and model.ir_version == 4


@pytest.mark.parametrize("deterministic", [False, True])
def test_ml_agents_loader_accepts_a_vector_model(tmp_path, deterministic):
    io = IOShapes(((5,), (3,)), 2, (3, 2))
    substrate = make_substrate(io, "4")
    config = cppn_config(tmp_path, substrate)
    model = export_substrate_policy(evolved_genomes(config, 1, 2)[0], config, substrate)
    assert read_like_ml_agents(model, [5, 3], 2, (3, 2), deterministic) == []


def test_a_real_ball_episode_replays_the_same_actions(tmp_path):
    """A substrate network drives the ball simulator's agents (8 observations, 2 continuous
    actions); the recorded observations through the model give the recorded actions."""
    io = IOShapes(((8,),), 2)
    substrate = make_substrate(io, "6, 4", query=Query(bias=True))
    config = cppn_config(tmp_path, substrate, activation_options="sigmoid gauss sin tanh", activation_mutate_rate=0.5)
    genome = evolved_genomes(config, 11, 15)[0]
    population = SubstratePopulation.create([genome], config, substrate)
    layout, recorded = record_episodes(population, "ball", ["--agents", "3", "--max-steps", "150"], agents=3)
    assert (layout.observation_sizes, layout.continuous, layout.branches) == ((8,), 2, ())
    steps, worst = replay_deviation(export_substrate_policy(genome, config, substrate), recorded)
    assert steps > 20 and worst <= TOLERANCE


def record_with_images(population, agents: int, steps: int) -> list:
    """The substrate population drives the ball build with its camera-like (4, 4, 1) observation
    (mlagents-envs decodes it): [(vector observations, images, continuous actions)] per step."""
    recorded = []
    with simulator("ball", args=["--agents", str(agents), "--max-steps", "200", "--visual", "1"], seed=3) as env:
        env.reset()
        behavior = next(iter(env.behavior_specs))
        assert [tuple(o.shape) for o in env.behavior_specs[behavior].observation_specs] == [(8,), (4, 4, 1)]
        for _ in range(steps):
            decision, _ = env.get_steps(behavior)
            if len(decision):
                vector, image = decision.obs
                flat = np.concatenate([vector, image.reshape(len(decision), -1)], axis=1)
                actions = np.clip(population.activate(flat, np.zeros(len(decision), np.int64)), -1, 1)
                recorded.append((vector, image, actions.astype(np.float32)))
                env.set_actions(behavior, ActionTuple(continuous=actions.astype(np.float32)))
            env.step()
    return recorded


def test_a_real_episode_with_images_replays_the_same_actions(tmp_path):
    """Images as mlagents-envs gives them ((H, W, C) per agent) flattened for the substrate, and
    channels first ([batch, C, H, W]) for the model, as ML-Agents feeds its models (the build's
    image is uniform: the order of its pixels is tested on random images above)."""
    io = IOShapes(((8,), (4, 4, 1)), 2)
    substrate = make_substrate(io, "6")
    config = cppn_config(tmp_path, substrate, activation_options="sigmoid gauss sin tanh", activation_mutate_rate=0.5)
    genome = evolved_genomes(config, 12, 15)[0]
    population = SubstratePopulation.create([genome], config, substrate)
    recorded = record_with_images(population, agents=3, steps=40)
    session = checked_session(export_substrate_policy(genome, config, substrate))
    worst = 0.0
    for vector, image, actions in recorded:
        got, = session.run(["continuous_actions"], {"obs_0": vector, "obs_1": image.transpose(0, 3, 1, 2)})
        worst = max(worst, float(np.abs(got - actions).max()))
    assert len(recorded) > 20 and worst <= TOLERANCE


def test_what_cannot_be_exported_is_a_one_line_error(tmp_path):
    substrate = make_substrate(IOShapes(((3,),), 1))
    config = cppn_config(tmp_path, substrate)
    genome = evolved_genomes(config, 1, 1)[0]
    bare = Substrate(substrate.layers)
    with pytest.raises(ExportError, match="give the behavior's sensor shapes"):
        export_substrate_policy(genome, config, bare)
    with pytest.raises(ExportError, match="observes 4 values"):
        export_substrate_policy(genome, config, substrate, IOShapes(((4,),), 1))



def camera_substrate() -> Substrate:
    """configs/camera.cfg's substrate: the 16 x 16 RGB camera, outputs at (1, 0) and (0, 1), its query."""
    from support.paths import CONFIGS
    return make_substrate(IOShapes(((16, 16, 3),), 2), "", f"{CONFIGS}/camera-substrate.json", "tanh",
                          Query(threshold=0.05, leo=True))


def camera_returns(genome, config, substrate: Substrate, agents: int = 16, seed: int = 5) -> tuple[list, list]:
    """Every agent's episode return on the camera build through the kernel and through the
    genome's model in onnxruntime, fed the images channels first as ML-Agents feeds them."""
    from support.onnx_models import play_returns
    kernel = SubstratePopulation.create([genome], config, substrate)
    session = checked_session(export_substrate_policy(genome, config, substrate))
    args = ["--agents", str(agents), "--max-steps", "40"]
    through_kernel = play_returns(
        lambda obs: np.clip(kernel.activate(obs[0].reshape(len(obs[0]), -1), np.zeros(len(obs[0]), np.int64)), -1, 1),
        "camera", args, agents, seed)
    through_onnx = play_returns(
        lambda obs: session.run(["continuous_actions"], {"obs_0": obs[0].transpose(0, 3, 1, 2)})[0], "camera", args,
        agents, seed)
    return through_kernel, through_onnx


def test_a_solution_of_the_camera_build_plays_the_kernels_returns_in_onnxruntime(tmp_path):
    """A CPPN of configs/camera.cfg's search space that solves the task (support/camera.py's two
    tanh nodes) on its substrate: the model plays every agent's episode to the kernel's return,
    and those returns solve it."""
    from neatpar_sim.camera import SOLVED
    from support.camera import two_node_cppn
    substrate = camera_substrate()
    config = cppn_config(tmp_path, substrate, activation_default="tanh", activation_options="tanh identity")
    through_kernel, through_onnx = camera_returns(two_node_cppn(config), config, substrate)
    assert np.allclose(through_onnx, through_kernel, atol=1e-4)
    assert np.mean(through_kernel) >= SOLVED and len(set(np.round(through_kernel, 6))) > 1, through_kernel


def test_an_evolved_camera_winner_plays_the_kernels_returns_in_onnxruntime():
    """tests/fixtures/camera-winner.json, the winner of `neatpar evolve --config configs/camera.cfg
    --seed 4` (48 generations): its model plays every agent's episode to the kernel's return, and
    those solve the task."""
    import os
    from neatpar_sim.camera import SOLVED
    from neatpar.genome_file import load_genome
    from support.paths import CONFIGS
    config = neat.Config(neat.DefaultGenome, neat.DefaultReproduction, neat.DefaultSpeciesSet, neat.DefaultStagnation,
                         f"{CONFIGS}/camera.cfg")
    genome = load_genome(os.path.join(os.path.dirname(__file__), "fixtures", "camera-winner.json"), config)
    through_kernel, through_onnx = camera_returns(genome, config, camera_substrate(), seed=11)
    assert np.allclose(through_onnx, through_kernel, atol=1e-4)
    assert np.mean(through_kernel) >= SOLVED, through_kernel
