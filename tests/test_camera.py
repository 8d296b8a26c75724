"""The camera simulator build (neatpar_sim/camera.py) played by a real mlagents-envs
UnityEnvironment: its sensor in each mode (RGB, grayscale, grid sensor; PNG or floats), a task
that only the pixels can solve (a controller reading the image solves it, random moves do not),
the same episodes from the same seed, and its options' checks."""
import numpy as np
import pytest
from mlagents_envs.base_env import ActionTuple, DimensionProperty

from support.camera import steer_to_target
from support.simulators import simulator
from neatpar_sim.camera import NAME, SOLVED, Camera
from neatpar_sim.spec import OptionError

T, N = DimensionProperty.TRANSLATIONAL_EQUIVARIANCE, DimensionProperty.NONE


def play(args, policy, steps=120, seed=3):
    """The episode returns over `steps` steps, in the order they ended, and the first decision's images."""
    rng = np.random.default_rng(0)
    returns, running, first = [], {}, None
    with simulator("camera", args, seed=seed) as env:
        env.reset()
        for _ in range(steps):
            decision, terminal = env.get_steps(NAME)
            for agent, reward in zip(terminal.agent_id, terminal.reward):
                returns.append(running.pop(agent, 0.0) + reward)
            for agent, reward in zip(decision.agent_id, decision.reward):
                running[agent] = running.get(agent, 0.0) + reward
            if first is None:
                first = decision.obs
            if len(decision):
                moves = steer_to_target(decision.obs[0]) if policy == "steer" else \
                    rng.uniform(-1, 1, (len(decision), 2)).astype(np.float32)
                env.set_actions(NAME, ActionTuple(continuous=moves))
            env.step()
    return returns, first


@pytest.mark.parametrize("args, shape", [
    ([], (16, 16, 3)), (["--gray", "1"], (16, 16, 1)), (["--size", "84"], (84, 84, 3)),
    (["--grid", "4", "--size", "10"], (10, 10, 4)), (["--compression", "0", "--size", "8"], (8, 8, 3)),
    (["--compression", "0", "--size", "8", "--channels-first", "1"], (3, 8, 8)),
])
def test_the_only_observation_is_the_camera(args, shape):
    with simulator("camera", ["--agents", "2"] + args) as env:
        env.reset()
        spec = env.behavior_specs[NAME]
        assert [o.shape for o in spec.observation_specs] == [shape]
        assert spec.observation_specs[0].dimension_property == ((N, T, T) if shape[0] == 3 else (T, T, N))
        assert spec.action_spec.continuous_size == 2 and not spec.action_spec.discrete_branches
        image = env.get_steps(NAME)[0].obs[0]
        assert image.shape == (2,) + shape and image.dtype == np.float32 and 0 <= image.min() and image.max() <= 1


def test_a_controller_reading_the_pixels_solves_it_and_random_moves_do_not():
    solved, _ = play(["--agents", "8"], "steer")
    random, _ = play(["--agents", "8"], "random")
    assert np.mean(solved) >= SOLVED and len(solved) > 100
    assert np.mean(random) < 0.2


@pytest.mark.parametrize("args", [["--gray", "1"], ["--grid", "4"], ["--compression", "0", "--gray", "1"]])
def test_every_sensor_mode_shows_the_target(args):
    solved, _ = play(["--agents", "6"] + args, "steer", steps=60)
    assert np.mean(solved) >= SOLVED


def test_the_same_seed_gives_the_same_episodes():
    first = play(["--agents", "4"], "random", steps=60, seed=9)
    again = play(["--agents", "4"], "random", steps=60, seed=9)
    other = play(["--agents", "4"], "random", steps=60, seed=10)
    assert first[0] == again[0] and len(first[0]) >= 4 and np.array_equal(first[1][0], again[1][0])
    assert not np.array_equal(first[1][0], other[1][0])


def test_grayscale_is_the_mean_of_the_rgb_render():
    """Unity sends a grayscale camera's RGB render as its PNG; mlagents-envs averages the channels.
    Uncompressed, ObservationWriter's (r + g + b) / 3 / 255."""
    _, (rgb,) = play(["--agents", "3"], "random", steps=1)
    _, (gray,) = play(["--agents", "3", "--gray", "1"], "random", steps=1)
    _, (floats,) = play(["--agents", "3", "--gray", "1", "--compression", "0"], "random", steps=1)
    assert np.array_equal(gray[..., 0], np.mean(rgb, axis=3))
    sums = np.rint(rgb * 255).astype(np.int32).sum(axis=3, keepdims=True).astype(np.float32)
    assert np.array_equal(floats, sums / np.float32(3) / np.float32(255))


def test_channels_first_values_are_the_same_image_in_3x_order():
    _, (last,) = play(["--agents", "2", "--compression", "0", "--size", "6"], "random", steps=1)
    _, (first,) = play(["--agents", "2", "--compression", "0", "--size", "6", "--channels-first", "1"], "random", steps=1)
    assert np.array_equal(first, last.transpose(0, 3, 1, 2))


def test_grid_channels_are_target_outside_and_floor():
    task = Camera({"agents": 5, "grid": 5, "size": 12}, np.random.default_rng(1))
    cells = task.frames(NAME)[0]
    assert cells.shape == (5, 12, 12, 5) and cells.dtype == np.uint8 and set(np.unique(cells)) <= {0, 255}
    assert (cells[..., :3].astype(int).sum(axis=3) >= 255).all()   # each cell shows something
    assert not cells[..., 3:].any() and cells[..., 0].any(axis=(1, 2)).all()
    assert task.behaviors[0].sensors[0].mapping == (0, 1, 2, 3, 4, -1)


def test_discrete_moves():
    task = Camera({"agents": 2, "discrete": 1}, np.random.default_rng(2))
    assert task.behaviors[0].branches == (5,) and task.behaviors[0].continuous == 0
    start = task.agent.copy()
    everyone = np.ones(2, bool)
    task.step({NAME: (np.zeros((2, 0), np.float32), np.array([[1], [4]], np.int32))}, {NAME: everyone}, {NAME: everyone})
    expected = np.clip(start + Camera.SPEED * np.array([[1, 0], [0, -1]]), 0, 1)
    assert np.allclose(task.agent, expected)


def test_the_target_never_starts_within_reach():
    task = Camera({"agents": 4096}, np.random.default_rng(3))
    assert (np.hypot(*(task.target - task.agent).T) >= Camera.MIN_START).all()


@pytest.mark.parametrize("options, message", [
    ({"grid": 3, "gray": 1}, "grid and gray exclude each other"),
    ({"size": 3}, "size must be an integer from 4 to 256"),
    ({"compression": 2}, "compression must be an integer from 0 to 1"),
])
def test_bad_options(options, message):
    with pytest.raises(OptionError, match=message):
        Camera(options, np.random.default_rng(0))


def test_a_hyperneat_cppn_solves_it_from_the_pixels_and_its_mirror_image_does_not(tmp_path):
    """network = hyperneat through EnvEvaluator on the camera build: a CPPN written by hand (the
    geometric rule of support/camera.py) solves the task; the same CPPN with the target nodes'
    coordinates mirrored steers away; so does the rule of two tanh nodes (configs/camera.cfg's
    search space)."""
    import neat
    from neatpar import EnvEvaluator
    from support.camera import steering_cppn, two_node_cppn
    from support.configs import write_config
    from support.paths import BUILDS, CONFIGS
    path = write_config(tmp_path, "cppn.cfg", num_inputs=7, num_outputs=2, activation_default="tanh",
                        activation_options="tanh gauss identity")
    config = neat.Config(neat.DefaultGenome, neat.DefaultReproduction, neat.DefaultSpeciesSet,
                         neat.DefaultStagnation, path)
    mirrored = tmp_path / "mirrored.json"
    mirrored.write_text('{"outputs": [[-1.0, 0.0], [0.0, -1.0]]}')
    means = {}
    for name, coordinates in (("camera", f"{CONFIGS}/camera-substrate.json"), ("mirrored", str(mirrored))):
        with EnvEvaluator(f"{BUILDS}/camera", {NAME: "population"}, env_args="--agents 16 --max-steps 40",
                          max_steps=40, network="hyperneat", hyperneat_leo=True, substrate_coordinates=coordinates,
                          seed=3) as evaluator:
            means[name] = np.mean(evaluator.play(steering_cppn(config), config, episodes=16))
            if name == "camera":
                means["two nodes"] = np.mean(evaluator.play(two_node_cppn(config), config, episodes=16))
    assert means["camera"] >= SOLVED and means["two nodes"] >= SOLVED and means["mirrored"] < 0, means
