"""Tests of run/clips.py: a run's clips (`video_interval`) on the real simulator builds. Every N-th
generation and the run's last leave the champion's episode in videos/gen-G.mp4 and in TensorBoard
at step G, without changing the run's results; a resume removes the clips of the generations it
plays again and goes on with the schedule; with env hosts the clips are played in the main
process, on a game of their own; without the video extra they are GIFs, said once; a game that
sends no frames stops the clips with one warning and the run goes on; an asymmetric run records
the population whose turn it is, in its own folder; a self-play clip is the champion against its
league's best-rated member."""
import os
import sys

import neat
from PIL import Image

from neatpar import settings as run_config
from neatpar.run.clips import ClipReporter, Clips, ClipSchedule
from neatpar.record.video import HOLD_SECONDS, gif_delay
from neatpar.episodes.env_evaluator import EnvEvaluator
from neatpar.episodes.recording import league_opponents, record_episode
from neatpar_sim import render
from support.configs import ball_cfg
from support.duels import asymmetric_cfg, duel_cfg
from support.runs import Run, evolve_ok, neatpar_cli, stats_table, without_timing
from support.videos import gif_frames, mp4_frames, tensorboard_clips


DELAY = gif_delay(render.FRAMES_PER_SECOND)   # a simulator build's clip: 25 frames per second


def videos(folder) -> list[str]:
    path = folder / "videos"
    return sorted(os.listdir(path), key=lambda name: int(name[4:].split(".")[0])) if path.is_dir() else []


def warnings_of(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("neatpar: warning: ")]


def test_every_nth_generation_and_the_last_get_a_clip_that_changes_nothing_and_a_resume_keeps_the_schedule(
        tmp_path, monkeypatch):
    config = ball_cfg(tmp_path, generations=3, video_interval=2)
    run = tmp_path / "run"
    result = evolve_ok(config, run)
    assert videos(run) == ["gen-1.mp4", "gen-2.mp4"]   # 2 is the second of every 2, and the last
    assert f"see it: {run / 'videos' / 'gen-2.mp4'}" in result.stdout.splitlines()
    clips = tensorboard_clips(run)
    assert [c.step for c in clips] == [1, 2]
    for clip, name in zip(clips, videos(run)):   # the same episode in both, one frame per decision, its end held
        assert len(mp4_frames(run / "videos" / name, monkeypatch)) == len(gif_frames(clip.encoded_image_string, DELAY)) > 1
    plain = tmp_path / "plain"
    evolve_ok(ball_cfg(tmp_path, name="plain.cfg", generations=3), plain)
    assert without_timing(stats_table(run / "stats.csv")) == without_timing(stats_table(plain / "stats.csv"))
    assert not (plain / "videos").exists() and tensorboard_clips(plain) == []

    # Generation 2 is played again; in a run of 5 it is no clip's (1, 3 and 4 are)
    resumed = neatpar_cli("evolve", "--resume", str(run / "checkpoints" / "checkpoint-2.gz"), "--generations", "5")
    assert resumed.returncode == 0, resumed.stderr
    assert videos(run) == ["gen-1.mp4", "gen-3.mp4", "gen-4.mp4"]
    assert [c.step for c in tensorboard_clips(run)] == [1, 3, 4]


def test_with_env_hosts_clips_are_played_on_a_game_of_their_own_and_without_the_video_extra_they_are_gifs(tmp_path):
    """imageio-ffmpeg made unimportable in the command's interpreter, as where the extra is not installed."""
    no_extra = [sys.executable, "-c", "import sys; sys.modules['imageio_ffmpeg'] = None\n"
                                      "from neatpar.cli.command_line import main; sys.exit(main())"]
    out = tmp_path / "run"
    run = Run(ball_cfg(tmp_path, generations=2, video_interval=1, envs=2), out, command=no_extra)
    code, stderr = run.finish()
    assert code == 0, stderr
    run.assert_clean()
    assert warnings_of(stderr) == [
        "neatpar: warning: video_interval: the clips are GIFs, as writing mp4 needs imageio-ffmpeg, which is not "
        "installed: pip install 'neatpar[video]' (imageio-ffmpeg, which brings its own ffmpeg)"]
    assert videos(out) == ["gen-0.gif", "gen-1.gif"]
    for name in videos(out):
        with Image.open(out / "videos" / name) as gif:
            assert gif.format == "GIF" and gif.n_frames > 1
    assert len(os.listdir(out / "sim-logs")) == 3   # two env hosts' games and the clips' own


def test_a_game_that_sends_no_frames_stops_the_clips_with_one_warning_and_the_run_goes_on(tmp_path):
    out = tmp_path / "run"
    config = ball_cfg(tmp_path, generations=3, video_interval=1, env_args="--agents 4 --max-steps 15 --frames 0")
    result = evolve_ok(config, out)
    [warning] = warnings_of(result.stderr)
    assert warning.startswith("neatpar: warning: video_interval: no clips in this run: this game sends no frames")
    assert "neatpar play --graphics" in warning and len(stats_table(out / "stats.csv")) == 3
    assert not (out / "videos").exists() and tensorboard_clips(out) == [] and "see it:" not in result.stdout


def test_an_asymmetric_run_records_the_population_whose_turn_it_is_in_its_own_folder(tmp_path):
    out = tmp_path / "run"
    evolve_ok(asymmetric_cfg(tmp_path, generations=3, video_interval=1), out)   # turns: Duel, Keeper, Duel
    duel, keeper = out / "behavior-Duel_team=0", out / "behavior-Keeper_team=1"
    assert videos(duel) == ["gen-0.mp4", "gen-1.mp4"] and videos(keeper) == ["gen-0.mp4"]
    assert [c.step for c in tensorboard_clips(duel)] == [0, 1] and [c.step for c in tensorboard_clips(keeper)] == [0]
    assert not (out / "videos").exists()


def test_a_self_play_clip_is_the_champion_against_its_league_s_best_rated_member(tmp_path, monkeypatch):
    config, settings = run_config.load(duel_cfg(tmp_path, env_args="--areas 4 --points 1 --rally-steps 40"))
    population = neat.Population(config, seed=5)
    with EnvEvaluator.from_settings(settings) as evaluator:
        clips = Clips(evaluator, ClipSchedule(2, 2))   # generation 1's clip only
        monkeypatch.setattr(clips, "kind", "gif")      # frames of flat colours: a GIF keeps them exactly
        reporter = ClipReporter(clips, str(tmp_path / "run"))
        population.add_reporter(reporter)
        population.run(evaluator.evaluate, 2)
        reporter.close()
        opponents = league_opponents(evaluator)
        assert opponents["Duel?team=1"].key != evaluator.champion.key   # the league's best is another genome
        expected = record_episode(evaluator, evaluator.champion, config, opponents)
        alone = record_episode(evaluator, evaluator.champion, config)   # the champion against itself
        clips.close()
    assert reporter.latest == str(tmp_path / "run" / "videos" / "gen-1.gif")
    [clip] = tensorboard_clips(tmp_path / "run")
    written = gif_frames(clip.encoded_image_string, DELAY)
    assert clip.step == 1 and len(written) == expected.steps + 1 + round(HOLD_SECONDS * expected.fps)
    assert all((a == b).all() for a, b in zip(written, expected.frames + expected.frames[-1:] * len(written)))
    assert len(alone.frames) != len(expected.frames) or any((a != b).any() for a, b in zip(alone.frames, expected.frames))
