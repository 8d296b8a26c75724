"""neat-python reporters of `neatpar evolve`: one line per generation on the terminal, stats.csv
rows, periodic checkpoints, and the snapshot that lets Ctrl+C or SIGTERM checkpoint the
generation that was running."""
from __future__ import annotations

import random
import statistics
import time

import neat

from .run_folder import RunFolder, checkpoint_state


class RunRecorder(neat.reporting.BaseReporter):
    """Progress lines, stats rows, periodic checkpoints and the state a Ctrl+C checkpoint needs."""

    def __init__(self, population, evaluator, folder: RunFolder, interval: int,
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
               "scored_steps": stats.scored_steps, "scored_steps_per_s": round(stats.scored_steps_per_second, 1),
               "agent_steps": stats.agent_steps, "seconds": round(time.perf_counter() - self.started, 3)}
        self.rows.append(row)
        self.folder.write_stats(self.rows)
        if not self.quiet and len(self.rows) == 1:
            if self.evaluator.settings.inference != "inprocess":
                print(self.evaluator.inference_note, flush=True)
            if self.evaluator.hosted:
                print(self.evaluator.hosts_note, flush=True)
        if not self.quiet:
            print(f"gen {row['generation']:4d} | best {row['best_fitness']:9.3f} | mean {row['mean_fitness']:9.3f} | "
                  f"species {row['species']:3d} | {row['scored_steps_per_s']:8.0f} scored agent-steps/s | "
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
