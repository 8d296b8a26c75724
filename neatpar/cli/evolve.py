"""`neatpar evolve`: a run from its plan (plan.py: new, or resumed from a checkpoint with its
stored settings) to its close, the only place that knows the order of things: settings, folder,
evaluator, the populations' course, the winner's files. A run's settings are stored with it
(config/run_settings.py), so `--resume CHECKPOINT` alone continues it exactly.

Exit status: 0 done, 1 failure during the run (also complete extinction, with the run folder
complete), 130 after Ctrl+C, 143 after SIGTERM and 129 when the terminal closes (SIGHUP) at any
moment (a checkpoint of the interrupted generation is saved once one has started).
"""
from __future__ import annotations

import contextlib
import importlib
import importlib.util
import logging
import os
import shutil
import sys

import neat
import numpy as np

from ..config.settings import Settings
from ..errors import ExportError, NeatparError, Terminated
from ..record.archive import save_archive
from ..record.folder import SUBSTRATE_FILE, RunFolder, load_behaviors, load_substrate
from ..record.models import write_winner_models
from ..record.tensorboard import EventLog
from ..episodes.evaluator import EnvEvaluator
from .alternation import Alternation
from .clips import ClipReporter, Clips, ClipSchedule
from .interrupts import Interrupts, exit_status
from .plan import Plan, make_plan
from .progress import GenerationBar
from .recorder import CheckpointSchedule, Reporting, RunRecorder


class OnePopulation:
    """A run of one population: its recorder, event files and clips (None: no video_interval) in
    the run folder. An asymmetric self-play run (alternation.py: Alternation) offers the same
    methods."""

    def __init__(self, plan: Plan, evaluator: EnvEvaluator, folder: RunFolder, bar: GenerationBar,
                 clips: Clips | None = None):
        start, settings = plan.start, plan.settings
        self.plan, self.population, self.rows, self.done = plan, start.population, start.rows, start.done
        self.evaluator, self.folder = evaluator, folder
        resume_at = start.done if plan.resume else None
        self.events = EventLog(folder.path, resume_at=resume_at)
        self.recorder = RunRecorder(self.population, evaluator, self.rows,
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
        return len(self.rows)

    def run(self, generations: int) -> None:
        self.population.run(self.evaluator.evaluate, generations - self.done)

    def save_snapshot(self) -> str:
        return self.recorder.save_snapshot()

    def finish(self) -> None:
        _final_round_robin(self.evaluator, self.plan.quiet)
        _finish(self.plan, self.folder, self.evaluator, self.rows, self.clips.latest if self.clips else None)

    def keep_best(self) -> list[str]:
        """The best genome so far, its files and models, for a run stopped early (no round-robin,
        no plots: it stops now); nothing before a generation was scored."""
        best = self.evaluator.best_so_far
        return [] if best is None else _winner_files(self.plan, self.folder, self.evaluator, best)

    def close(self) -> None:
        self.events.close()
        if self.clips is not None:
            self.clips.close()


def evolve(args) -> int:
    """`neatpar evolve` with its parsed arguments: the run's plan (plan.py, which alone reads
    them), then the run."""
    with Interrupts() as interrupts:
        return _evolve(make_plan(args), interrupts)


def _evolve(plan: Plan, interrupts: Interrupts) -> int:
    for note in plan.notes:
        print(f"neatpar: note: {note}", file=sys.stderr, flush=True)
    config, settings, start = plan.config, plan.settings, plan.start
    with interrupts.held():
        _import_run_modules(settings)
        # checks the build (a Gymnasium one: makes it once)
        evaluator = EnvEvaluator.from_settings(settings, configs=plan.configs)
    try:
        folder = (RunFolder.first_free(plan.out, plan.run) if plan.default_out
                  else RunFolder(plan.out, plan.run, resume=plan.here))
    except BaseException:
        evaluator.close()
        raise
    course = bar = clips = None
    completed_before = len(start.rows) + sum(len(side.rows) for side in (start.sides or {}).values())
    kept, failure = False, None
    quiet_ray = contextlib.ExitStack()
    try:
        quiet_ray.enter_context(_ray_quiet(plan.quiet, settings))
        bar = GenerationBar(enabled=False if plan.quiet else None)  # drawn only on a terminal
        evaluator.begin_run(folder.logs, bar.update if bar.enabled else None, start.state,
                            f"checkpoint {plan.resume}")
        if plan.resume:   # a hyperneat run goes on with its substrate (its folder's, or its checkpoint's run's)
            evaluator.recorded_geometry = (load_substrate(folder.path)
                                           or load_substrate(os.path.dirname(os.path.dirname(plan.resume))))
        if settings.video_interval:
            clips = Clips(evaluator, ClipSchedule(settings.video_interval, settings.generations))
        if plan.configs is not None:
            course = Alternation(plan, evaluator, folder, bar, lambda: _final_round_robin(evaluator, plan.quiet),
                                 clips)
        else:
            course = OnePopulation(plan, evaluator, folder, bar, clips)
        resumed_from = f", resumed from {os.path.basename(plan.resume)}" if plan.resume else ""
        print(f"neatpar evolve: {_shown_path(plan.run.config_path)} -> {folder.path} (generations {start.done}.."
              f"{settings.generations - 1}{resumed_from}); watch it: {_watch_command(folder.path)}", flush=True)
        try:
            with _warnings_above(bar):
                course.run(settings.generations)
        except neat.CompleteExtinctionException:
            kept = True
            course.finish()
            path = course.save_snapshot()
            print(f"neatpar: error: every species went extinct in generation {course.generation} (neat-python's "
                  f"complete extinction): set reset_on_extinction = True in [NEAT], or keep species with "
                  f"species_elitism in [DefaultStagnation]; the best genome so far is in {folder.path}, the last "
                  f"generation in {path}", file=sys.stderr)
            return 1
        kept = True
        if course.solved is not None:
            path = course.save_snapshot()
            print(f"fitness_threshold reached: generation {course.solved}'s {config.fitness_criterion} fitness is "
                  f"at least {config.fitness_threshold:g} ([NEAT] fitness_threshold), so the run stops here (set "
                  f"no_fitness_termination = True to run every generation); checkpoint {path}", flush=True)
        course.finish()
        return 0
    except (KeyboardInterrupt, Terminated) as stop:
        interrupts.seen(evaluator.kill)
        if bar is not None:
            bar.close()
        if course is not None and course.snapshot:
            path = course.save_snapshot()
            kept = True
            print(f"\ninterrupted: checkpoint {path}; resume with --resume {path}", file=sys.stderr, flush=True)
        else:
            print("\ninterrupted before the first generation started", file=sys.stderr, flush=True)
        interrupts.release()
        if kept:   # a second signal from here on ends the process at once: the checkpoint is whole
            try:
                _show_best_so_far(course.keep_best())
            except OSError as error:
                print(f"neatpar: warning: the best genome so far was not written ({error})", file=sys.stderr)
        return exit_status(stop)
    except NeatparError as error:
        failure = error
        raise
    finally:
        if bar is not None:
            bar.close()
        evaluator.close()
        if clips is not None:
            clips.close()
        quiet_ray.close()
        completed = course.completed if course is not None else completed_before
        if course is not None:
            course.close()  # before a discard: no writer thread is left with a file in the folder
        if not kept and completed == completed_before:  # nothing of this run was completed
            named = failure is not None and folder.logs in str(failure)   # a simulator's log shown
            moved = folder.discard(keep_logs=named)
            if moved is not None:  # the error names the logs where they are now
                failure.args = (str(failure).replace(moved.were, moved.now),)
        folder.release()


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


def _finish(plan: Plan, folder: RunFolder, evaluator: EnvEvaluator, rows: list, clip: str | None = None) -> None:
    """The winner files, its models for Unity and the plot of a run that ended (the simulator is
    no longer needed); what the run left, the commands that play and watch it and its latest
    clip, `clip` (with --quiet, the winner and its file only)."""
    config, quiet = plan.config, plan.quiet
    evaluator.close()
    # The best genome found, as it was when it scored best (neat-python's best_genome is the
    # live object, whose fitness a later generation may have overwritten); in self-play the
    # league's winner.
    best = evaluator.winner
    files = _winner_files(plan, folder, evaluator, best)
    plots = folder.plot(rows)
    archive = evaluator.search.elites
    if archive is not None:
        plots += save_archive(folder.path, archive, config, evaluator.settings.qd_offset)
    winner = _shown_path(os.path.join(folder.path, "winner.json"))
    if quiet:
        print(f"winner: genome {best.key}, fitness {best.fitness:.3f}: {winner}", flush=True)
        return
    print(f"\nwinner: genome {best.key}, fitness {best.fitness:.3f}{_league_note(evaluator)}")
    for path in files + plots:
        print(f"  {path}")
    print(f"\nplay it: {_program()} play --config {_shown_path(plan.run.config_path)} --genome {winner}")
    if archive is not None and archive.cells:
        index = ",".join(str(int(i)) for i in np.unravel_index(archive.filled()[0], archive.grid.bins))
        print(f"any elite: {_program()} export --config {_shown_path(plan.run.config_path)} --genome "
              f"{_shown_path(os.path.join(folder.path, 'archive.json'))} --cell {index} --out elite.onnx")
    if clip is not None:
        print(f"see it: {_shown_path(clip)}")
    print(f"watch it: {_watch_command(folder.path)}", flush=True)


def _show_best_so_far(files: list[str]) -> None:
    """Where an interrupted run left its best genome so far (one winner.json, or one a population)."""
    winners = [path for path in files if os.path.basename(path) == "winner.json"]
    if winners:
        print(f"best genome so far: {', '.join(_shown_path(path) for path in winners)}", flush=True)


def _winner_files(plan: Plan, folder: RunFolder, evaluator: EnvEvaluator, best) -> list[str]:
    """`best`'s files in the run folder (winner.json, .pickle, .dot), with its models for Unity,
    the path of the substrate its network needs (hyperneat) and league.json (self-play)."""
    files = folder.save_winner(best, plan.config)
    substrate = os.path.join(folder.path, SUBSTRATE_FILE)   # with winner.json, all a hyperneat winner's network needs
    if os.path.isfile(substrate):
        files.append(substrate)
    if evaluator.selfplay is not None:
        files.append(folder.save_league(evaluator.selfplay.describe()))
    try:
        files += write_winner_models(best, plan.config, plan.settings, load_behaviors(folder.path) or {},
                                     folder.path, evaluator.geometry or load_substrate(folder.path))
    except ExportError as error:  # e.g. a function registered on the config: the run itself is fine
        print(f"neatpar: warning: no winner.onnx: {error}", file=sys.stderr)
    return files


def _final_round_robin(evaluator: EnvEvaluator, quiet: bool) -> None:
    """A self-play run's final round-robin, announced (it plays games after the last generation)."""
    selfplay = evaluator.selfplay
    if selfplay is not None and evaluator.settings.league_final_games:
        if not quiet:
            sizes = " and ".join(str(len(league.members)) for league in selfplay.leagues.values())
            print(f"final round-robin of the league's {sizes} members ({evaluator.settings.league_final_games} games a "
                  f"pair) ...", flush=True)
        evaluator.final_round_robin()


def _league_note(evaluator: EnvEvaluator) -> str:
    """How a self-play winner was chosen."""
    if evaluator.selfplay is None:
        return ""
    side = evaluator.selfplay.sides[0]
    member, scores = evaluator.selfplay.winner(side), evaluator.selfplay.scores.get(side)
    how = f"the final round-robin's best (mean result {scores[member.number]:.3f})" if scores else \
        "the league's best-rated member"
    return f" in its generation; {how}, ELO {member.rating:.1f}"


def _watch_command(run_folder: str) -> str:
    """The command that shows a run in TensorBoard beside the others, as it can be typed here."""
    return f"{_command('tensorboard')} --logdir {_logdir(run_folder)}"


def _command(name: str) -> str:
    """How to type a program installed with neatpar: its name when it is on PATH, else its path
    beside this Python (e.g. .venv/bin/tensorboard after `make demo`), else what installs it."""
    if shutil.which(name):
        return name
    beside = os.path.join(os.path.dirname(sys.executable), name)
    if os.access(beside, os.X_OK):
        return _shown_path(beside)
    return f"pip install {name} && {name}"


def _logdir(run_folder: str) -> str:
    """What to give `tensorboard --logdir` to watch a run beside the others: the folder that holds
    the run folder (runs/), or the run folder itself when that is the current folder."""
    parent = os.path.dirname(run_folder)
    return _shown_path(run_folder if os.path.samefile(parent, os.getcwd()) else parent)


def _warnings_above(bar: GenerationBar):
    """neatpar's warnings printed above the progress bar while it is drawn (tqdm's logging
    redirect), not into it."""
    if not bar.enabled:
        return contextlib.nullcontext()
    from tqdm.contrib.logging import logging_redirect_tqdm
    return logging_redirect_tqdm([logging.getLogger("neatpar")])


def _ray_quiet(quiet: bool, settings: Settings):
    """With --quiet on Ray, none of Ray's forwarded output (its workers' lines, the raylets' errors)."""
    if not (quiet and settings.backend == "ray"):
        return contextlib.nullcontext()
    from ..parallel.ray_cluster import worker_logs_silenced
    return worker_logs_silenced()


def _program() -> str:
    """How the user ran neatpar, to repeat in hints: `.venv/bin/neatpar` as typed, `neatpar` from
    PATH, or `python -m neatpar.cli`."""
    program = sys.argv[0]
    if os.path.basename(program) == "neatpar":
        return program if os.sep in program and not shutil.which(os.path.basename(program)) else "neatpar"
    return f"{os.path.basename(sys.executable)} -m neatpar.cli"


def _shown_path(path: str) -> str:
    """`path` relative to the current folder when it is below it."""
    relative = os.path.relpath(path)
    return path if relative.startswith("..") else relative
