"""`neatpar evolve` and `neatpar play`: a thin layer over UnityEvaluator and the run folder.

Exit status: 0 done, 2 bad input (one line naming the fix), 1 failure during the run,
130 after Ctrl+C and 143 after SIGTERM (a checkpoint of the interrupted generation is saved).
"""
from __future__ import annotations

import argparse
import dataclasses
import os
import random
import signal
import statistics
import sys
import time

import neat

from . import config as run_config
from .errors import ConfigError, NeatparError
from .genome_io import load_genome
from .run_folder import RunFolder, checkpoint_state, load_checkpoint
from .runner import UnityEvaluator

SECURITY_NOTE = (
    "Checkpoints and .pickle genomes are pickles, and loading a pickle runs code: neatpar only loads "
    "the checkpoint you name with --resume and the genome file you name with --genome. Share "
    "winners as winner.json, which loads without pickle.")


class Terminated(BaseException):
    """SIGTERM, turned into an exception so that the interrupted generation is checkpointed."""


def _on_sigterm(signum, frame):
    raise Terminated()


class _Recorder(neat.reporting.BaseReporter):
    """Progress lines, stats rows, periodic checkpoints and the state a Ctrl+C checkpoint needs."""

    def __init__(self, population, evaluator: UnityEvaluator, folder: RunFolder, interval: int,
                 quiet: bool, rows: list):
        self.population, self.evaluator, self.folder = population, evaluator, folder
        self.interval, self.quiet, self.rows = interval, quiet, rows
        self.generation = population.generation
        self.started = time.perf_counter()
        self.snapshot = b""

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
        self.snapshot = checkpoint_state(generation, self.population.config, self.population.population,
                                         self.population.species, random.getstate(), self._extras(generation))

    def post_evaluate(self, config, population, species, best_genome):
        fits = [g.fitness for g in population.values()]
        stats = self.evaluator.last_stats
        row = {"generation": self.generation, "best_fitness": max(fits), "mean_fitness": statistics.fmean(fits),
               "stdev_fitness": statistics.pstdev(fits), "species": len(species.species), "episodes": stats.episodes,
               "agent_steps": stats.agent_steps, "agent_steps_per_s": round(stats.agent_steps_per_second, 1),
               "seconds": round(time.perf_counter() - self.started, 3)}
        self.rows.append(row)
        self.folder.write_stats(self.rows)
        if not self.quiet and len(self.rows) == 1:
            if self.evaluator.run.inference != "inprocess":
                print(self.evaluator.inference_note, flush=True)
            if self.evaluator.hosted:
                print(self.evaluator.hosts_note, flush=True)
        if not self.quiet:
            print(f"gen {row['generation']:4d} | best {row['best_fitness']:9.3f} | mean {row['mean_fitness']:9.3f} | "
                  f"species {row['species']:3d} | {row['agent_steps_per_s']:8.0f} agent-steps/s | "
                  f"{row['seconds']:6.1f} s", flush=True)

    def end_generation(self, config, population, species_set):
        next_generation = self.generation + 1
        if next_generation % self.interval == 0:
            self.folder.save_checkpoint(next_generation, self.population.config, population, species_set,
                                        random.getstate(), self._extras(next_generation))

    def _extras(self, generation: int) -> dict:
        return {"champion": self.evaluator.champion, "evaluator_generation": self.evaluator.generation,
                "rows": [r for r in self.rows if r["generation"] < generation],
                "best_genome": self.population.best_genome}

    def save_interrupted(self) -> str:
        """Checkpoint of the generation that was running: it will be evaluated again on resume."""
        return self.folder.save_checkpoint_bytes(self.generation, self.snapshot)


def _default_out(config_path: str) -> str:
    stem = os.path.splitext(os.path.basename(config_path))[0]
    return os.path.join("runs", f"{stem}-{time.strftime('%Y%m%d-%H%M%S')}")


def _restore(path: str, config) -> tuple:
    generation, saved_config, population, species_set, rndstate, extras = load_checkpoint(path)
    old, new = saved_config.genome_config, config.genome_config
    if (old.num_inputs, old.num_outputs) != (new.num_inputs, new.num_outputs):
        raise ConfigError(f"checkpoint {path} was made with num_inputs = {old.num_inputs}, num_outputs = "
                          f"{old.num_outputs}; the config has {new.num_inputs} and {new.num_outputs}: resume with "
                          f"the run's own config")
    # Keep the evolving counters of the saved run (node keys, innovation numbers), as
    # neat.Checkpointer.restore_checkpoint does for the innovation tracker.
    if getattr(old, "node_indexer", None) is not None:
        new.node_indexer = old.node_indexer
    restored = neat.Population(config, (population, species_set, generation))
    tracker = getattr(old, "innovation_tracker", None)
    if tracker is not None:
        restored.reproduction.innovation_tracker = tracker
        new.innovation_tracker = tracker
    if extras.get("best_genome") is not None:
        restored.best_genome = extras["best_genome"]
    random.setstate(rndstate)
    return restored, extras


def evolve(args) -> int:
    config, run = run_config.load(args.config)
    seed = args.seed if args.seed is not None else run.seed
    if args.seed is not None:
        run = dataclasses.replace(run, seed=args.seed)
    if args.inference is not None:
        run = dataclasses.replace(run, inference=args.inference)
    for option in ("workers", "envs", "backend", "address"):
        if getattr(args, option) is not None:
            run = dataclasses.replace(run, **{option: getattr(args, option)})
    generations = args.generations or run.generations
    checkpoint = args.resume
    out = args.out or (os.path.dirname(os.path.dirname(os.path.abspath(checkpoint))) if checkpoint
                       else _default_out(args.config))
    # Everything that can be refused is checked before the run folder is made.
    evaluator = UnityEvaluator(run.env, run.behaviors, _run=run, log_folder=None)  # checks the build path
    rows: list = []
    if checkpoint:
        population, extras = _restore(checkpoint, config)
        evaluator.champion = extras.get("champion")
        evaluator.generation = extras.get("evaluator_generation", population.generation)
        rows.extend(extras.get("rows", []))
        done = population.generation
    else:
        population = neat.Population(config, seed=seed)
        done = 0
    folder = RunFolder(out)
    evaluator.bridge.log_folder = folder.logs
    recorder = _Recorder(population, evaluator, folder, run.checkpoint_interval, args.quiet, rows)
    population.add_reporter(recorder)
    previous = signal.signal(signal.SIGTERM, _on_sigterm)
    completed_before = len(rows)
    try:
        if not args.quiet:
            print(f"neatpar evolve: {args.config} -> {folder.path} (generations {done}..{generations - 1})",
                  flush=True)
        if generations > done:
            population.run(evaluator.evaluate, generations - done)
        evaluator.close()
        # The best genome found, as it was when it scored best (neat-python's best_genome is the
        # live object, whose fitness a later generation may have overwritten).
        best = evaluator.champion
        if best is None:
            raise ConfigError(f"nothing to do: the checkpoint is at generation {done} and --generations is "
                              f"{generations}")
        files = folder.save_winner(best, config)
        plot = folder.plot(rows)
        if not args.quiet:
            print(f"\nwinner: genome {best.key}, fitness {best.fitness:.3f}")
            for path in files + ([plot] if plot else []):
                print(f"  {path}")
        return 0
    except (KeyboardInterrupt, Terminated) as stop:
        evaluator.close()
        if recorder.snapshot:
            path = recorder.save_interrupted()
            print(f"\ninterrupted: checkpoint {path}; resume with --resume {path}", file=sys.stderr)
        else:
            folder.discard()
            print("\ninterrupted before the first generation started", file=sys.stderr)
        return 143 if isinstance(stop, Terminated) else 130
    except BaseException:
        evaluator.close()
        if len(rows) == completed_before:  # failed before a generation of this run completed
            folder.discard()
        raise
    finally:
        evaluator.close()
        signal.signal(signal.SIGTERM, previous)


def play(args) -> int:
    config, run = run_config.load(args.config)
    genome = load_genome(args.genome, config)
    with UnityEvaluator(run.env, run.behaviors, _run=run) as evaluator:
        returns = evaluator.play(genome, config, episodes=args.episodes)
    print(f"genome {genome.key}: {len(returns)} episodes, mean return {statistics.fmean(returns):.3f}")
    print("returns: " + " ".join(f"{r:.3f}" for r in returns))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="neatpar", description="Parallel NEAT neuroevolution for Unity ML-Agents "
                                     "environments.", epilog=SECURITY_NOTE)
    sub = parser.add_subparsers(dest="command", required=True)
    e = sub.add_parser("evolve", help="evolve a population on the environment of a config", epilog=SECURITY_NOTE)
    e.add_argument("--config", required=True, help="neat-python config file with a [neatpar] section")
    e.add_argument("--generations", type=int, help="total generations (default: [neatpar] generations)")
    e.add_argument("--out", help="run folder (default: runs/CONFIG-TIMESTAMP; with --resume, the checkpoint's run)")
    e.add_argument("--resume", metavar="CHECKPOINT", help="continue from a checkpoint of a previous run")
    e.add_argument("--seed", type=int, help="override [neatpar] seed")
    e.add_argument("--quiet", action="store_true", help="no progress lines")
    e.add_argument("--inference", choices=run_config.INFERENCE, help="where the networks run (default: [neatpar] "
                   "inference): in this process, on a spawn pool, or whichever measures faster")
    e.add_argument("--workers", type=int, help="pool workers for --inference pool/auto (default: [neatpar] workers)")
    e.add_argument("--envs", type=int, help="simulators, each owned by its own env host process (default: "
                   "[neatpar] envs; 1 = one simulator in this process)")
    e.add_argument("--backend", choices=run_config.BACKENDS, help="where env hosts run: local processes or Ray "
                   "actors (default: [neatpar] backend; ray needs pip install 'neatpar[ray]')")
    e.add_argument("--address", help="Ray cluster address for --backend ray, e.g. HEAD:6379 (default: [neatpar] "
                   "address, else a local Ray instance)")
    p = sub.add_parser("play", help="run a saved genome on the environment of a config", epilog=SECURITY_NOTE)
    p.add_argument("--config", required=True)
    p.add_argument("--genome", required=True, help="winner.json (recommended) or winner.pickle")
    p.add_argument("--episodes", type=int, default=5)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.command == "evolve":
            if args.generations is not None and args.generations < 1:
                raise ConfigError("--generations must be at least 1")
            if args.workers is not None and args.workers < 1:
                raise ConfigError("--workers must be at least 1")
            if args.envs is not None and args.envs < 1:
                raise ConfigError("--envs must be at least 1")
            return evolve(args)
        if args.episodes < 1:
            raise ConfigError("--episodes must be at least 1")
        return play(args)
    except ConfigError as error:
        print(f"neatpar: error: {error}", file=sys.stderr)
        return 2
    except NeatparError as error:
        print(f"neatpar: error: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
