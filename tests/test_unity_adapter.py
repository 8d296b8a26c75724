"""The Unity adapter's own rules (neatpar/envs/unity/adapter.py): which observations a NEAT network
can take and the shapes its Layout gives them, how a game's observations become network inputs
(each sensor flattened in C order), how network outputs become actions (clipping, masks), and that
no action it sends is one the agent's mask forbids."""
import os

import numpy as np
import pytest
from mlagents_envs.base_env import ActionSpec, BehaviorSpec, DimensionProperty, ObservationSpec, ObservationType

from neatpar.environment import Layout, Sensor
from neatpar.envs.unity.adapter import UnityAdapter, layout_of, neutral_actions, outputs_to_actions
from neatpar.envs.unity.bridge import SimulatorBridge
from neatpar.errors import EnvironmentMismatch

from support.paths import BUILDS
from support.simulators import free_worker_id, simulator

T, N = DimensionProperty.TRANSLATIONAL_EQUIVARIANCE, DimensionProperty.NONE


def sensor(*shape, variable=False, dimensions=None):
    properties = (DimensionProperty.VARIABLE_SIZE, DimensionProperty.NONE) if variable else \
        dimensions or (DimensionProperty.NONE,) * len(shape)
    return ObservationSpec(shape, properties, ObservationType.DEFAULT, "sensor")


def test_layout_of_vector_sensors_and_hybrid_actions():
    spec = BehaviorSpec([sensor(8), sensor(3)], ActionSpec(2, (3, 2)))
    assert layout_of("A", spec) == Layout((8, 3), 2, (3, 2), (Sensor((8,)), Sensor((3,))))
    assert layout_of("A", spec).inputs == 11 and layout_of("A", spec).outputs == 7


def test_layout_of_visual_sensors_gives_their_shapes_in_spec_order():
    """A camera as 2.x sends it (height, width, channels), a grid sensor, one as 3.x sends it
    uncompressed (channels, height, width), and a fixed 2-dimensional observation."""
    spec = BehaviorSpec([sensor(84, 84, 3, dimensions=(T, T, N)), sensor(4), sensor(20, 20, 6, dimensions=(T, T, N)),
                         sensor(3, 32, 32, dimensions=(N, T, T)), sensor(5, 5)], ActionSpec(2, ()))
    layout = layout_of("A", spec)
    assert layout.sensors == (Sensor((84, 84, 3), True), Sensor((4,)), Sensor((20, 20, 6), True),
                              Sensor((3, 32, 32), True, channels_first=True), Sensor((5, 5)))
    assert layout.observation_sizes == (21168, 4, 2400, 3072, 25) and layout.inputs == 26669


def test_variable_length_observations_are_refused_by_name():
    with pytest.raises(EnvironmentMismatch, match=r"variable-length observation \(20, 6\) \(a BufferSensor, up to 20 "
                                                  r"entities of 6 values\).*remove the BufferSensor"):
        layout_of("A", BehaviorSpec([sensor(4), sensor(20, 6, variable=True)], ActionSpec(1, ())))


@pytest.mark.parametrize("args", [["--grid", "5"], ["--gray", "1", "--compression", "0"], ["--size", "9"]])
def test_camera_observations_reach_the_runner_flattened_in_c_order(args):
    """The camera build through neatpar's bridge: each deciding agent's row is its image, (height,
    width, channels) in C order, exactly as mlagents-envs' own UnityEnvironment decodes it on the
    same seeded build."""
    args = ["--agents", "3"] + args
    bridge = SimulatorBridge(os.path.join(BUILDS, "camera"), args=args, seed=5, worker_id=free_worker_id())
    adapter = UnityAdapter(bridge)
    try:
        adapter.reset(None)
        with simulator("camera", args, seed=5) as env:
            env.reset()
            for step in range(4):
                batch = adapter.poll()["Camera?team=0"]
                decision, _ = env.get_steps("Camera?team=0")
                image = decision.obs[0]
                assert batch.observations.shape == (3, image[0].size) and batch.observations.dtype == np.float32
                assert np.array_equal(batch.observations, image.reshape(3, -1))
                assert adapter.layout("Camera?team=0").sensors == (Sensor(image.shape[1:], True),)
                moves = np.full((3, 2), 0.3 * step, np.float32)
                adapter.act("Camera?team=0", moves)
                adapter.step()
                env.set_actions("Camera?team=0", outputs_to_actions(adapter.layout("Camera?team=0"), moves, None))
                env.step()
    finally:
        adapter.close()


def test_outputs_to_actions_clip_and_respect_masks():
    layout = Layout((8,), 1, (3, 2))
    outputs = np.array([[5.0, 0.9, 0.1, 0.5, 0.2, 0.3], [-5.0, 0.9, 0.8, 0.7, 0.9, 0.1]])
    mask = [np.array([[True, False, False], [True, True, True]]), np.array([[False, True], [False, False]])]
    action = outputs_to_actions(layout, outputs, mask)
    assert action.continuous.tolist() == [[1.0], [-1.0]]
    assert action.discrete.tolist() == [[2, 0], [0, 0]]  # best allowed; all forbidden falls back to 0


@pytest.mark.parametrize("branches", [(1,), (3,), (2, 4), (5, 1, 3)])
def test_neutral_actions_take_each_branch_s_first_allowed_action(branches):
    rng = np.random.default_rng(sum(branches))
    agents = 200
    mask = [rng.random((agents, size)) < 0.6 for size in branches]
    actions = neutral_actions(2, branches, mask, agents)
    assert actions.continuous.tolist() == [[0.0, 0.0]] * agents
    for b, size in enumerate(branches):
        for agent in range(agents):
            allowed = [a for a in range(size) if not mask[b][agent, a]]
            assert actions.discrete[agent, b] == (allowed[0] if allowed else 0)
    assert neutral_actions(0, branches, None, 3).discrete.tolist() == [[0] * len(branches)] * 3


@pytest.mark.slow
@pytest.mark.parametrize("envs", [1, 2])
def test_no_masked_action_is_ever_sent_on_any_path(tmp_path, envs):
    """A build that ends at the first masked action it receives (strict masks), driven through every
    path that sends actions: the env hosts' survey (envs = 2), an unlisted behavior, agents left
    without a genome, resets of a game whose episodes never end; both behaviors mask action 0."""
    from support.runs import probe_hosts
    args = "--behaviors 2 --discrete 3 --mask-first 1 --episode-decisions 0 --strict-masks 1"
    evaluator, config, pairs = probe_hosts(tmp_path, agents=4, pop=10, envs=envs, episode=0, num_outputs=3,
                                           env_args=f"--agents 4 {args}", max_steps=3)
    logs = tmp_path / "logs"
    evaluator.log_folder = str(logs)
    try:
        for _ in range(2):
            evaluator.evaluate(pairs, config)
            stats = evaluator.last_stats
            assert stats.resets > 0 and stats.agent_steps > stats.scored_steps  # resets, and agents without a genome
        if envs == 1:
            assert evaluator.environment.bridge.launches == 1  # never relaunched after a strict build's exit
        else:
            assert evaluator._runner.lost == 0 and evaluator._hosts.agents() == 4  # the survey ran
    finally:
        evaluator.close()
    texts = [p.read_text() for p in logs.glob("Player-*.log")]
    assert len(texts) == envs and not [t for t in texts if "forbids" in t or "error" in t]


def test_a_camera_sent_channels_first_as_3x_sends_it():
    """Uncompressed, its values reach the runner in the game's (channels, height, width) order and
    the Layout says so; as PNGs, which mlagents-envs 0.28 cannot decode, the game is refused in one
    line that names the fix."""
    args = ["--agents", "2", "--size", "5", "--channels-first", "1"]
    adapter = UnityAdapter(SimulatorBridge(os.path.join(BUILDS, "camera"), args=args + ["--compression", "0"], seed=1,
                                           worker_id=free_worker_id()))
    try:
        adapter.reset(None)
        batch = adapter.poll()["Camera?team=0"]
        assert adapter.layout("Camera?team=0").sensors == (Sensor((3, 5, 5), True, channels_first=True),)
        with simulator("camera", args + ["--compression", "0"], seed=1) as env:
            env.reset()
            assert np.array_equal(batch.observations, env.get_steps("Camera?team=0")[0].obs[0].reshape(2, -1))
    finally:
        adapter.close()
    adapter = UnityAdapter(SimulatorBridge(os.path.join(BUILDS, "camera"), args=args, worker_id=free_worker_id()))
    try:
        with pytest.raises(EnvironmentMismatch, match=r"decompressed had \(5, 5, 3\) but expected \[3, 5, 5\].*"
                                                      r"set the sensor's compression to None"):
            adapter.reset(None)
    finally:
        adapter.close()
