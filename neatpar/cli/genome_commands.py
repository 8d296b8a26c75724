"""`neatpar play` and `neatpar export`: what the command does with a saved genome (winner.json,
or a pickle the user names): play it on the config's environment (in a Unity build's own window
with `--graphics`, or recorded as a video with `--video`), or write it as an ONNX model for a Unity
ML-Agents Agent. What `play` can refuse is refused by its plan, before anything starts."""
from __future__ import annotations

import os
import statistics
from dataclasses import dataclass
from typing import Any

from ..config.files import load, population_configs
from ..config.settings_model import Settings
from ..envs.gym import check_frames
from ..errors import ConfigError, FramesUnavailable
from ..record.archive import is_archive_file, load_elite
from ..record.folder import load_behaviors, load_substrate
from ..record.models import check_model_file, choose_behavior, write_model
from ..record.tensorboard import behavior_run
from ..record.video import HOLD_SECONDS, video_kind, write_video
from ..episodes.environments import gym_setup, open_environment
from ..episodes.env_evaluator import EnvEvaluator
from ..episodes.recording import record_episode
from ..episodes.survey import survey
from ..environment import Layout
from ..genome_file import check_genome_fits, load_genome, recorded_fresh


def layouts_for(settings: Settings, genome_path: str) -> dict[str, Layout]:
    """The layouts recorded in the genome's run folder, else those the environment reports when
    launched once."""
    recorded = load_behaviors(os.path.dirname(os.path.abspath(genome_path)))
    if recorded is not None:
        return recorded
    environment = open_environment(settings, log_folder=None)
    try:
        return survey(environment, settings).layouts
    finally:
        environment.close()


EPISODES = 5   # `neatpar play`'s episodes when --episodes is not given


@dataclass(frozen=True)
class PlayPlan:
    """What `neatpar play` does, decided before anything starts: the config's settings, the genome
    file, the episodes to play, the video to record (None: none) and whether the game is shown in
    its own window (`graphics`)."""
    config: Any
    settings: Settings
    genome: str
    episodes: int = EPISODES
    video: str | None = None
    graphics: bool = False


def play_plan(args) -> PlayPlan:
    """`neatpar play`'s plan from its parsed arguments (the only reader of them): what cannot be
    played is refused here, in one line naming the fix."""
    config, settings = load(args.config)
    if args.graphics and args.video:
        raise ConfigError("--graphics shows the game in its own window and --video records an episode as a file: "
                          "give one of them (a Unity game's window is recorded with Unity's Recorder, see Watching a "
                          "run)")
    if args.graphics and settings.gym is not None:
        raise ConfigError(f"--graphics opens a Unity build's window, and env = {settings.env} is a "
                          f"Gymnasium environment: record it with --video FILE.mp4 (or .gif) instead")
    if args.video is not None:
        if args.episodes is not None and args.episodes != 1:
            raise ConfigError(f"--video records one episode (the one --episodes 1 plays), not {args.episodes}: "
                              f"leave out --episodes")
        video_kind(args.video, "--video")
        if settings.gym is not None:
            try:
                check_frames(gym_setup(settings))
            except FramesUnavailable as error:
                raise ConfigError(f"--video {args.video}: {error}") from None
        return PlayPlan(config, settings, args.genome, 1, args.video)
    return PlayPlan(config, settings, args.genome, args.episodes or EPISODES, graphics=args.graphics)


def play(args) -> int:
    plan = play_plan(args)
    config, settings = plan.config, plan.settings
    configs = population_configs(settings, config) if settings.asymmetric else {}
    behavior, opponents = _asymmetric_match(plan.genome, settings, configs) if configs else (None, None)
    config = configs.get(behavior, config)
    genome = _genome(plan.genome, getattr(args, "cell", None), config)
    display = None
    if plan.graphics:
        from ..envs.unity.bridge import Display   # graphics are a Unity build's: mlagents-envs only then
        display = Display()
    with EnvEvaluator.from_settings(settings, configs=configs, display=display) as evaluator:
        if plan.video is not None:
            return _record(evaluator, genome, config, opponents, plan.video)
        returns = evaluator.play(genome, config, episodes=plan.episodes, opponents=opponents)
    print(_played_line(genome.key, returns))
    print("returns: " + " ".join(f"{r:.3f}" for r in returns))
    fresh = recorded_fresh(plan.genome) if getattr(args, "cell", None) is None else None
    if fresh is not None:
        print(f"its run recorded a mean return of {fresh['mean_return']:.3f} on {fresh['episodes']} fresh episodes")
    return 0


def _played_line(key: int, returns: list[float]) -> str:
    """`neatpar play`'s summary of the episodes a genome played: their count, as English counts
    them, and their mean return (one episode's return, for one)."""
    if len(returns) == 1:
        return f"genome {key}: 1 episode, return {returns[0]:.3f}"
    return f"genome {key}: {len(returns)} episodes, mean return {statistics.fmean(returns):.3f}"


def _record(evaluator: EnvEvaluator, genome, config, opponents: dict | None, path: str) -> int:
    """`neatpar play --video`: one episode recorded and written as `path` (its decisions, its end,
    the end held HOLD_SECONDS)."""
    recording = record_episode(evaluator, genome, config, opponents)
    write_video(path, recording.frames, recording.fps)
    print(f"genome {genome.key}: 1 episode of {recording.steps} decisions, return {recording.episode_return:.3f}")
    print(f"video: {path} ({len(recording.frames)} frames at {recording.fps:g} frames per second, the last held "
          f"{HOLD_SECONDS:g} s)")
    return 0


def _asymmetric_match(genome_path: str, settings: Settings, configs: dict) -> tuple[str, dict]:
    """An asymmetric game's genome plays the behavior whose population folder holds it
    (RUN/behavior-NAME/), against the other population's winner (alternation.py)."""
    folder = os.path.dirname(os.path.abspath(genome_path))
    mine = [b for b in configs if behavior_run(b) == os.path.basename(folder)]
    if not mine:
        raise ConfigError(f"{genome_path} is not in a population folder of an asymmetric run ("
                          f"{', '.join('RUN/' + behavior_run(b) for b in configs)}), which names the behavior it "
                          f"plays: play a winner.json from one of them")
    other = next(b for b in configs if b != mine[0])
    path = os.path.join(os.path.dirname(folder), behavior_run(other), "winner.json")
    if not os.path.isfile(path):
        raise ConfigError(f"{path} not found: the opponent of {mine[0]!r} is the winner of {other!r} in the same run")
    return mine[0], {other: load_genome(path, configs[other])}


def export(args) -> int:
    config, settings = load(args.config)
    genome = None if settings.asymmetric else _genome(args.genome, getattr(args, "cell", None), config)
    check_model_file(args.out)  # before an environment is launched for the layouts
    layouts = layouts_for(settings, args.genome)
    behavior = choose_behavior(settings, layouts, args.behavior)
    if genome is None:   # an asymmetric run: each league behavior's genomes have its population's config
        config = population_configs(settings, config).get(behavior, config)
        genome = load_genome(args.genome, config)
    try:
        recorded = load_substrate(os.path.dirname(os.path.abspath(args.genome)))   # a hyperneat run's
        path = write_model(genome, config, settings, layouts[behavior], args.out, recorded)
    except OSError as exc:
        raise ConfigError(f"--out {args.out} cannot be written ({exc.strerror}): choose another file") from None
    print(f"{path}: genome {genome.key} for behavior {behavior!r} ({layouts[behavior].describe_actions()}, "
          f"sensor sizes {list(layouts[behavior].observation_sizes)})")
    return 0


def _genome(path: str, cell: str | None, config):
    """The genome `--genome` names: a genome file, or with `--cell I,J` an elite of a MAP-Elites
    run's archive.json."""
    if cell is None:
        if is_archive_file(path):
            raise ConfigError(f"{path} is a MAP-Elites archive: name the elite with --cell I,J (its cell's index per "
                              f"descriptor dimension; archive.json lists the filled cells)")
        return load_genome(path, config)
    if not is_archive_file(path):
        raise ConfigError(f"--cell {cell} names an elite of a MAP-Elites archive, but {path} is not one: give "
                          f"--genome RUN/archive.json")
    genome = load_elite(path, cell)
    check_genome_fits(genome, config, f"{path} cell {cell}")
    return genome
