"""A run's course: how its generations are made. One population (`OnePopulation`), or the two
populations of asymmetric self-play taking turns (alternation.py: `Alternation`); both are a
`Course`, which is all the lifecycle (lifecycle.py) knows of them."""
from __future__ import annotations

import os
from typing import Protocol

from ..episodes.env_evaluator import EnvEvaluator
from ..record.checkpoint import PopulationState
from ..record.folder import RunFolder
from ..record.stats_file import StatsFile
from ..record.tensorboard import EventLog
from .clips import ClipReporter, Clips
from .plan import Plan
from .progress import GenerationBar
from .recorder import CheckpointSchedule, Reporting, RunRecorder
from .winner import final_round_robin, finish, winner_files


class Course(Protocol):
    """The generations of a run, with their records in the run folder."""

    @property
    def generation(self) -> int:
        """The generation being made (or last made)."""

    @property
    def snapshot(self) -> bytes:
        """The checkpoint of the generation being made, taken as it began (empty before the first)."""

    @property
    def solved(self) -> int | None:
        """The generation whose fitness reached fitness_threshold, if one did."""

    @property
    def completed(self) -> int:
        """The generations completed, counted over every population (the ones a resume restored too)."""

    def run(self, generations: int) -> None:
        """Make generations until the run has `generations`."""

    def save_snapshot(self) -> str:
        """Write `snapshot` as a checkpoint; its path."""

    def finish(self) -> object:
        """The winner's files, the plots and the closing lines of a run that ended."""

    def keep_best(self) -> list[str]:
        """The best genome so far and its files, for a run stopped early."""

    def close(self) -> None:
        """Close the course's writers (event files, clips)."""


def begun_stats(path: str, plan: Plan, state: PopulationState | None, below: str = "") -> StatsFile:
    """The stats files of a population's folder `path`; on resume begun at the generation of its
    checkpoint's `state`, with the rows before it from the run folder the checkpoint came from
    (its `below` folder: a population's own, in asymmetric self-play)."""
    stats = StatsFile(path)
    if plan.resume and state is not None:
        stats.begin(state.generation, state.columns, os.path.join(plan.history, below), state.rows)
    return stats


class OnePopulation:
    """A run of one population: its recorder, event files and clips (None: no video_interval) in
    the run folder."""

    def __init__(self, plan: Plan, evaluator: EnvEvaluator, folder: RunFolder, bar: GenerationBar,
                 clips: Clips | None = None):
        start, settings = plan.start, plan.settings
        self.plan, self.population, self.done = plan, start.population, start.done
        self.evaluator, self.folder = evaluator, folder
        resume_at = start.done if plan.resume else None
        self.events = EventLog(folder.path, resume_at=resume_at)
        self.stats = begun_stats(folder.path, plan, start.checkpoint.population if start.checkpoint else None)
        self.recorder = RunRecorder(self.population, evaluator, self.stats,
                                    Reporting(folder, plan.run, plan.quiet, self.events, bar),
                                    CheckpointSchedule(settings.checkpoint_interval, settings.generations))
        self.population.add_reporter(self.recorder)
        evaluator.attach(self.population)   # MAP-Elites breeds from the search's archive
        self.clips = None if clips is None else ClipReporter(clips, folder.path, resume_at)
        if self.clips is not None:
            self.population.add_reporter(self.clips)

    @property
    def generation(self) -> int:
        return self.recorder.generation

    @property
    def snapshot(self) -> bytes:
        return self.recorder.snapshot

    @property
    def solved(self) -> int | None:
        return self.recorder.solved

    @property
    def completed(self) -> int:
        return self.done + self.recorder.made

    def run(self, generations: int) -> None:
        self.population.run(self.evaluator.evaluate, generations - self.done)

    def save_snapshot(self) -> str:
        return self.recorder.save_snapshot()

    def finish(self) -> None:
        self.evaluator.check_winner()   # the candidates of the generations since the last check
        final_round_robin(self.evaluator, self.plan.quiet)
        finish(self.plan, self.folder, self.evaluator, self.stats, self.clips.latest if self.clips else None)

    def keep_best(self) -> list[str]:
        """The best genome so far, its files and models, for a run stopped early (no round-robin,
        no plots: it stops now); nothing before a generation was scored."""
        best = self.evaluator.best_so_far
        return [] if best is None else winner_files(self.plan, self.folder, self.evaluator, best)

    def close(self) -> None:
        self.events.close()
        if self.clips is not None:
            self.clips.close()
