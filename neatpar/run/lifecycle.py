"""A run's lifecycle, from its plan (plan.py) to its end: named phases with a transition table,
each phase releasing what it took when the run leaves it. The only place that knows the order of
things: settings, evaluator, folder, the course of the generations (course.py), the winner's files.

    PLANNED --claim--> FOLDER_CLAIMED --start--> RUNNING --> FINISHED | EXTINCT
       |                    |                       |
       +--------------------+-----------------------+-----> INTERRUPTED | FAILED

| phase          | what holds                                             | released on leaving               |
|----------------|--------------------------------------------------------|-----------------------------------|
| PLANNED        | the plan; the evaluator, made while signals are held   | the evaluator closed              |
|                | (it checks the build; a Gymnasium one is made once)    |                                   |
| FOLDER_CLAIMED | the run folder, claimed with its lock file             | the folder discarded when nothing |
|                |                                                        | of this run is in it; its lock    |
| RUNNING        | the course, its writers, the progress bar, Ray's quiet | each closed, the simulators first |
| FINISHED       | the last generation made, or fitness_threshold reached | -                                 |
| EXTINCT        | every species went extinct: the folder is complete     | -                                 |
| INTERRUPTED    | a stop signal: the running generation checkpointed     | -                                 |
|                | once one began, and the best genome so far written     |                                   |
| FAILED         | an error: what the run completed stays                 | -                                 |

A stop signal while PLANNED is raised on to the caller (nothing of the run exists yet); later it
ends the run INTERRUPTED (interrupts.py says how a second signal is handled meanwhile).
"""
from __future__ import annotations

import contextlib
import dataclasses
import enum
import importlib
import importlib.util
import logging
import os
import signal
import sys
from typing import Any

import neat

from .. import processes
from ..config.settings_model import Settings
from ..episodes.env_evaluator import EnvEvaluator
from ..errors import NeatparError, Terminated
from ..record.folder import RunFolder, load_substrate
from ..record.stats_file import StatsFile
from ..record.stats_row import StatsRow
from .alternation import Alternation
from .clips import Clips, ClipSchedule
from .course import Course, OnePopulation
from .hints import shown_path, watch_command
from .interrupts import Interrupts
from .plan import Plan
from .progress import GenerationBar
from .winner import show_best_so_far


class RunPhase(enum.Enum):
    """Where a run is in its lifecycle (the module docstring's table)."""
    PLANNED = "planned"
    FOLDER_CLAIMED = "folder claimed"
    RUNNING = "running"
    FINISHED = "finished"
    EXTINCT = "extinct"
    INTERRUPTED = "interrupted"
    FAILED = "failed"


ENDS = (RunPhase.INTERRUPTED, RunPhase.FAILED)   # the ends every phase that is not an end can reach
TRANSITIONS: dict[RunPhase, tuple[RunPhase, ...]] = {
    RunPhase.PLANNED: (RunPhase.FOLDER_CLAIMED, *ENDS),
    RunPhase.FOLDER_CLAIMED: (RunPhase.RUNNING, *ENDS),
    RunPhase.RUNNING: (RunPhase.FINISHED, RunPhase.EXTINCT, *ENDS),
    RunPhase.FINISHED: (),
    RunPhase.EXTINCT: (),
    RunPhase.INTERRUPTED: (),
    RunPhase.FAILED: (),
}


@dataclasses.dataclass(frozen=True)
class RunResult:
    """How a run ended (`phase`: FINISHED, EXTINCT or INTERRUPTED; a failure raises instead), its
    run folder (None: stopped before it had one), its winner (the best genome as it scored best;
    an interrupted run's best so far, None before a generation was scored), the checkpoint its end
    wrote (interrupted, extinct, or fitness_threshold reached; None otherwise) and the stop signal
    that interrupted it."""
    phase: RunPhase
    folder: str | None
    winner: Any = None
    checkpoint: str | None = None
    stop_signal: int | None = None

    @property
    def stats(self) -> list[StatsRow]:
        """Every generation's stats row, read from the run folder's stats.csv and species.csv
        (an asymmetric self-play run's are in each population's behavior-NAME folder)."""
        return [] if self.folder is None else StatsFile(self.folder).rows()

    @property
    def exit_status(self) -> int:
        """`neatpar evolve`'s exit status for this end: 0 finished, 1 extinct, 130 / 143 / 129
        after Ctrl+C / SIGTERM / a closed terminal."""
        if self.phase is RunPhase.INTERRUPTED:
            return processes.exit_status(self.stop_signal)
        return 1 if self.phase is RunPhase.EXTINCT else 0

    @property
    def winner_file(self) -> str | None:
        """The winner's winner.json, when the run wrote one (an asymmetric run: one per population,
        in its behavior-NAME folder)."""
        path = None if self.folder is None else os.path.join(self.folder, "winner.json")
        return path if path is not None and os.path.isfile(path) else None


def signal_of(stop: BaseException) -> int:
    """The signal a stop exception stands for (a KeyboardInterrupt: Ctrl+C)."""
    return stop.signum if isinstance(stop, Terminated) else signal.SIGINT


class RunLifecycle:
    """One run from its plan to its end (see the module docstring): `execute` walks the phases.
    `from_python`: started by neatpar.evolve() / resume(), whose hints name those."""

    def __init__(self, plan: Plan, interrupts: Interrupts, from_python: bool = False):
        self.plan, self.interrupts, self.from_python = plan, interrupts, from_python
        self.phase = RunPhase.PLANNED
        self.reached = [RunPhase.PLANNED]
        self.evaluator: EnvEvaluator | None = None
        self.folder: RunFolder | None = None
        self.course: Course | None = None
        self.bar: GenerationBar | None = None
        self.clips: Clips | None = None
        self.quiet_ray = contextlib.ExitStack()
        self.checkpoint: str | None = None    # written by the run's end
        self.failure: BaseException | None = None
        self.completed_before = plan.start.done   # generations, every population's together

    def execute(self) -> RunResult:
        """The run, phase by phase; its result, or the error that failed it."""
        try:
            return self._walk()
        except BaseException as error:
            if TRANSITIONS[self.phase]:   # not at an end yet: the run failed
                self.failure = error
                self._to(RunPhase.FAILED)
            raise
        finally:
            self._leave()

    def _walk(self) -> RunResult:
        try:
            self._claim()
            self._start()
            return self._run()
        except (KeyboardInterrupt, Terminated) as stop:
            if self.phase is RunPhase.PLANNED:
                self._to(RunPhase.INTERRUPTED)
                raise
            return self._interrupted(stop)

    def _to(self, phase: RunPhase) -> None:
        if phase not in TRANSITIONS[self.phase]:
            raise RuntimeError(f"a run cannot go from {self.phase.value} to {phase.value}")
        self.phase = phase
        if TRANSITIONS[phase]:
            self.reached.append(phase)

    # ------------------------------------------------------------ the phases

    def _claim(self) -> None:
        """PLANNED -> FOLDER_CLAIMED: the evaluator (it checks the build), then the run folder."""
        plan = self.plan
        for note in plan.notes:
            print(f"neatpar: note: {note}", file=sys.stderr, flush=True)
        with self.interrupts.held():
            _import_run_modules(plan.settings)
            self.evaluator = EnvEvaluator.from_settings(plan.settings, configs=plan.configs)
        self.folder = (RunFolder.first_free(plan.out, plan.run) if plan.default_out
                       else RunFolder(plan.out, plan.run, resume=plan.here))
        self._to(RunPhase.FOLDER_CLAIMED)

    def _start(self) -> None:
        """FOLDER_CLAIMED -> RUNNING: the evaluator begins the run, the course takes the populations."""
        self._to(RunPhase.RUNNING)
        plan, evaluator, folder = self.plan, self.evaluator, self.folder
        settings, start = plan.settings, plan.start
        self.quiet_ray.enter_context(_ray_quiet(plan.quiet, settings))
        self.bar = GenerationBar(enabled=False if plan.quiet else None)  # drawn only on a terminal
        evaluator.begin_run(folder.logs, self.bar.update if self.bar.enabled else None, start.state,
                            f"checkpoint {plan.resume}")
        if plan.resume:   # a hyperneat run goes on with its substrate (its folder's, or its checkpoint's run's)
            evaluator.recorded_geometry = (load_substrate(folder.path)
                                           or load_substrate(os.path.dirname(os.path.dirname(plan.resume))))
        if settings.video_interval:
            self.clips = Clips(evaluator, ClipSchedule(settings.video_interval, settings.generations))
        if plan.configs is not None:
            self.course = Alternation(plan, evaluator, folder, self.bar, self.clips)
        else:
            self.course = OnePopulation(plan, evaluator, folder, self.bar, self.clips)
        resumed_from = f", resumed from {os.path.basename(plan.resume)}" if plan.resume else ""
        print(f"neatpar evolve: {shown_path(plan.run.config_path)} -> {folder.path} (generations {start.done}.."
              f"{settings.generations - 1}{resumed_from}); watch it: {watch_command(folder.path)}", flush=True)

    def _run(self) -> RunResult:
        """RUNNING -> FINISHED (the last generation, or fitness_threshold) or EXTINCT."""
        plan, course = self.plan, self.course
        try:
            with _warnings_above(self.bar):
                course.run(plan.settings.generations)
        except neat.CompleteExtinctionException:
            return self._extinct()
        if course.solved is not None:
            self.checkpoint = course.save_snapshot()
            config = plan.config
            print(f"fitness_threshold reached: generation {course.solved}'s {config.fitness_criterion} fitness is "
                  f"at least {config.fitness_threshold:g} ([NEAT] fitness_threshold), so the run stops here (set "
                  f"no_fitness_termination = True to run every generation); checkpoint {self.checkpoint}", flush=True)
        course.finish()
        self._to(RunPhase.FINISHED)
        return self._result(self.evaluator.winner)

    def _extinct(self) -> RunResult:
        course = self.course
        course.finish()
        self.checkpoint = course.save_snapshot()
        print(f"neatpar: error: every species went extinct in generation {course.generation} (neat-python's "
              f"complete extinction): set reset_on_extinction = True in [NEAT], or keep species with "
              f"species_elitism in [DefaultStagnation]; the best genome so far is in {self.folder.path}, the last "
              f"generation in {self.checkpoint}", file=sys.stderr)
        self._to(RunPhase.EXTINCT)
        return self._result(self.evaluator.winner)

    def _interrupted(self, stop: BaseException) -> RunResult:
        """-> INTERRUPTED: the running generation's checkpoint (once one began), then the best
        genome so far; a second signal waits for the checkpoint (interrupts.py)."""
        self.interrupts.seen(self.evaluator.kill)
        if self.bar is not None:
            self.bar.close()
        course = self.course
        if course is not None and course.snapshot:
            self.checkpoint = course.save_snapshot()
            how = f"neatpar.resume({self.checkpoint!r})" if self.from_python else f"--resume {self.checkpoint}"
            print(f"\ninterrupted: checkpoint {self.checkpoint}; resume with {how}", file=sys.stderr, flush=True)
        else:
            print("\ninterrupted before the first generation started", file=sys.stderr, flush=True)
        self._to(RunPhase.INTERRUPTED)
        self.interrupts.release()
        if self.checkpoint is not None:   # a second signal from here on ends the run at once: the checkpoint is whole
            try:
                show_best_so_far(course.keep_best())
            except OSError as error:
                print(f"neatpar: warning: the best genome so far was not written ({error})", file=sys.stderr)
        return self._result(self.evaluator.best_so_far, signal_of(stop))

    def _result(self, winner, signum: int | None = None) -> RunResult:
        return RunResult(self.phase, self.folder.path, winner, self.checkpoint, signum)

    # ------------------------------------------------------------ leaving the phases

    def _leave(self) -> None:
        """Release what each phase reached took, the latest phase first."""
        leave = {RunPhase.RUNNING: self._leave_running, RunPhase.FOLDER_CLAIMED: self._leave_folder,
                 RunPhase.PLANNED: self._close_evaluator}
        for phase in reversed(self.reached):
            leave[phase]()

    def _close_evaluator(self) -> None:
        if self.evaluator is not None:
            self.evaluator.close()   # the simulators first: nothing writes into the folder after

    def _leave_running(self) -> None:
        if self.bar is not None:
            self.bar.close()
        self._close_evaluator()
        if self.clips is not None:
            self.clips.close()
        self.quiet_ray.close()
        if self.course is not None:
            self.course.close()  # before a discard: no writer thread is left with a file in the folder

    def _leave_folder(self) -> None:
        self._close_evaluator()
        completed = self.course.completed if self.course is not None else self.completed_before
        if self.phase in ENDS and self.checkpoint is None and completed == self.completed_before:
            failure = self.failure if isinstance(self.failure, NeatparError) else None
            named = failure is not None and self.folder.logs in str(failure)   # a simulator's log shown
            moved = self.folder.discard(keep_logs=named)
            if moved is not None:  # the error names the logs where they are now
                failure.args = (str(failure).replace(moved.were, moved.now),)
        self.folder.release()


def _import_run_modules(settings: Settings) -> None:
    """What the run imports on first use (its environment's side, TensorBoard's writer, Ray),
    imported now, while signals are held (see interrupts.py)."""
    names = ["tensorboardX", "tqdm.contrib.logging"]
    if settings.gym is None:
        names.append("neatpar.envs.unity.bridge")
    if settings.backend == "ray" and importlib.util.find_spec("ray") is not None:  # else: Ray's ConfigError later
        names.append("ray")
    for name in names:
        importlib.import_module(name)


def _warnings_above(bar: GenerationBar):
    """neatpar's warnings printed above the progress bar while it is drawn (tqdm's logging
    redirect), not into it."""
    if not bar.enabled:
        return contextlib.nullcontext()
    from tqdm.contrib.logging import logging_redirect_tqdm
    return logging_redirect_tqdm([logging.getLogger("neatpar")])


def _ray_quiet(quiet: bool, settings: Settings):
    """When quiet on Ray, none of Ray's forwarded output (its workers' lines, the raylets' errors)."""
    if not (quiet and settings.backend == "ray"):
        return contextlib.nullcontext()
    from ..parallel.ray_cluster import worker_logs_silenced
    return worker_logs_silenced()
