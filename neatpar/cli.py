"""`neatpar evolve`, `play` and `export`: a thin layer over EnvEvaluator, the run folder and the
exporter.

Exit status: 0 done, 2 bad input (one line naming the fix), 1 failure during the run (also
complete extinction, with the run folder complete), 130 after Ctrl+C and 143 after SIGTERM (a
checkpoint of the interrupted generation is saved).
"""
from __future__ import annotations

import argparse
import contextlib
import logging
import os
import random
import shutil
import signal
import statistics
import sys
import time
from dataclasses import dataclass

import neat

from . import __version__
from .errors import ConfigError, ExportError, NeatparError, Terminated
from .export import choose_behavior, layouts_for, write_model, write_winner_models
from .genome_io import load_genome
from .progress import GenerationBar
from .reporters import RunRecorder
from .run.evaluator import UnityEvaluator
from .run_folder import RunFolder, load_behaviors, load_checkpoint, restore_population
from .selfplay import Alternation
from .settings import Settings, Source, flags, load, population_configs
from .tensorboard import EventLog, behavior_run

SECURITY_NOTE = (
    "Checkpoints and .pickle genomes are pickles, and loading a pickle runs code: neatpar only loads "
    "the checkpoint you name with --resume and the genome file you name with --genome. Share "
    "winners as winner.json, which loads without pickle.")


def _on_sigterm(signum, frame):
    raise Terminated()


@dataclass
class Start:
    """Where a run starts: a new or restored population, the generations already done, the
    stats rows and evaluator state carried over from a checkpoint."""
    population: neat.Population
    done: int
    rows: list
    champion: object = None
    evaluator_generation: int = 0
    selfplay: dict | None = None   # a self-play run's leagues (run/league.py: SelfPlay.state)
    sides: dict | None = None      # an asymmetric self-play run's second population (selfplay.py)


def _default_out(config_path: str) -> str:
    stem = os.path.splitext(os.path.basename(config_path))[0]
    return os.path.join("runs", f"{stem}-{time.strftime('%Y%m%d-%H%M%S')}")


def _restore(path: str, config) -> Start:
    generation, saved_config, population, species_set, rndstate, extras = load_checkpoint(path)
    old, new = saved_config.genome_config, config.genome_config
    if (old.num_inputs, old.num_outputs) != (new.num_inputs, new.num_outputs):
        raise ConfigError(f"checkpoint {path} was made with num_inputs = {old.num_inputs}, num_outputs = "
                          f"{old.num_outputs}; the config has {new.num_inputs} and {new.num_outputs}: resume with "
                          f"the run's own config")
    restored = restore_population(saved_config, config, population, species_set, generation, extras.get("best_genome"))
    random.setstate(rndstate)
    sides = extras.get("sides")
    evaluator_generation = extras.get("evaluator_generation", generation)
    # An asymmetric run's generations are both populations' together.
    return Start(restored, evaluator_generation if sides else generation, list(extras.get("rows", [])),
                 extras.get("champion"), evaluator_generation, extras.get("selfplay"), sides)


def _settings(args) -> tuple[neat.Config, Settings]:
    """The config file's settings, changed by the command-line flags that were given."""
    config, settings = load(args.config)
    given = {f.name: getattr(args, f.name) for f in flags() if getattr(args, f.name) is not None}
    return config, settings.with_changes(Source.FLAG, **given)


def _start(args, config, settings: Settings) -> tuple[Start, str]:
    """The run's start and its folder; everything that can be refused is refused here, before the
    run folder or a simulator exists."""
    if args.resume:
        start = _restore(args.resume, config)
        if start.done >= settings.generations:
            raise ConfigError(f"checkpoint {args.resume} is at generation {start.done}, and the run has "
                              f"{settings.generations} generations: nothing to do; resume with --generations "
                              f"greater than {start.done}")
        out = args.out or os.path.dirname(os.path.dirname(os.path.abspath(args.resume)))
        return start, out
    out = args.out or _default_out(args.config)
    if os.path.isdir(out) and os.listdir(out):
        raise ConfigError(f"run folder {out} already holds a run: choose a new --out, or continue that run with "
                          f"--resume {os.path.join(out, 'checkpoints', 'checkpoint-N.gz')}")
    return Start(neat.Population(config, seed=settings.seed), 0, []), out


class OnePopulation:
    """A run of one population: its recorder and event files in the run folder. An asymmetric
    self-play run (selfplay.Alternation) offers the same methods."""

    def __init__(self, start: Start, evaluator: UnityEvaluator, folder: RunFolder, bar: GenerationBar,
                 config, settings: Settings, args):
        self.population, self.rows, self.done = start.population, start.rows, start.done
        self.evaluator, self.folder, self.config, self.settings, self.args = evaluator, folder, config, settings, args
        self.events = EventLog(folder.path, resume_at=start.done if args.resume else None)
        self.recorder = RunRecorder(self.population, evaluator, folder, settings.checkpoint_interval, args.quiet,
                                    self.rows, self.events, bar)
        self.population.add_reporter(self.recorder)

    @property
    def generation(self) -> int:
        return self.recorder.generation

    @property
    def snapshot(self) -> bytes:
        return self.recorder.snapshot

    @property
    def completed(self) -> int:
        return len(self.rows)

    def run(self, generations: int) -> None:
        self.population.run(self.evaluator.evaluate, generations - self.done)

    def save_interrupted(self) -> str:
        return self.recorder.save_interrupted()

    def finish(self) -> None:
        _final_round_robin(self.evaluator, self.args.quiet)
        _finish(self.folder, self.evaluator, self.config, self.settings, self.rows, self.args)

    def close(self) -> None:
        self.events.close()


def evolve(args) -> int:
    config, settings = _settings(args)
    asymmetric = settings.asymmetric
    configs = population_configs(settings, config) if asymmetric else {}
    if asymmetric:   # the first league behavior's population is the checkpoints' neat-python part
        config = next(iter(configs.values()))
    start, out = _start(args, config, settings)
    evaluator = UnityEvaluator.from_settings(settings)  # checks the build path
    evaluator.champion, evaluator.generation = start.champion, start.evaluator_generation
    if start.selfplay is not None and evaluator.selfplay is not None:
        evaluator.selfplay.restore(start.selfplay, f"checkpoint {args.resume}")
    folder = RunFolder(out)
    evaluator.log_folder = folder.logs
    bar = GenerationBar(enabled=False if args.quiet else None)  # drawn only on a terminal
    evaluator.progress = bar.update if bar.enabled else None
    if asymmetric:
        course = Alternation(settings, configs, evaluator, folder, bar, args.quiet, start.population, start.rows,
                             start.sides, bool(args.resume), lambda: _final_round_robin(evaluator, args.quiet))
    else:
        course = OnePopulation(start, evaluator, folder, bar, config, settings, args)
    previous = signal.signal(signal.SIGTERM, _on_sigterm)
    completed_before, kept = course.completed, False
    try:
        if not args.quiet:
            print(f"neatpar evolve: {args.config} -> {folder.path} (generations {start.done}.."
                  f"{settings.generations - 1}); watch it: tensorboard --logdir {_logdir(folder.path)}", flush=True)
        try:
            with _warnings_above(bar):
                course.run(settings.generations)
        except neat.CompleteExtinctionException:
            kept = True
            course.finish()
            path = course.save_interrupted()
            print(f"neatpar: error: every species went extinct in generation {course.generation} (neat-python's "
                  f"complete extinction): set reset_on_extinction = True in [NEAT], or keep species with "
                  f"species_elitism in [DefaultStagnation]; the best genome so far is in {folder.path}, the last "
                  f"generation in {path}", file=sys.stderr)
            return 1
        kept = True
        course.finish()
        return 0
    except (KeyboardInterrupt, Terminated) as stop:
        second = SecondSignal(evaluator)
        bar.close()
        if course.snapshot:
            path = course.save_interrupted()
            kept = True
            print(f"\ninterrupted: checkpoint {path}; resume with --resume {path}", file=sys.stderr, flush=True)
        else:
            print("\ninterrupted before the first generation started", file=sys.stderr, flush=True)
        second.release()
        return 143 if isinstance(stop, Terminated) else 130
    finally:
        bar.close()
        evaluator.close()
        course.close()  # before a discard: no writer thread is left with a file in the folder
        signal.signal(signal.SIGTERM, previous)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        if not kept and course.completed == completed_before:  # nothing of this run was completed
            folder.discard()


class SecondSignal:
    """After the first Ctrl+C or SIGTERM, a second one kills what the run started and ends the
    process at once, quietly (exit 130 or 143); while the first one's checkpoint is being written
    it waits for the write to end (`release`)."""

    def __init__(self, evaluator: UnityEvaluator):
        self.evaluator, self.held, self.pending = evaluator, True, None
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, self._on_signal)

    def _on_signal(self, signum, frame) -> None:
        if self.held:
            self.pending = signum
        else:
            self._quit(signum)

    def release(self) -> None:
        self.held = False
        if self.pending is not None:
            self._quit(self.pending)

    def _quit(self, signum: int) -> None:
        self.evaluator.kill()
        os._exit(128 + signum)


def _finish(folder: RunFolder, evaluator: UnityEvaluator, config, settings: Settings, rows: list, args) -> None:
    """The winner files, its models for Unity and the plot of a run that ended (the simulator is
    no longer needed)."""
    evaluator.close()
    # The best genome found, as it was when it scored best (neat-python's best_genome is the
    # live object, whose fitness a later generation may have overwritten); in self-play the
    # league's best-rated member.
    best = evaluator.winner
    files = folder.save_winner(best, config)
    if evaluator.selfplay is not None:
        files.append(folder.save_league(evaluator.selfplay.describe()))
    try:
        files += write_winner_models(best, config, settings, load_behaviors(folder.path) or {}, folder.path)
    except ExportError as error:  # e.g. a function registered on the config: the run itself is fine
        print(f"neatpar: warning: no winner.onnx: {error}", file=sys.stderr)
    plots = folder.plot(rows)
    if not args.quiet:
        print(f"\nwinner: genome {best.key}, fitness {best.fitness:.3f}{_league_note(evaluator)}")
        for path in files + plots:
            print(f"  {path}")
        winner = _shown_path(os.path.join(folder.path, "winner.json"))
        print(f"\nplay it: {_program()} play --config {_shown_path(args.config)} --genome {winner}")
        print(f"watch it: tensorboard --logdir {_shown_path(_logdir(folder.path))}")


def _final_round_robin(evaluator: UnityEvaluator, quiet: bool) -> None:
    """A self-play run's final round-robin, announced (it plays games after the last generation)."""
    selfplay = evaluator.selfplay
    if selfplay is not None and evaluator.settings.league_final_games:
        if not quiet:
            sizes = " and ".join(str(len(league.members)) for league in selfplay.leagues.values())
            print(f"final round-robin of the league's {sizes} members ({evaluator.settings.league_final_games} games a "
                  f"pair) ...", flush=True)
        evaluator.final_round_robin()


def _league_note(evaluator: UnityEvaluator) -> str:
    """How a self-play winner was chosen."""
    if evaluator.selfplay is None:
        return ""
    side = evaluator.selfplay.sides[0]
    member, scores = evaluator.selfplay.winner(side), evaluator.selfplay.scores.get(side)
    how = f"the final round-robin's best (mean result {scores[member.number]:.3f})" if scores else \
        "the league's best-rated member"
    return f" in its generation; {how}, ELO {member.rating:.1f}"


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


def play(args) -> int:
    config, settings = load(args.config)
    configs = population_configs(settings, config) if settings.asymmetric else {}
    behavior, opponents = _asymmetric_match(args.genome, settings, configs) if configs else (None, None)
    config = configs.get(behavior, config)
    genome = load_genome(args.genome, config)
    with UnityEvaluator.from_settings(settings) as evaluator:
        evaluator.configs = configs
        returns = evaluator.play(genome, config, episodes=args.episodes, opponents=opponents)
    print(f"genome {genome.key}: {len(returns)} episodes, mean return {statistics.fmean(returns):.3f}")
    print("returns: " + " ".join(f"{r:.3f}" for r in returns))
    return 0


def _asymmetric_match(genome_path: str, settings: Settings, configs: dict) -> tuple[str, dict]:
    """An asymmetric game's genome plays the behavior whose population folder holds it
    (RUN/behavior-NAME/), against the other population's winner (selfplay.py)."""
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
    layouts = layouts_for(settings, args.genome)
    behavior = choose_behavior(settings, layouts, args.behavior)
    if settings.asymmetric:   # each league behavior's genomes have its population's config
        config = population_configs(settings, config).get(behavior, config)
    genome = load_genome(args.genome, config)
    path = write_model(genome, config, settings, layouts[behavior], args.out)
    print(f"{path}: genome {genome.key} for behavior {behavior!r} ({layouts[behavior].describe_actions()}, "
          f"sensor sizes {list(layouts[behavior].observation_sizes)})")
    return 0


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} must be at least 1")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="neatpar", description="Parallel NEAT neuroevolution for Unity ML-Agents "
                                     "and Gymnasium environments.", epilog=SECURITY_NOTE)
    parser.add_argument("--version", action="version", version=f"neatpar {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    e = sub.add_parser("evolve", help="evolve a population on the environment of a config", epilog=SECURITY_NOTE)
    e.add_argument("--config", required=True, help="neat-python config file with a [neatpar] section")
    e.add_argument("--out", help="run folder (default: runs/CONFIG-TIMESTAMP; with --resume, the checkpoint's run)")
    e.add_argument("--resume", metavar="CHECKPOINT", help="continue from a checkpoint of a previous run")
    e.add_argument("--quiet", action="store_true", help="no progress lines")
    for f in flags():
        e.add_argument("--" + f.name.replace("_", "-"), dest=f.name, metavar=f.name.upper(),
                       help=f"{f.metadata['help']} (default: [neatpar] {f.name}"
                            f"{'' if f.default is None else f', else {f.default}'})")
    p = sub.add_parser("play", help="run a saved genome on the environment of a config", epilog=SECURITY_NOTE)
    p.add_argument("--config", required=True, help="neat-python config file with a [neatpar] section")
    p.add_argument("--genome", required=True, help="winner.json (recommended) or winner.pickle")
    p.add_argument("--episodes", type=_positive, default=5, help="episodes to play (default: 5)")
    x = sub.add_parser("export", help="write a saved genome as an ONNX model for a Unity ML-Agents Agent",
                       epilog=SECURITY_NOTE)
    x.add_argument("--config", required=True, help="neat-python config file with a [neatpar] section")
    x.add_argument("--genome", required=True, help="winner.json (recommended) or winner.pickle; the layouts come "
                   "from behaviors.json beside it, else from launching the environment once")
    x.add_argument("--out", required=True, help="the .onnx file to write")
    x.add_argument("--behavior", help="the behavior to export for (default: the config's only population behavior)")
    return parser


def _show_warnings() -> None:
    """neatpar's warnings (a relaunched simulator, unlisted behaviors, ...) as one line each on stderr."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("neatpar: warning: %(message)s"))
    logger = logging.getLogger("neatpar")
    logger.addHandler(handler)
    logger.setLevel(logging.WARNING)
    logger.propagate = False


def main(argv: list[str] | None = None) -> int:
    _show_warnings()
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 0
    try:
        return {"evolve": evolve, "play": play, "export": export}[args.command](args)
    except ConfigError as error:
        print(f"neatpar: error: {error}", file=sys.stderr)
        return 2
    except NeatparError as error:
        print(f"neatpar: error: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
