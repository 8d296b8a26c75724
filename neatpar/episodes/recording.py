"""A clip of one genome's episode: the episode `EnvEvaluator.play` plays (same seed, same return),
with a picture of the genome's agent at each of its decisions, taken through the runner's
`on_decisions` hook before the agent acts, so that a video has one frame per decision of exactly
that episode, and then, where the game draws it (the simulator builds do), one of the episode's end:
the state its terminal step shows, which no decision sees (a solved task's last move reaches the
target there).

A Unity build is recorded on the evaluator's own game in this process, or, when env hosts own the
run's games (envs > 1, backend = ray), on a game of the recorder's own in this process, launched at
its first episode and kept until `close` (a game whose build draws no frames is refused at the
agent's first decision, with the way to watch it instead); a Gymnasium environment on one copy of
its own made with render_mode "rgb_array", so that the copies a run evaluates on never render. A self-play clip shows the genome against the strongest member of the
league it plays (`league_opponents`).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..envs.gym import GymEnvironment
from ..errors import NeatparError
from .environments import gym_setup, open_environment
from .hosts import HOST_PORT_STRIDE


@dataclass(frozen=True)
class Recording:
    """One recorded episode: a picture per decision of the genome's agent, in order (RGB uint8),
    then one of the episode's end where the game draws it (`steps` + 1 frames); the rate a clip of
    them plays at, the episode's return and its length in decisions."""
    frames: list[np.ndarray]
    fps: float
    episode_return: float
    steps: int
    behavior: str   # the behavior the genome's agent played


class EpisodeRecorder:
    """Records episodes of genomes on an EnvEvaluator's environment (see the module docstring);
    keeps an environment of its own (a Gymnasium environment's rendering copy, a game beside env
    hosts) from one recording to the next until `close`."""

    def __init__(self, evaluator):
        self.evaluator = evaluator
        self._own = None   # the recorder's own environment, when it needs one

    @property
    def environment(self):
        """Where episodes are recorded: the evaluator's game, a game of the recorder's own beside
        env hosts, or a rendering Gymnasium copy."""
        settings = self.evaluator.settings
        if self._own is not None:
            return self._own
        if settings.gym is not None:
            self._own = GymEnvironment(dataclasses.replace(gym_setup(settings), copies=1, frames=True))
        elif settings.hosted:   # the port after the hosts' (each looks from worker_id + stride x its number)
            self._own = open_environment(settings, self.evaluator.log_folder,
                                         worker_id=settings.worker_id + HOST_PORT_STRIDE * settings.envs)
        else:
            return self.evaluator.environment
        return self._own

    def record(self, genome, config: Any, opponents: dict | None = None) -> Recording:
        """One episode of `genome` as `EnvEvaluator.play(genome, config, 1, opponents)` plays it,
        with its agent's pictures. Changes nothing of the evaluator (its last_stats included)."""
        environment = self.environment

        def decided(behavior: str, agents: np.ndarray, genomes: np.ndarray) -> None:
            for agent in agents.tolist():   # one genome, one episode: one agent plays it
                environment.capture(behavior, agent)

        returns, stats = self.evaluator.play_episodes(genome, config, 1, opponents, environment=environment,
                                                      on_decisions=decided)
        frames = environment.take_frames()
        [(behavior, scored)] = stats.scored.items()
        steps = scored.lengths[0]
        if len(frames.images) not in (steps, steps + 1):
            raise NeatparError(f"the episode took {steps} decisions but {len(frames.images)} pictures came: the "
                               f"environment must give one per capture (and at most one of the episode's end)")
        return Recording(frames.images, frames.fps, returns[0], steps, behavior)

    def close(self) -> None:
        """Close the recorder's own environment, if one was made (the evaluator's game is the
        evaluator's)."""
        own, self._own = self._own, None
        if own is not None:
            own.close()

    def __enter__(self) -> "EpisodeRecorder":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def record_episode(evaluator, genome, config: Any, opponents: dict | None = None) -> Recording:
    """One recorded episode of `genome` on `evaluator`'s environment (EpisodeRecorder.record)."""
    with EpisodeRecorder(evaluator) as recorder:
        return recorder.record(genome, config, opponents)


def league_opponents(evaluator, side: str | None = None) -> dict:
    """The opponents of a self-play clip of `side`'s population (default: the side that played
    last): the best-rated member of the league it plays, on the behaviors that league plays; {}
    (the genome plays itself, as `play` has it) for a run without a league or before its first
    generation."""
    selfplay = evaluator.selfplay
    if selfplay is None:
        return {}
    side = side or selfplay.last_side
    league = selfplay.leagues[selfplay.opponent_of(side)]
    if not league.members:
        return {}
    return {behavior: league.best().genome for behavior in selfplay.theirs[side]}
