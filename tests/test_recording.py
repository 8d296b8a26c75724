"""Recorded episodes (neatpar/episodes/recording.py) on real environments: CartPole, LunarLander and every
shipped simulator build give one picture per decision of the genome's episode (a build's, then one of
its end), the same episode (same return) that EnvEvaluator.play plays with the same seed, and the
videos written from them decode to those frames, the last held; a self-play clip plays the champion against
its league's best-rated member; environments that cannot give pictures are refused in one line
naming the way."""
import os

import neat
import numpy as np
import pytest

from neatpar import settings as run_config
from neatpar.errors import FramesUnavailable
from neatpar.record.video import HOLD_SECONDS, gif_delay, write_video
from neatpar.episodes.env_evaluator import EnvEvaluator
from neatpar.episodes.recording import EpisodeRecorder, league_opponents, record_episode
from neatpar_sim import render
from neatpar_sim.duel import Duel
from support.configs import ball_cfg, hover_cfg, make_config, write_config
from support.duels import duel_cfg
from support.paths import BUILDS
from support.simulators import free_worker_id
from support.videos import gif_steps, mp4_frames

pytestmark = pytest.mark.filterwarnings("ignore:builtin type (SwigPy|swigvarlink):DeprecationWarning")


def first_genome(config, seed=2):
    return next(iter(neat.Population(config, seed=seed).population.values()))


def check_recording(evaluator, genome, config, tmp_path, monkeypatch, opponents=None, gif=False, end=True):
    """Record an episode; its frames are one per decision, then (`end`: a simulator build's) one of
    the episode's end, its return play's; its video has them all, the last held HOLD_SECONDS."""
    recording = record_episode(evaluator, genome, config, opponents)
    assert recording.steps > 1 and len(recording.frames) == recording.steps + end
    assert recording.episode_return == evaluator.play(genome, config, 1, opponents)[0]
    assert len({f.shape for f in recording.frames}) == 1 and recording.frames[0].dtype == np.uint8
    held = round(HOLD_SECONDS * recording.fps)
    assert len(mp4_frames(write_video(str(tmp_path / "episode.mp4"), recording.frames, recording.fps),
                          monkeypatch)) == len(recording.frames) + held
    if gif:
        path = write_video(str(tmp_path / "episode.gif"), recording.frames, recording.fps)
        assert gif_steps(path, gif_delay(recording.fps)) == len(recording.frames) + held
    return recording


@pytest.mark.parametrize("env, inputs, outputs, max_steps", [("gymnasium:CartPole-v1", 4, 2, 40),
                                                              ("gymnasium:LunarLander-v3", 8, 4, 25)])
def test_a_gymnasium_episode_is_recorded_on_a_rendering_copy_of_its_own(tmp_path, monkeypatch, env, inputs, outputs,
                                                                         max_steps):
    config = make_config(tmp_path, num_inputs=inputs, num_outputs=outputs, activation_default="tanh",
                         activation_options="tanh")
    genome = first_genome(config)
    with EnvEvaluator(env, agents=4, max_steps=max_steps, seed=3) as evaluator:
        with EpisodeRecorder(evaluator) as recorder:
            assert recorder.environment.setup.copies == 1 and recorder.environment.setup.frames
            assert recorder.environment is not evaluator.environment and not evaluator.environment.setup.frames
        recording = check_recording(evaluator, genome, config, tmp_path, monkeypatch, gif=True, end=False)
    assert recording.frames[0].shape == (400, 600, 3) and recording.fps == 50.0
    assert recording.behavior == env.rpartition(":")[2]


def unity_run(tmp_path, build, env_args, behaviors, inputs, outputs, max_steps, **neat_options):
    section = {"env": os.path.join(BUILDS, build), "env_args": env_args, "behaviors": behaviors,
               "max_steps": max_steps, "seed": 6, "worker_id": free_worker_id()}
    path = write_config(tmp_path, f"{build}.cfg", neatpar=section, num_inputs=inputs, num_outputs=outputs,
                        activation_default="tanh", activation_options="tanh", **neat_options)
    return run_config.load(path)


UNITY_RUNS = {
    "teams": ("--areas 2 --max-steps 30", "Blue?team=0: population, Purple?team=1: champion", 8, 7, 30),
    "probe": ("--agents 2 --episode-decisions 6", "Probe?team=0: population", 4, 1, 50),
    "duel": ("--areas 2 --points 1 --rally-steps 40", "Duel?team=0: population, Duel?team=1: champion", 6, 1, 60),
    "camera": ("--agents 2 --max-steps 20 --size 8", "Camera?team=0: population", 192, 2, 20),
    "maze": ("--agents 2 --max-steps 20", "Maze?team=0: population", 12, 2, 20),
}


@pytest.mark.parametrize("build", ["ball", "hover", *UNITY_RUNS])
def test_a_simulator_build_s_episode_is_recorded_on_the_evaluator_s_own_game(tmp_path, monkeypatch, build):
    if build == "ball":
        config, settings = run_config.load(ball_cfg(tmp_path))
    elif build == "hover":
        config, settings = run_config.load(hover_cfg(tmp_path))
    else:
        config, settings = unity_run(tmp_path, build, *UNITY_RUNS[build])
    genome = first_genome(config)
    with EnvEvaluator.from_settings(settings) as evaluator:
        recording = check_recording(evaluator, genome, config, tmp_path, monkeypatch, gif=build == "ball")
        assert evaluator.last_stats.scored[recording.behavior].lengths == [recording.steps]   # play's, not ours
    assert recording.frames[0].shape == (render.SIZE, render.SIZE, 3) and recording.fps == render.FRAMES_PER_SECOND
    if build == "probe":
        assert recording.steps == 6   # the build's episodes are 6 decisions long
    if build == "ball":   # the ball moves: the frames are the episode's, not one picture again
        assert len({f.tobytes() for f in recording.frames}) == recording.steps + 1


def test_a_self_play_clip_is_the_champion_against_its_league_s_best_rated_member(tmp_path, monkeypatch):
    config, settings = run_config.load(duel_cfg(tmp_path, env_args="--areas 4 --points 1 --rally-steps 40"))
    population = neat.Population(config, seed=5)
    with EnvEvaluator.from_settings(settings) as evaluator:
        assert league_opponents(evaluator) == {}   # no generation yet: an empty league has no best
        evaluator.evaluate(list(population.population.items()), config)
        league = evaluator.selfplay.leagues["Duel?team=0"]
        opponents = league_opponents(evaluator)
        assert list(opponents) == ["Duel?team=1"] and opponents["Duel?team=1"] is league.best().genome
        recording = check_recording(evaluator, evaluator.champion, config, tmp_path, monkeypatch, opponents)
    assert recording.behavior == "Duel?team=0"
    for frame in recording.frames:   # the champion's paddle is team 0's, on the left, in the highlight colour
        columns = np.flatnonzero((frame == render.HIGHLIGHT).all(axis=2).any(axis=0))
        assert len(columns) == Duel.PADDLE_WIDTH and columns.max() < render.SIZE / 2


def test_a_game_that_sends_no_frames_is_refused_at_the_first_decision_naming_the_way_to_watch_it(tmp_path):
    config, settings = run_config.load(ball_cfg(tmp_path, env_args="--agents 4 --max-steps 15 --frames 0"))
    with EnvEvaluator.from_settings(settings) as evaluator:
        with pytest.raises(FramesUnavailable, match=r"^this game sends no frames \(only neatpar's simulator builds "
                                                    r"speak its Frames side channel\): watch it in its own window "
                                                    r"instead \(neatpar play --graphics\), or record it in the Editor "
                                                    r"with Unity's Recorder \(see Watching a run\)$"):
            record_episode(evaluator, first_genome(config), config)
        assert evaluator.last_stats.episodes == 0   # refused before any episode was played


def test_a_gymnasium_environment_without_an_rgb_array_render_mode_is_refused_naming_the_fix(tmp_path):
    config = make_config(tmp_path, num_inputs=2, num_outputs=2)
    with EnvEvaluator("gymnasium:support.videos:NoPictures", agents=2, max_steps=5) as evaluator:
        with pytest.raises(FramesUnavailable, match=r"^env = gymnasium:support.videos:NoPictures cannot give pictures "
                                                    r"of its episodes: its render modes are \['human'\], without "
                                                    r"'rgb_array'; give it one \(list it in metadata\['render_modes'\] "
                                                    r"and return an RGB array from render\(\) in that mode\)$"):
            record_episode(evaluator, first_genome(config), config)
