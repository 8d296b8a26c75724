"""TensorBoard event files of a run folder: one point per generation (step = generation), so that
`tensorboard --logdir runs` shows every run beside the others. tensorboardX writes them (no
TensorFlow needed), on its own thread: a generation waits for none of it.

Each value is a stats.csv value of the same generation (stats_row.py), under ML-Agents' tag for
it where ML-Agents has one. Tags are kept exactly as written here and as the game sends them,
spaces included ("Environment/Cumulative Reward"), as ML-Agents shows them; tensorboardX's own
scalar helpers would turn spaces into underscores, so summaries are built here. TensorBoard runs:

- the run folder itself: neatpar's values (TAGS), and each curriculum's lesson under ML-Agents'
  `Environment/Lesson Number/PARAMETER` (LESSON_TAG; the `lesson/PARAMETER` columns);
- `game/`: what the game recorded about itself (a row's `game` values, the `game:KEY` columns),
  under the game's keys, and a histogram `KEY_hist` of each HISTOGRAM key's values, as ML-Agents
  writes them;
- `behavior-NAME/` when several behaviors are driven by the population: each one's own episode
  return and length (BEHAVIOR_TAGS; the `FIELD:BEHAVIOR` columns), NAME being the behavior with
  characters other than letters, digits and `._=-` replaced by `_` (`behavior-Blue_team=0`).

A resumed run purges what the interrupted process wrote for the generations it evaluates again
(TensorBoard hides those points), so every generation shows once.
"""
from __future__ import annotations

import os
import re
from typing import Mapping, Sequence

from .stats_row import BEHAVIOR_FIELDS, LEAGUE_FIELDS, SEARCH_FIELDS, STATS_FIELDS, StatsRow

TAGS = {  # a row's field (its stats.csv column) -> tag in the run folder's own TensorBoard run
    "mean_return": "Environment/Cumulative Reward",
    "mean_episode_length": "Environment/Episode Length",
    "best_fitness": "NEAT/Best Fitness",
    "mean_fitness": "NEAT/Mean Fitness",
    "stdev_fitness": "NEAT/Fitness Std",
    "species": "NEAT/Species",
    "mean_nodes": "NEAT/Mean Nodes",
    "mean_connections": "NEAT/Mean Connections",
    "scored_steps_per_s": "Throughput/Agent Steps per Second",
    "seconds": "Throughput/Generation Seconds",
    "elo": "Self-play/ELO",
    "league_size": "Self-play/League Size",
    "archive_size": "Search/Archive Size",
    "archive_added": "Search/Archive Added",
    "coverage": "Search/Coverage",
    "qd_score": "Search/QD-Score",
    "mean_novelty": "Search/Mean Novelty",
    "max_novelty": "Search/Max Novelty",
    "novelty_threshold": "Search/Novelty Threshold",
    "winner_fitness": "Winner/Training Fitness",
    "winner_fresh": "Winner/Fresh Episodes Fitness",
    "fresh_seconds": "Throughput/Fresh Episodes Seconds",
}
BEHAVIOR_TAGS = {  # a behavior's field (column FIELD:BEHAVIOR) -> tag in the behavior's run
    "mean_return": "Environment/Cumulative Reward",
    "mean_episode_length": "Environment/Episode Length",
}
GAME_RUN = "game"
LESSON_TAG = "Environment/Lesson Number/"   # + a curriculum's parameter: ML-Agents' tag of its lesson
HISTOGRAM_SUFFIX = "_hist"
FLUSH_SECONDS = 2  # the writer thread puts events on disk within this time


def behavior_run(behavior: str) -> str:
    """The TensorBoard run (subfolder) of one behavior's values."""
    return "behavior-" + re.sub(r"[^A-Za-z0-9._=-]", "_", behavior)


def generation_values(row: StatsRow) -> dict[str, dict[str, float]]:
    """A stats row as TensorBoard values: run ("" for the run folder itself) -> tag -> value.
    Values a generation does not have (None) are left out, and so are runs without values."""
    own = {name: getattr(row, name) for name in STATS_FIELDS if name in TAGS}
    if row.league is not None:
        own.update((name, getattr(row.league, name)) for name in LEAGUE_FIELDS)
    if row.search is not None:
        own.update((name, row.search[name]) for name in SEARCH_FIELDS)
    if row.winner is not None:
        own.update(row.winner._asdict())
    runs = {"": _tagged(own, TAGS), GAME_RUN: {key: float(value) for key, value in row.game.items()}}
    runs[""].update((LESSON_TAG + name, float(lesson)) for name, lesson in row.lessons.items())
    for behavior, values in row.behaviors.items():
        runs[behavior_run(behavior)] = _tagged({name: getattr(values, name) for name in BEHAVIOR_FIELDS},
                                               BEHAVIOR_TAGS)
    return {run: values for run, values in runs.items() if values}


def _tagged(values: Mapping[str, float | None], tags: Mapping[str, str]) -> dict[str, float]:
    return {tags[name]: float(value) for name, value in values.items() if value is not None}


class EventLog:
    """The event files of one run folder; writers (one per TensorBoard run) open on first use.
    `resume_at` is the first generation of a resumed run (None for a new run)."""

    def __init__(self, folder: str, resume_at: int | None = None):
        self.folder, self.resume_at = folder, resume_at
        self._writers: dict = {}

    def write(self, generation: int, row: StatsRow, histograms: Mapping[str, Sequence[float]] | None = None) -> None:
        """One generation: its stats row, and the values of the game's HISTOGRAM keys."""
        from tensorboardX.proto.summary_pb2 import Summary

        for run, values in generation_values(row).items():
            summary = Summary(value=[Summary.Value(tag=tag, simple_value=v) for tag, v in values.items()])
            self._writer(run).file_writer.add_summary(summary, generation)
        for key, values in (histograms or {}).items():
            if values:
                self._writer(GAME_RUN).file_writer.add_summary(_histogram(key + HISTOGRAM_SUFFIX, values), generation)

    def _writer(self, run: str):
        writer = self._writers.get(run)
        if writer is None:
            from tensorboardX import SummaryWriter
            # The process id in the file name keeps a resumed run from reusing (and truncating)
            # the file of a process that started within the same second.
            writer = self._writers[run] = SummaryWriter(os.path.join(self.folder, run), purge_step=self.resume_at,
                                                        flush_secs=FLUSH_SECONDS, filename_suffix=f".{os.getpid()}")
        return writer

    def close(self) -> None:
        """Write everything out and close the files (a later write opens new ones)."""
        writers, self._writers = self._writers, {}
        for writer in writers.values():
            writer.close()


def _histogram(tag: str, values: Sequence[float]):
    """A histogram summary with the tag exactly as given."""
    from tensorboardX.summary import histogram

    summary = histogram(tag, list(values), bins="auto")
    summary.value[0].tag = tag
    return summary
