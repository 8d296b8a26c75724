"""neat-python reporters of a run: one line per generation on the terminal (a progress bar while
it runs), stats.csv rows and TensorBoard events, checkpoints (every K generations and of the run's
last generation), and the snapshot that lets Ctrl+C, SIGTERM, extinction or a reached
fitness_threshold checkpoint the generation that was running.

What a generation costs here does not grow with the run: its row is appended to the run folder's
files (stats_file.py), checkpoints and the snapshot hold no history, and of what neat-python keeps
for the run's whole length only what it reads stays (`forget_history`)."""
from __future__ import annotations

import random
import time
from dataclasses import dataclass

import neat

from ..config.run_settings import RunSettings
from ..record.checkpoint import Checkpoint, PopulationState, save_bytes
from ..record.folder import RunFolder
from ..record.stats_file import StatsFile
from ..record.stats_row import StatsRow
from ..record.tensorboard import EventLog
from .progress import GenerationBar


@dataclass(frozen=True)
class Reporting:
    """Where and how a population's generations are reported: the run folder of its stats.csv,
    behaviors and checkpoints, the run's settings every checkpoint carries (`run`), whether it
    prints progress lines (not when `quiet`), its TensorBoard events and progress bar (None: none)
    and the label that begins each progress line."""
    folder: RunFolder
    run: RunSettings
    quiet: bool = False
    events: EventLog | None = None
    bar: GenerationBar | None = None
    label: str = ""


@dataclass(frozen=True)
class CheckpointSchedule:
    """When a recorder writes checkpoints: every `interval` generations and once the run's last
    generation (`final`) has been made; `interval` None writes none (a run that writes its own:
    alternation.py)."""
    interval: int | None
    final: int


def forget_history(reproduction, population, species_set) -> None:
    """What neat-python keeps for a run's whole length, cut to what it reads, so that neither a
    generation's memory nor its checkpoint grows with the run: of `ancestors` (every genome's
    parents, never read; about 4 KiB a generation at population 40) the living generation's; of
    each species' `fitness_history` (of which the stagnation reads only the maximum, and which
    every snapshot pickles) that maximum, the first one of equals, as `max` finds it."""
    ancestors = getattr(reproduction, "ancestors", None)
    if isinstance(ancestors, dict) and len(ancestors) > len(population):
        living = {key: ancestors[key] for key in population if key in ancestors}
        ancestors.clear()
        ancestors.update(living)
    for species in getattr(species_set, "species", {}).values():
        history = getattr(species, "fitness_history", None)
        if isinstance(history, list) and len(history) > 1:
            history[:] = [max(history)]


def _search_note(row: StatsRow) -> str:
    """A search's part of a generation's line: the archive's size (MAP-Elites: with its coverage)."""
    if row.search is None:
        return ""
    coverage = row.search["coverage"]
    return f" | archive {row.search['archive_size']:5d}" + ("" if coverage is None else f" ({coverage:.0%})")


class RunRecorder(neat.reporting.BaseReporter):
    """Progress lines, stats rows, TensorBoard events, checkpoints and the state a Ctrl+C
    checkpoint needs, of one population whose stats rows go to `stats` (begun where the run
    starts): where and how they are reported is `reporting`, when checkpoints are written
    `checkpoints`. `made` counts the generations it recorded."""

    def __init__(self, population, evaluator, stats: StatsFile, reporting: Reporting,
                 checkpoints: CheckpointSchedule):
        self.population, self.evaluator, self.stats, self.checkpoints = population, evaluator, stats, checkpoints
        self.made = 0
        self.folder, self.run, self.quiet = reporting.folder, reporting.run, reporting.quiet
        self.solved: int | None = None  # the generation whose fitness reached fitness_threshold
        self.events, self.bar, self.label = reporting.events, reporting.bar, reporting.label
        self.population_behaviors = list(evaluator.settings.population_behaviors)
        self.generation = population.generation
        self.started = time.perf_counter()
        self.snapshot = b""
        self.behaviors_recorded = self.folder.has_behaviors()
        self.substrate_recorded = False   # written after the first generation (rewritten the same on resume)

    def __reduce__(self):
        # neat-python's species set keeps the reporters, so checkpoints pickle them; this one
        # holds the live evaluator and is replaced by an inert reporter (Population re-attaches
        # its own reporters on resume).
        return (neat.reporting.BaseReporter, ())

    def start_generation(self, generation):
        self.generation = generation
        self.started = time.perf_counter()
        # A consistent picture of this generation before it is evaluated: a Ctrl+C or SIGTERM
        # during evaluation or reproduction checkpoints this, and resume evaluates it again.
        self.snapshot = self._checkpoint(PopulationState.of(self.population, self.stats.columns)).to_bytes()
        if self.bar is not None:
            self.bar.start(generation, len(self.population.population) * self.evaluator.settings.episodes_per_genome)

    def post_evaluate(self, config, population, species, best_genome):
        stats = self.evaluator.last_stats
        selfplay = self.evaluator.selfplay
        row = StatsRow.of_generation(self.generation, population, species, stats, time.perf_counter() - self.started,
                                     self.population_behaviors, selfplay.row() if selfplay is not None else None,
                                     self.evaluator.search_stats, self.evaluator.fitness,
                                     self.evaluator.validation.values(), self.evaluator.curriculum.played)
        self.stats.append(row)
        self.made += 1
        if self.events is not None:
            self.events.write(self.generation, row, stats.game.histograms())
        if self.bar is not None:
            self.bar.close()
        if stats.layouts and not self.behaviors_recorded:
            roles = {r.behavior: r.role for r in self.evaluator.settings.behaviors}
            self.folder.save_behaviors(stats.layouts, roles)
            self.behaviors_recorded = True
        if self.evaluator.geometry is not None and not self.substrate_recorded:   # a hyperneat run's substrate
            self.folder.save_substrate(self.evaluator.geometry)
            self.substrate_recorded = True
        if not self.quiet and self.evaluator.generation == 1:   # the first generation of a new run
            if self.evaluator.settings.inference != "inprocess":
                print(self.evaluator.inference_note, flush=True)
            if self.evaluator.hosted:
                print(self.evaluator.hosts_note, flush=True)
        if not self.quiet:
            print(f"{self.label}gen {row.generation:4d} | best {row.best_fitness:9.3f} | "
                  f"mean {row.mean_fitness:9.3f} | "
                  f"species {row.species:3d} | {row.scored_steps_per_s:8.0f} scored agent-steps/s | "
                  f"{row.seconds:6.1f} s" + (f" | ELO {row.league.elo:7.1f}" if row.league is not None else "")
                  + _search_note(row), flush=True)
            for change in self.evaluator.curriculum.changes:   # what the next generation plays
                print(f"{self.label}{change.line()}", flush=True)

    def found_solution(self, config, generation, best):
        # neat-python also calls this at the end of a run with no_fitness_termination.
        if not config.no_fitness_termination:
            self.solved = generation

    def end_generation(self, config, population, species_set):
        next_generation = self.generation + 1
        interval = self.checkpoints.interval
        due = interval is not None and (next_generation % interval == 0 or next_generation == self.checkpoints.final)
        if due:
            # neat-python counts the new generation after its reporters have seen it
            made = PopulationState(config=self.population.config, population=population, species=species_set,
                                   generation=next_generation, best_genome=self.population.best_genome,
                                   columns=list(self.stats.columns))
            self._checkpoint(made).save(self.folder.path)
        forget_history(self.population.reproduction, population, species_set)

    def _checkpoint(self, population: PopulationState) -> Checkpoint:
        """The run with `population` as it is now (random state, evaluator, settings)."""
        return Checkpoint(population, random.getstate(), self.evaluator.run_state(), self.run)

    def save_snapshot(self) -> str:
        """Checkpoint of the generation that was running (interrupted, extinct, or the one that
        reached fitness_threshold): it will be evaluated again on resume."""
        return save_bytes(self.folder.path, self.generation, self.snapshot)
