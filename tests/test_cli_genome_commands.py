"""Tests of cli/genome_commands.py: `neatpar play` and `neatpar export` on saved genomes (the
layouts of a run's record, else of the game launched once; an asymmetric run's genome plays against
the other population's winner), `play --video` (one episode, one frame per decision) and
`play --graphics` (a game started with graphics at real-time speed), and their one-line errors."""
import json
import os
import pickle
import re
import shutil
import sys

import neat
import numpy as np
import pytest

from neatpar.cli.command_line import build_parser
from neatpar.cli.genome_commands import _asymmetric_match, _genome, play_plan
from neatpar.errors import ConfigError
from neatpar.config.files import load, population_configs
from neatpar.record.genomes import save_genome_json
from support.configs import ball_cfg, write_config
from support.duels import asymmetric_cfg
from support.paths import CONFIGS
from support.runs import evolve_ok, neatpar_cli, one_line_error
from support.videos import mp4_frames


def test_play_a_saved_winner(tmp_path):
    config = ball_cfg(tmp_path, generations=1)
    assert neatpar_cli("evolve", "--config", config, "--out", str(tmp_path / "run")).returncode == 0
    result = neatpar_cli("play", "--config", config, "--genome", str(tmp_path / "run" / "winner.json"),
                         "--episodes", "3")
    assert result.returncode == 0, result.stderr
    summary, returns, recorded = result.stdout.splitlines()
    fresh = json.load(open(tmp_path / "run" / "winner.json"))["fresh"]
    assert "3 episodes" in summary and len(returns.split()) == 4
    assert recorded == f"its run recorded a mean return of {fresh['mean_return']:.3f} on {fresh['episodes']} fresh episodes"
    one = neatpar_cli("play", "--config", config, "--genome", str(tmp_path / "run" / "winner.pickle"), "--episodes", "1")
    assert one.returncode == 0, one.stderr
    summary, returns = one.stdout.splitlines()   # a pickle keeps no fresh score
    assert re.fullmatch(r"genome \d+: 1 episode, return (-?\d+\.\d{3})", summary).group(1) == returns.split()[1]


def test_genome_file_of_the_wrong_kind(tmp_path):
    config = ball_cfg(tmp_path)
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"weights": [1, 2]}))
    one_line_error(tmp_path, ["play", "--config", config, "--genome", str(other)], "is not a neatpar genome")
    pickled = tmp_path / "dict.pickle"
    pickled.write_bytes(pickle.dumps({"a": 1}))
    one_line_error(tmp_path, ["play", "--config", config, "--genome", str(pickled)], "holds a dict, not a genome")


def test_a_run_folder_or_a_checkpoint_as_genome_is_one_line_saying_what_to_give(tmp_path):
    config = ball_cfg(tmp_path, generations=1)
    run = tmp_path / "run"
    evolve_ok(config, run)
    one_line_error(tmp_path, ["play", "--config", config, "--genome", f"{run}/"],
                   f"genome file {run}/ is a folder: give {run}/winner.json (or another genome file inside it)")
    checkpoint = run / "checkpoints" / "checkpoint-1.gz"
    one_line_error(tmp_path, ["export", "--config", config, "--genome", str(checkpoint), "--out",
                              str(tmp_path / "brain.onnx")],
                   f"genome file {checkpoint} is a checkpoint (a whole population), not a genome: give "
                   f"{run / 'winner.json'}, or continue the run from it with neatpar evolve --resume {checkpoint}")
    assert not (tmp_path / "brain.onnx").exists()


def test_a_genome_of_another_config_names_both_shapes(tmp_path):
    config = ball_cfg(tmp_path, generations=1)
    assert neatpar_cli("evolve", "--config", config, "--out", str(tmp_path / "run")).returncode == 0
    other = ball_cfg(tmp_path, name="other.cfg", num_inputs=6, num_outputs=3)
    one_line_error(tmp_path, ["play", "--config", other, "--genome", str(tmp_path / "run" / "winner.json")],
        "has num_inputs = 8, num_outputs = 2 but the config has num_inputs = 6, num_outputs = 3")


def test_export_onto_a_missing_folder_a_folder_or_a_name_not_onnx_is_one_line(tmp_path):
    config = ball_cfg(tmp_path, generations=1)
    assert neatpar_cli("evolve", "--config", config, "--out", str(tmp_path / "run")).returncode == 0
    genome = str(tmp_path / "run" / "winner.json")
    missing = tmp_path / "nowhere" / "brain.onnx"
    one_line_error(tmp_path, ["export", "--config", config, "--genome", genome, "--out", str(missing)],
        f"--out {missing}: the folder {tmp_path / 'nowhere'} does not exist: create it, or write the model elsewhere")
    one_line_error(tmp_path, ["export", "--config", config, "--genome", genome, "--out", str(tmp_path)],
        f"--out {tmp_path} is a folder: name the file to write, e.g. --out {tmp_path / 'brain.onnx'}")
    assert not (tmp_path / "nowhere").exists()
    text = tmp_path / "brain.txt"
    one_line_error(tmp_path, ["export", "--config", config, "--genome", genome, "--out", str(text)],
        f"--out {text}: the name must end in .onnx, which Unity imports as a model: e.g. --out "
        f"{tmp_path / 'brain.onnx'}")
    assert not text.exists()


def test_export_uses_the_run_s_record_or_launches_the_game_once(tmp_path):
    config_path = ball_cfg(tmp_path, generations=1)
    out = tmp_path / "run"
    evolve_ok(config_path, out)
    recorded = neatpar_cli("export", "--config", config_path, "--genome", str(out / "winner.json"),
                           "--out", str(tmp_path / "a.onnx"))
    assert recorded.returncode == 0, recorded.stderr
    assert (tmp_path / "a.onnx").read_bytes() == (out / "winner.onnx").read_bytes()
    alone = tmp_path / "elsewhere"
    alone.mkdir()
    shutil.copy(out / "winner.json", alone / "winner.json")  # no behaviors.json beside it
    launched = neatpar_cli("export", "--config", config_path, "--genome", str(alone / "winner.json"),
                           "--out", str(tmp_path / "b.onnx"))
    assert launched.returncode == 0, launched.stderr
    assert (tmp_path / "b.onnx").read_bytes() == (out / "winner.onnx").read_bytes()
    wrong = neatpar_cli("export", "--config", config_path, "--genome", str(out / "winner.json"), "--out",
                        str(tmp_path / "c.onnx"), "--behavior", "Nope?team=0")
    assert wrong.returncode == 2 and wrong.stderr.strip() == (
        "neatpar: error: behavior 'Nope?team=0' is not among the behaviors the environment reported "
        "('Ball3D?team=0'): fix --behavior")
    assert not (tmp_path / "c.onnx").exists()


def test_an_asymmetric_run_s_genome_plays_its_behavior_against_the_other_population_s_winner(tmp_path):
    config, settings = load(asymmetric_cfg(tmp_path))
    configs = population_configs(settings, config)
    run = tmp_path / "run"
    for behavior_folder in ("behavior-Duel_team=0", "behavior-Keeper_team=1"):
        (run / behavior_folder).mkdir(parents=True)
    keeper_winner = run / "behavior-Keeper_team=1" / "winner.json"
    with pytest.raises(ConfigError, match="is not in a population folder of an asymmetric run"):
        _asymmetric_match(str(tmp_path / "winner.json"), settings, configs)
    with pytest.raises(ConfigError, match="the opponent of 'Duel\\?team=0' is the winner of 'Keeper\\?team=1'"):
        _asymmetric_match(str(run / "behavior-Duel_team=0" / "winner.json"), settings, configs)
    evolve_ok(asymmetric_cfg(tmp_path, generations=1), tmp_path / "evolved")
    shutil.copy(tmp_path / "evolved" / "behavior-Keeper_team=1" / "winner.json", keeper_winner)
    behavior, opponents = _asymmetric_match(str(run / "behavior-Duel_team=0" / "winner.json"), settings, configs)
    assert behavior == "Duel?team=0" and list(opponents) == ["Keeper?team=1"]
    assert opponents["Keeper?team=1"].key == json.load(open(keeper_winner))["key"]


# ---------------------------------------------------------------- watching a genome: --video, --graphics

def first_genome_file(tmp_path, config_path) -> str:
    """A genome of the config's first generation, saved as winner.json."""
    config, _ = load(config_path)
    path = str(tmp_path / "winner.json")
    save_genome_json(next(iter(neat.Population(config, seed=2).population.values())), config, path)
    return path


def test_play_video_writes_one_episode_with_a_frame_per_decision_and_its_end(tmp_path, monkeypatch):
    config = ball_cfg(tmp_path)
    genome, video = first_genome_file(tmp_path, config), tmp_path / "episode.mp4"
    result = neatpar_cli("play", "--config", config, "--genome", genome, "--video", str(video))
    assert result.returncode == 0 and result.stderr == "", result.stderr
    first, second = result.stdout.splitlines()
    steps = int(re.fullmatch(r"genome \d+: 1 episode of (\d+) decisions, return -?\d+\.\d{3}", first).group(1))
    assert second == f"video: {video} ({steps + 1} frames at 25 frames per second, the last held 1 s)" and steps > 1
    assert len(mp4_frames(video, monkeypatch)) == steps + 1 + 25   # the decisions, the end, held 1 s


def test_play_video_of_a_solved_camera_agent_shows_it_reach_the_target_and_holds_that_frame(tmp_path):
    """A camera agent that solves the task (support/camera.py's CPPN) reaches its target in a few
    decisions: the GIF shows every decision and then the episode's end, the agent on the target
    (as the terminal step's observation has it), held HOLD_SECONDS so that the clip can be watched."""
    from neatpar.record.video import HOLD_SECONDS, gif_delay
    from neatpar_sim import render
    from neatpar_sim.camera import Camera
    from support.camera import two_node_cppn
    from support.paths import BUILDS
    from support.simulators import free_worker_id
    from support.videos import gif_frames
    path = write_config(tmp_path, "camera.cfg", num_inputs=7, num_outputs=2, num_hidden=2,
                        activation_default="tanh", activation_options="tanh",
                        neatpar={"env": os.path.join(BUILDS, "camera"), "env_args": "--agents 4 --max-steps 40",
                                 "behaviors": "Camera?team=0: population", "max_steps": 40, "seed": 1,
                                 "network": "hyperneat", "hyperneat_activation": "tanh", "hyperneat_leo": "true",
                                 "hyperneat_weight_threshold": 0.05, "worker_id": free_worker_id(),
                                 "substrate_coordinates": os.path.join(CONFIGS, "camera-substrate.json")})
    config, _ = load(path)
    save_genome_json(two_node_cppn(config), config, str(tmp_path / "winner.json"))
    video = tmp_path / "episode.gif"
    result = neatpar_cli("play", "--config", path, "--genome", str(tmp_path / "winner.json"), "--video", str(video))
    assert result.returncode == 0 and result.stderr == "", result.stderr
    steps = int(re.search(r"1 episode of (\d+) decisions", result.stdout).group(1))
    delay = gif_delay(render.FRAMES_PER_SECOND)
    frames = gif_frames(video.read_bytes(), delay)
    held = round(HOLD_SECONDS * 1000 / delay)
    assert 1 <= steps < 10 and HOLD_SECONDS >= 1 and len(frames) == steps + 1 + held, (steps, len(frames))
    assert all((f == frames[-1]).all() for f in frames[steps:])
    reach = render.Scale(0.0, 1.0, 16, render.SIZE - 16).length(Camera.REACH)

    def apart(frame):   # pixels from the agent's white disc to the target's red one
        agent = np.argwhere((frame == (240, 240, 240)).all(axis=-1)).mean(axis=0)
        target = np.argwhere((frame == Camera.TARGET).all(axis=-1)).mean(axis=0)
        return float(np.hypot(*(agent - target)))
    assert [apart(f) < reach for f in frames[:steps + 1]] == [False] * steps + [True]
    assert f"video: {video} ({steps + 1} frames at 25 frames per second, the last held {HOLD_SECONDS:g} s)" \
        in result.stdout


def test_play_video_on_a_game_that_sends_no_frames_is_one_line_naming_the_window_and_writes_nothing(tmp_path):
    config = ball_cfg(tmp_path, env_args="--agents 4 --max-steps 15 --frames 0")
    video = tmp_path / "episode.mp4"
    one_line_error(tmp_path, ["play", "--config", config, "--genome", first_genome_file(tmp_path, config),
                              "--video", str(video)], "this game sends no frames")
    assert not video.exists()


def test_play_graphics_starts_the_game_with_graphics_at_real_time_speed(tmp_path):
    """The build logs the arguments it was started with as its log's first line, then the
    EngineConfiguration it received (a Unity player applies them as its window and Time.timeScale);
    being a stand-in, which shows no window, it says so in one line naming --video."""
    log = tmp_path / "player.log"
    config = ball_cfg(tmp_path, env_args=f"--agents 4 --max-steps 15 -logFile {log}")
    result = neatpar_cli("play", "--config", config, "--genome", first_genome_file(tmp_path, config), "--graphics",
                         "--episodes", "1")
    assert result.returncode == 0, result.stderr
    assert result.stderr == ("neatpar: warning: this build is neatpar's stand-in ball simulator, which shows no "
                             "window (it plays at real-time speed unseen): record an episode instead with neatpar "
                             "play --video FILE (.mp4 or .gif)\n")
    text = log.read_text()
    arguments = text.splitlines()[0].split("arguments: ", 1)[1].split()
    assert "-nographics" not in arguments and "-batchmode" not in arguments and "--mlagents-port" in arguments
    assert "engine configuration {'time_scale': 1.0}" in text
    assert "engine configuration {'screen_resolution': (1280, 720)}" in text
    headless = tmp_path / "headless.log"
    config = ball_cfg(tmp_path, name="headless.cfg", env_args=f"--agents 4 --max-steps 15 -logFile {headless}")
    result = neatpar_cli("play", "--config", config, "--genome", str(tmp_path / "winner.json"), "--episodes", "1")
    assert result.returncode == 0 and result.stderr == "", result.stderr
    headless_text = headless.read_text()
    assert "-nographics" in headless_text.splitlines()[0].split() and "{'time_scale': 20.0}" in headless_text


def planned_play(*argv):
    return play_plan(build_parser().parse_args(["play", "--genome", "winner.json", *argv]))


def no_pictures_cfg(tmp_path) -> str:
    return write_config(tmp_path, "nopictures.cfg", neatpar={"env": "gymnasium:support.videos:NoPictures",
                                                             "agents": 2, "max_steps": 5}, num_inputs=2, num_outputs=2)


@pytest.mark.parametrize("config, extra, message", [
    ("ball", ["--video", "{tmp}/clip.avi"], "--video {tmp}/clip.avi: the name must end in .mp4 or .gif, which say "
                                           "the kind of video to write"),
    ("ball", ["--video", "{tmp}/nowhere/clip.mp4"], "--video {tmp}/nowhere/clip.mp4: the folder {tmp}/nowhere does "
                                                   "not exist: create it, or write the video elsewhere"),
    ("ball", ["--video", "{tmp}/clip.mp4", "--episodes", "3"], "--video records one episode (the one --episodes 1 "
                                                              "plays), not 3: leave out --episodes"),
    ("ball", ["--video", "{tmp}/clip.mp4", "--graphics"], "--graphics shows the game in its own window and --video "
                                                         "records an episode as a file: give one of them"),
    ("nopictures", ["--video", "{tmp}/clip.gif"], "--video {tmp}/clip.gif: env = gymnasium:support.videos:NoPictures "
                                                  "cannot give pictures of its episodes: its render modes are "
                                                  "['human'], without 'rgb_array'; give it one"),
    ("cartpole", ["--graphics"], "--graphics opens a Unity build's window, and env = gymnasium:CartPole-v1 is a "
                                 "Gymnasium environment: record it with --video FILE.mp4 (or .gif) instead"),
])
def test_what_play_cannot_do_is_refused_by_its_plan_in_one_line_naming_the_fix(tmp_path, config, extra, message):
    path = {"ball": lambda: ball_cfg(tmp_path), "nopictures": lambda: no_pictures_cfg(tmp_path),
            "cartpole": lambda: os.path.join(CONFIGS, "cartpole.cfg")}[config]()
    with pytest.raises(ConfigError) as refused:
        planned_play("--config", path, *[a.format(tmp=tmp_path) for a in extra])
    assert str(refused.value).startswith(message.format(tmp=tmp_path)) and "\n" not in str(refused.value)
    assert not os.path.exists(tmp_path / "clip.avi") and not (tmp_path / "sim-logs").exists()


def test_an_mp4_without_the_video_extra_is_refused_by_the_plan_naming_the_install(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "imageio_ffmpeg", None)   # as where the extra is not installed
    with pytest.raises(ConfigError, match=r"^writing an mp4 needs imageio-ffmpeg, which is not installed: pip install "
                                          r"'neatpar\[video\]' \(imageio-ffmpeg, which brings its own ffmpeg\); or "
                                          r"write a \.gif$"):
        planned_play("--config", ball_cfg(tmp_path), "--video", str(tmp_path / "clip.mp4"))
    assert planned_play("--config", ball_cfg(tmp_path), "--video", str(tmp_path / "clip.gif")).video.endswith(".gif")


def test_play_s_plan_plays_five_episodes_by_default_and_one_recorded_with_video(tmp_path):
    config = ball_cfg(tmp_path)
    assert (planned_play("--config", config).episodes, planned_play("--config", config).video) == (5, None)
    recorded = planned_play("--config", config, "--video", str(tmp_path / "a.mp4"), "--episodes", "1")
    assert (recorded.episodes, recorded.video, recorded.graphics) == (1, str(tmp_path / "a.mp4"), False)
    assert planned_play("--config", config, "--graphics").graphics


def test_genome_takes_an_elite_of_an_archive_by_its_cell_and_refuses_a_cell_without_an_archive(tmp_path, xor_config):
    """--genome RUN/archive.json --cell I,J names an elite (checked against the config); an archive
    without --cell, --cell with a genome file and an empty cell are one-line errors."""
    import numpy as np
    from neatpar.record.archive import save_archive
    from neatpar.search.map_elites import EliteArchive, Grid
    genomes = list(neat.Population(xor_config, seed=1).population.items())[:2]
    archive = EliteArchive(Grid(((0.0, 1.0), (0.0, 1.0)), (2, 2)))
    archive.offer(genomes, np.array([1.0, 2.0]), np.array([[0.1, 0.1], [0.9, 0.9]]), 0)
    path = save_archive(str(tmp_path), archive, xor_config)[0]
    assert _genome(path, "1,1", xor_config).key == genomes[1][0]
    with pytest.raises(ConfigError, match=r"is a MAP-Elites archive: name the elite with --cell I,J"):
        _genome(path, None, xor_config)
    with pytest.raises(ConfigError, match=r"cell 0,1 of .* is empty: the filled cells are 0,0 1,1"):
        _genome(path, "0,1", xor_config)
    save_genome_json(genomes[0][1], xor_config, str(tmp_path / "winner.json"))
    with pytest.raises(ConfigError, match=r"--cell 0,0 names an elite of a MAP-Elites archive, but .* is not one"):
        _genome(str(tmp_path / "winner.json"), "0,0", xor_config)
    parsed = build_parser().parse_args(["export", "--config", "c", "--genome", path, "--cell", "1,1", "--out", "o"])
    assert parsed.cell == "1,1"


def test_export_of_an_empty_cell_of_a_large_archive_is_one_line_naming_the_nearest_filled_cells(tmp_path,
                                                                                                 xor_config):
    """`neatpar export --genome RUN/archive.json --cell I,J` on an empty cell of an archive of 64
    elites: one line with their count and the filled cells nearest the one asked."""
    import numpy as np
    from neatpar.record.archive import save_archive
    from neatpar.search.map_elites import EliteArchive, Grid
    genomes = list(neat.Population(xor_config, seed=1).population.items())[:64]
    index = [(i, j) for i in range(8) for j in range(8)]
    archive = EliteArchive(Grid(((0.0, 1.0), (0.0, 1.0)), (12, 12)))
    archive.offer(genomes, np.ones(64), np.array([[(i + 0.5) / 12, (j + 0.5) / 12] for i, j in index]), 0)
    path = save_archive(str(tmp_path), archive, xor_config)[0]
    line = one_line_error(tmp_path, ["export", "--config", ball_cfg(tmp_path), "--genome", path, "--cell", "10,3",
                                     "--out", str(tmp_path / "elite.onnx")],
                          f"cell 10,3 of {path} is empty: 64 of its 12 x 12 cells are filled, the nearest 7,3 ")
    assert line.endswith("the fittest 0,0 (fitness 1)")
