"""The brain in the game: the models `neatpar evolve` (winner.onnx) and `neatpar export` write, from
real runs on the simulator builds, checked as ML-Agents' C# loader checks them, run by onnxruntime,
and acting as the genome does."""
import json
import os

import neat
import numpy as np
import onnx

from support.configs import ball_cfg, hover_cfg, write_config
from support.onnx_models import checked_session, memory_size, read_like_ml_agents, record_ball_episodes, record_episodes, replay_deviation
from support.paths import BUILDS
from support.runs import evolve_ok, neatpar_cli
from support.simulators import free_worker_id
from neatpar.environment import Layout
from neatpar.envs.unity.adapter import outputs_to_actions
from neatpar.record.genomes import load_genome
from neatpar.nn import CTRNNPopulation

TOLERANCE = 1e-4   # float32 model against neat-python's float64 (see neatpar/nn/onnx_export.py)


def teams_cfg(folder, behaviors, name="teams.cfg"):
    section = {"env": os.path.join(BUILDS, "teams"), "env_args": "--areas 3 --max-steps 30", "behaviors": behaviors,
               "max_steps": 30, "generations": 2, "seed": 3, "worker_id": free_worker_id()}
    return write_config(folder, name, neatpar=section, pop_size=8, num_inputs=8, num_outputs=7,
                        activation_options="tanh", activation_default="tanh")


def random_observations(rows: int, width: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-2, 2, (rows, width)).astype(np.float32)


def test_a_ball_run_writes_a_model_unity_accepts_that_acts_as_the_winner(tmp_path):
    config_path = ball_cfg(tmp_path, generations=2)
    out = tmp_path / "run"
    evolve_ok(config_path, out)
    behaviors = json.load(open(out / "behaviors.json"))
    assert behaviors == {"Ball3D?team=0": {"role": "population", "observation_sizes": [8], "continuous": 2,
                                           "branches": [], "sensors": [{"shape": [8], "visual": False,
                                                                        "channels_first": False}]}}
    model = onnx.load(str(out / "winner.onnx"))
    for deterministic in (False, True):
        assert read_like_ml_agents(model, [8], 2, (), deterministic) == []
    config = neat.Config(neat.DefaultGenome, neat.DefaultReproduction, neat.DefaultSpeciesSet, neat.DefaultStagnation,
                         config_path)
    winner = load_genome(str(out / "winner.json"), config)
    net = neat.nn.FeedForwardNetwork.create(winner, config)
    obs = random_observations(64, 8)
    expected = np.clip([net.activate(row.astype(np.float64)) for row in obs], -1, 1)
    actions = checked_session(model).run(["continuous_actions"], {"obs_0": obs})[0]
    assert np.abs(actions - expected).max() <= TOLERANCE


def test_a_teams_run_writes_a_model_with_masks_for_its_population_behavior(tmp_path):
    config_path = teams_cfg(tmp_path, "Blue?team=0: population, Purple?team=1: champion")
    out = tmp_path / "run"
    evolve_ok(config_path, out)
    assert {"winner.onnx", "behaviors.json"} <= set(os.listdir(out))
    model = onnx.load(str(out / "winner.onnx"))
    assert read_like_ml_agents(model, [8], 0, (5, 2), deterministic=False) == []
    config = neat.Config(neat.DefaultGenome, neat.DefaultReproduction, neat.DefaultSpeciesSet, neat.DefaultStagnation,
                         config_path)
    net = neat.nn.FeedForwardNetwork.create(load_genome(str(out / "winner.json"), config), config)
    rng = np.random.default_rng(1)
    obs = random_observations(200, 8, seed=1)
    masks = [rng.random((200, 5)) < 0.4, rng.random((200, 2)) < 0.4]
    outputs = np.array([net.activate(row.astype(np.float64)) for row in obs])
    expected = outputs_to_actions(Layout((8,), 0, (5, 2)), outputs, masks).discrete
    allowed = np.concatenate([~masks[0], ~masks[1]], axis=1).astype(np.float32)
    chosen = checked_session(model).run(["discrete_actions"], {"obs_0": obs, "action_masks": allowed})[0]
    for row, branch in np.argwhere(chosen != expected):  # only a near-tie may go the other way in float32
        start = 5 * branch
        scores = outputs[row, start:start + (5, 2)[branch]]
        assert not masks[branch][row, chosen[row, branch]]
        assert abs(scores[chosen[row, branch]] - scores[expected[row, branch]]) <= TOLERANCE


def test_two_population_behaviors_get_a_model_each(tmp_path):
    out = tmp_path / "run"
    evolve_ok(teams_cfg(tmp_path, "Blue?team=0: population, Purple?team=1: population"), out)
    for name in ("winner-Blue.onnx", "winner-Purple.onnx"):
        assert read_like_ml_agents(onnx.load(str(out / name)), [8], 0, (5, 2), deterministic=True) == []
    assert not (out / "winner.onnx").exists()


def test_export_with_two_population_behaviors_asks_which(tmp_path):
    config_path = teams_cfg(tmp_path, "Blue?team=0: population, Purple?team=1: population")
    out = tmp_path / "run"
    evolve_ok(config_path, out)
    result = neatpar_cli("export", "--config", config_path, "--genome", str(out / "winner.json"),
                         "--out", str(tmp_path / "x.onnx"))
    assert result.returncode == 2 and "choose one with --behavior" in result.stderr
    chosen = neatpar_cli("export", "--config", config_path, "--genome", str(out / "winner.json"),
                         "--out", str(tmp_path / "x.onnx"), "--behavior", "Purple?team=1")
    assert chosen.returncode == 0, chosen.stderr
    assert (tmp_path / "x.onnx").read_bytes() == (out / "winner-Purple.onnx").read_bytes()


def test_a_recurrent_winner_s_model_replays_a_whole_recorded_episode(tmp_path):
    """The winner of a recurrent run drives the ball simulator for one whole episode per agent
    through neatpar's kernel; its winner.onnx, fed the recorded observations with its memory
    carried, gives the same actions."""
    config_path = ball_cfg(tmp_path, generations=2, network="recurrent", feed_forward="false", num_hidden=2,
                           env_args="--agents 3 --max-steps 60", max_steps=60)
    out = tmp_path / "run"
    evolve_ok(config_path, out)
    config = neat.Config(neat.DefaultGenome, neat.DefaultReproduction, neat.DefaultSpeciesSet, neat.DefaultStagnation,
                         config_path)
    winner = load_genome(str(out / "winner.json"), config)
    _, recorded = record_ball_episodes(winner, config, agents=3, max_steps=60)
    model = onnx.load(str(out / "winner.onnx"))
    assert memory_size(model) > 0 and read_like_ml_agents(model, [8], 2, (), deterministic=False) == []
    steps, worst = replay_deviation(model, recorded)
    assert steps > 5 and worst <= TOLERANCE


def test_a_ctrnn_winner_plays_back_and_its_model_replays_a_whole_recorded_hover_episode(tmp_path):
    """A network = ctrnn run on the hover build (decisions every 5 academy steps, 0.1 s in steps of
    0.02 s): `neatpar play` plays its winner; `neatpar export` writes winner.onnx again, byte for
    byte; the winner drives the build for one whole episode per agent through neatpar's kernel, and
    the model, fed the recorded (noisy) observations with its memory carried, gives the same
    actions within the tolerance at every decision (rounding steps of neat-python's clock
    included: the model counts its decisions)."""
    config_path = hover_cfg(tmp_path, generations=2)
    out = tmp_path / "run"
    evolve_ok(config_path, out)
    played = neatpar_cli("play", "--config", config_path, "--genome", str(out / "winner.json"), "--episodes", "2")
    assert played.returncode == 0 and "2 episodes" in played.stdout, played.stderr
    again = neatpar_cli("export", "--config", config_path, "--genome", str(out / "winner.json"), "--out",
                        str(tmp_path / "again.onnx"))
    assert again.returncode == 0, again.stderr
    assert (tmp_path / "again.onnx").read_bytes() == (out / "winner.onnx").read_bytes()
    config = neat.Config(neat.DefaultGenome, neat.DefaultReproduction, neat.DefaultSpeciesSet, neat.DefaultStagnation,
                         config_path)
    winner = load_genome(str(out / "winner.json"), config)
    kernel = CTRNNPopulation.create([winner], config, 0.1, 0.02)
    _, recorded = record_episodes(kernel, "hover", ["--agents", "3", "--max-steps", "500", "--decision-period", "5"], 3)
    model = onnx.load(str(out / "winner.onnx"))
    evaluated = len(neat.ctrnn.CTRNN.create(winner, config).node_evals)
    assert memory_size(model) == 2 * evaluated + 1 and read_like_ml_agents(model, [2], 1, (), False) == []
    steps, worst = replay_deviation(model, recorded)
    assert steps >= 20 and worst <= TOLERANCE
