"""Asymmetric self-play in a run: two behaviors with the role `league` (a striker and a
goalie, a runner and a chaser), each evolving a NEAT population of its own from its own neat
config ([neatpar] neat_configs: different observations and actions are fine), taking turns every
`team_change` generations: the learning population plays the other one's league (episodes/league.py,
ML-Agents' team_change).

Each population has its own outputs in the run folder's `behavior-NAME/` (NAME as TensorBoard
names it: the behavior with characters other than letters, digits and `._=-` made `_`):
stats.csv (the population's own generations), fitness.png, species.png, behaviors.json,
winner.json / .pickle / .dot (its league's best-rated member), winner.onnx, and TensorBoard
event files, so that TensorBoard shows each population as a run of its own. The run folder holds
what belongs to the run: checkpoints/, league.json and sim-logs/. A checkpoint is named after the
run's generation (both populations' generations together) and holds the whole run: neat-python's
Checkpointer format of the first league behavior's population, then neatpar's state with the
second one's, both stats histories and the leagues.
"""
from __future__ import annotations

import os
import random
import sys
from dataclasses import dataclass

import neat

from ..errors import ConfigError, ExportError
from ..record.models import write_model
from .clips import ClipReporter, Clips
from .plan import Plan
from ..record.checkpoint import Checkpoint, PopulationState, save_bytes
from ..record.folder import RunFolder, load_behaviors
from ..record.tensorboard import EventLog, behavior_run
from ..record.stats_file import StatsFile
from .course import begun_stats
from .recorder import CheckpointSchedule, Reporting, RunRecorder
from .winner import final_round_robin


@dataclass
class Side:
    """One league behavior's population and its outputs."""
    behavior: str
    config: neat.Config
    population: neat.Population
    folder: RunFolder
    events: EventLog
    stats: StatsFile
    recorder: RunRecorder
    done: int
    clips: ClipReporter | None = None


class Alternation:
    """Both populations of an asymmetric self-play run (see the module docstring), as its `plan`
    has them: `plan.start` holds the first behavior's population (new, or restored from a
    checkpoint, whose extras hold the second one: `start.sides`), `plan.configs` the populations'
    neat configs, `plan.run` the run's settings, stored in every checkpoint. With `clips`, each population records the
    clips of its turns in its own folder (clips.py)."""

    def __init__(self, plan: Plan, evaluator, folder: RunFolder, bar, clips: Clips | None = None):
        settings, configs, start = plan.settings, plan.configs, plan.start
        self.settings, self.evaluator, self.folder, self.quiet = settings, evaluator, folder, plan.quiet
        self.run_settings = run = plan.run
        first, saved_sides = start.population, start.sides
        self.snapshot, self.snapshot_generation = b"", 0
        selfplay = evaluator.selfplay
        self.sides: list[Side] = []
        for number, behavior in enumerate(selfplay.sides):
            config = configs[behavior]
            if not config.no_fitness_termination:
                raise ConfigError(f"the neat config of {behavior!r} has no_fitness_termination = false: in asymmetric "
                                  f"self-play a population stops only when the run does; set no_fitness_termination "
                                  f"= true in its [NEAT] section")
            if number == 0:
                population, saved = first, start.checkpoint.population if start.checkpoint else None
            elif saved_sides is not None:
                saved = saved_sides[behavior]
                population = saved.restore(config)
            else:
                population, saved = neat.Population(config), None   # continues the run's seeded generator
            sub = RunFolder(os.path.join(folder.path, behavior_run(behavior)), None)
            stats = begun_stats(sub.path, plan, saved, behavior_run(behavior))
            events = EventLog(sub.path, resume_at=population.generation if plan.resume else None)
            reporting = Reporting(sub, run, plan.quiet, events, bar, label=f"{behavior.split('?')[0]:>8s} ")
            recorder = RunRecorder(population, evaluator, stats, reporting, CheckpointSchedule(None, settings.generations))
            population.add_reporter(recorder)
            population.add_reporter(_Turn(self))
            reporter = None
            if clips is not None:
                reporter = ClipReporter(clips, sub.path, population.generation if plan.resume else None, behavior)
                population.add_reporter(reporter)
            self.sides.append(Side(behavior, config, population, sub, events, stats, recorder, population.generation,
                                   reporter))
            selfplay.start(behavior, next(iter(population.population.values())))

    @property
    def generation(self) -> int:
        """The run's generation in progress (both populations' generations together)."""
        return self.evaluator.generation

    @property
    def completed(self) -> int:
        """Generations with a stats row, both populations together."""
        return sum(side.done + side.recorder.made for side in self.sides)

    def run(self, generations: int) -> None:
        """Turns until the run has `generations` generations."""
        selfplay, change = self.evaluator.selfplay, self.settings.team_change
        while self.generation < generations:
            side = next(s for s in self.sides if s.behavior == selfplay.learner(self.generation))
            side.population.run(self.evaluator.evaluate, min(change - self.generation % change,
                                                             generations - self.generation))

    def state(self, advanced: Side | None = None) -> bytes:
        """The whole run as a checkpoint's content; `advanced` is the population that has just
        made its next generation (neat-python counts it one generation later)."""
        saved = {side.behavior: PopulationState(config=side.config, population=side.population.population,
                                                species=side.population.species,
                                                generation=side.population.generation + (side is advanced),
                                                best_genome=side.population.best_genome,
                                                columns=list(side.stats.columns))
                 for side in self.sides}
        first = saved.pop(self.sides[0].behavior)
        return Checkpoint(first, random.getstate(), self.evaluator.run_state(), self.run_settings,
                          sides=saved).to_bytes()

    @property
    def solved(self) -> None:
        """Never: both populations run with no_fitness_termination."""
        return None

    def save_snapshot(self) -> str:
        """Checkpoint of the generation that was running: it is played again on resume."""
        return save_bytes(self.folder.path, self.snapshot_generation, self.snapshot)

    def after_generation(self, side_population) -> None:
        """A population made its next generation: the run's checkpoint, when one is due (every
        checkpoint_interval generations, and after the run's last)."""
        if self.generation % self.settings.checkpoint_interval == 0 or self.generation == self.settings.generations:
            advanced = next(s for s in self.sides if s.population.population is side_population)
            save_bytes(self.folder.path, self.generation, self.state(advanced))

    def finish(self) -> list[str]:
        """league.json; per population its winner (its league's best-rated member), the winner's
        model for Unity and the plots (the simulators are no longer needed)."""
        final_round_robin(self.evaluator, self.quiet)
        self.evaluator.close()
        selfplay = self.evaluator.selfplay
        files = [self.folder.save_league(selfplay.describe())]
        layouts = self._layouts()
        for side in self.sides:
            member = selfplay.winner(side.behavior)
            files += self._winner_files(side, member.genome, layouts)
            files += side.folder.plot(side.stats.rows())
            if side.clips is not None and side.clips.latest is not None:
                files.append(side.clips.latest)
            if not self.quiet:
                how = "final round-robin's best" if selfplay.scores.get(side.behavior) else "best-rated member"
                print(f"\nwinner of {side.behavior}: genome {member.genome.key}, its league's {how} (ELO "
                      f"{member.rating:.1f})")
        if not self.quiet:
            print("".join(f"  {path}\n" for path in files), end="", flush=True)
        return files

    def keep_best(self) -> list[str]:
        """Each population's best-rated member so far, its files and model, for a run stopped early
        (no round-robin, no plots: it stops now)."""
        selfplay, layouts = self.evaluator.selfplay, self._layouts()
        if not selfplay.has_members():   # stopped before every population had its turn
            return []
        files = [self.folder.save_league(selfplay.describe())]
        for side in self.sides:
            files += self._winner_files(side, selfplay.winner(side.behavior).genome, layouts)
        return files

    def _layouts(self) -> dict:
        """The behaviors' layouts, as the game reported them to either population's first generation."""
        layouts = {}
        for side in self.sides:
            layouts.update(load_behaviors(side.folder.path) or {})
        return layouts

    def _winner_files(self, side, genome, layouts: dict) -> list[str]:
        """A population's winner files in its folder, with its model for Unity where the game's
        layout is known."""
        files = side.folder.save_winner(genome, side.config)
        if layouts and not side.folder.has_behaviors():   # a population that never had its turn
            side.folder.save_behaviors(layouts, {r.behavior: r.role for r in self.settings.behaviors})
        if side.behavior in layouts:
            try:
                files.append(write_model(genome, side.config, self.settings, layouts[side.behavior],
                                         os.path.join(side.folder.path, "winner.onnx")))
            except ExportError as error:
                print(f"neatpar: warning: no winner.onnx for {side.behavior}: {error}", file=sys.stderr)
        return files

    def close(self) -> None:
        for side in self.sides:
            side.events.close()
            if side.clips is not None:
                side.clips.close()


class _Turn(neat.reporting.BaseReporter):
    """The run's snapshot before each generation (for a Ctrl+C checkpoint) and its checkpoints after."""

    def __init__(self, alternation: Alternation):
        self.alternation = alternation

    def __reduce__(self):
        # Checkpoints pickle the species set's reporters: this one holds the live run.
        return (neat.reporting.BaseReporter, ())

    def start_generation(self, generation):
        run = self.alternation
        run.snapshot, run.snapshot_generation = run.state(), run.generation

    def end_generation(self, config, population, species_set):
        self.alternation.after_generation(population)
