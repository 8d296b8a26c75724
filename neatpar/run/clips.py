"""A run's clips (`[neatpar] video_interval = N`): after every N-th generation and after the run's
last one, one episode of the champion, recorded as `EnvEvaluator.play` plays it (episodes/recording.py),
into the run folder's `videos/gen-G.mp4` (`.gif` where the video extra is not installed, said in one
warning line) and into TensorBoard at step G (record/video.py's ClipLog). A generation that is not
due records nothing and sends nothing for it.

Who plays: the champion (the best genome so far); in self-play against the strongest member of the
league it plays (episodes/recording.py's `league_opponents`); in an asymmetric run the population whose
turn it is, its best genome of the generation against the other population's strongest member,
into its own folder (`behavior-NAME/videos/`, at its own generation). A game that sends no frames
(a Unity player) or a video that cannot be written stops the clips with one warning line; the run
goes on. A resumed run removes the clips of the generations it plays again and records those its
schedule names, as TensorBoard's points of those generations are replaced.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass

import neat

from ..errors import FramesUnavailable, VideoError
from ..record.video import INSTALL_HINT, ClipLog, clip_kind, generation_video, remove_generation_videos, write_video
from ..episodes.recording import EpisodeRecorder, league_opponents

log = logging.getLogger("neatpar")


@dataclass(frozen=True)
class ClipSchedule:
    """Which generations of a run get a clip: every `interval`-th (0: none), counted as
    checkpoints are (generation G is due when G + 1 is a multiple of the interval), and the run's
    last one (`final`: the run's generations)."""
    interval: int
    final: int

    def due(self, generation: int) -> bool:
        done = generation + 1
        return self.interval > 0 and (done % self.interval == 0 or done == self.final)


class Clips:
    """What records a run's clips, shared by its populations: the schedule, the episode recorder
    (on the evaluator's game, or on a game of its own beside env hosts), the kind of file, and
    whether clips have stopped (a game without frames)."""

    def __init__(self, evaluator, schedule: ClipSchedule):
        self.evaluator, self.schedule = evaluator, schedule
        self.recorder = EpisodeRecorder(evaluator)
        self.kind = clip_kind()
        self.stopped = False
        if self.kind == "gif":
            log.warning("video_interval: the clips are GIFs, as writing mp4 needs imageio-ffmpeg, which is not "
                        "installed: %s", INSTALL_HINT)

    def record(self, genome, config, opponents: dict, folder: str, generation: int, clips: ClipLog) -> str | None:
        """Record `genome`'s episode as generation `generation`'s clip in `folder` (its videos/ and
        its TensorBoard run); the video's path, or None when clips have stopped."""
        if self.stopped:
            return None
        try:
            recording = self.recorder.record(genome, config, opponents)
            path = write_video(generation_video(folder, generation, self.kind), recording.frames, recording.fps)
        except (FramesUnavailable, VideoError) as error:
            self.stopped = True
            self.recorder.close()
            log.warning("video_interval: no clips in this run: %s", error)
            return None
        clips.add(generation, recording.frames, recording.fps)
        return path

    def close(self) -> None:
        self.recorder.close()


class ClipReporter(neat.reporting.BaseReporter):
    """A population's clips (see the module docstring) in `folder`, at the population's own
    generations; `side` is its behavior in an asymmetric run (None: the run's one population).
    `resume_at` is the population's first generation in a resumed run (None for a new run)."""

    def __init__(self, clips: Clips, folder: str, resume_at: int | None = None, side: str | None = None):
        self.clips, self.folder, self.side = clips, folder, side
        if resume_at is not None:
            remove_generation_videos(folder, resume_at)
        self.log = ClipLog(folder, resume_at)
        self.generation = 0
        self.latest: str | None = None   # the newest clip's path
        self._recorded: int | None = None

    def __reduce__(self):
        # Checkpoints pickle the species set's reporters: this one holds the live evaluator.
        return (neat.reporting.BaseReporter, ())

    def start_generation(self, generation):
        self.generation = generation

    def post_evaluate(self, config, population, species, best_genome):
        if self.clips.schedule.due(self.clips.evaluator.generation - 1):   # the run's generation just played
            self._record(config, best_genome)

    def found_solution(self, config, generation, best):
        # fitness_threshold ends the run after this generation: its clip is the last one
        # (neat-python also calls this at the end of a run with no_fitness_termination)
        if not config.no_fitness_termination and self._recorded != self.generation:
            self._record(config, best)

    def _record(self, config, best_genome) -> None:
        evaluator = self.clips.evaluator
        if self.side is None:
            genome, opponents = evaluator.champion, league_opponents(evaluator)
        else:
            genome, opponents = best_genome, league_opponents(evaluator, self.side)
        path = self.clips.record(genome, config, opponents, self.folder, self.generation, self.log)
        self._recorded = self.generation
        self.latest = path or self.latest

    def close(self) -> None:
        self.log.close()
