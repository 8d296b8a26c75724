"""neat-python reporters of `neatpar evolve`: one line per generation on the terminal (a progress
bar while it runs), stats.csv rows and TensorBoard events, checkpoints (every K generations and
of the run's last generation), and the snapshot that lets Ctrl+C, SIGTERM, extinction or a reached
fitness_threshold checkpoint the generation that was running."""
from __future__ import annotations

import math
import random
import statistics
import time

import neat

from .progress import GenerationBar
from .run.stats import GenerationStats
from .run_folder import BEHAVIOR_SEPARATOR, GAME_PREFIX, SPECIES_SIZES, RunFolder, checkpoint_state
from .run_settings import RunSettings
from .tensorboard import EventLog


class RunRecorder(neat.reporting.BaseReporter):
    """Progress lines, stats rows, TensorBoard events, checkpoints and the state a Ctrl+C
    checkpoint needs. Checkpoints are written every `interval` generations and when the run's
    last generation (`final`) has been made; every checkpoint carries the run's settings (`run`).
    `interval` None writes no checkpoints (a run that writes its own: selfplay.py). `events` and
    `bar` are optional (no TensorBoard files, no progress bar); `label` begins each progress line."""

    def __init__(self, population, evaluator, folder: RunFolder, interval: int | None, final: int,
                 run: RunSettings, quiet: bool, rows: list, events: EventLog | None = None,
                 bar: GenerationBar | None = None, label: str = ""):
        self.population, self.evaluator, self.folder = population, evaluator, folder
        self.interval, self.final, self.run = interval, final, run
        self.quiet, self.rows = quiet, rows
        self.solved: int | None = None  # the generation whose fitness reached fitness_threshold
        self.events, self.bar, self.label = events, bar, label
        self.population_behaviors = [r.behavior for r in evaluator.settings.behaviors if r.role == "population"]
        self.generation = population.generation
        self.started = time.perf_counter()
        self.snapshot = b""
        self.behaviors_recorded = folder.has_behaviors()

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
        if self.bar is not None:
            self.bar.start(generation, len(self.population.population) * self.evaluator.settings.episodes_per_genome)

    def post_evaluate(self, config, population, species, best_genome):
        stats = self.evaluator.last_stats
        selfplay = self.evaluator.selfplay
        row = generation_row(self.generation, population, species, stats, time.perf_counter() - self.started,
                             self.population_behaviors, selfplay.row() if selfplay is not None else None)
        self.rows.append(row)
        self.folder.write_stats(self.rows)
        if self.events is not None:
            self.events.write(self.generation, row, stats.game.histograms())
        if self.bar is not None:
            self.bar.close()
        if stats.layouts and not self.behaviors_recorded:
            roles = {r.behavior: r.role for r in self.evaluator.settings.behaviors}
            self.folder.save_behaviors(stats.layouts, roles)
            self.behaviors_recorded = True
        if not self.quiet and self.evaluator.generation == 1:   # the first generation of a new run
            if self.evaluator.settings.inference != "inprocess":
                print(self.evaluator.inference_note, flush=True)
            if self.evaluator.hosted:
                print(self.evaluator.hosts_note, flush=True)
        if not self.quiet:
            print(f"{self.label}gen {row['generation']:4d} | best {row['best_fitness']:9.3f} | mean {row['mean_fitness']:9.3f} | "
                  f"species {row['species']:3d} | {row['scored_steps_per_s']:8.0f} scored agent-steps/s | "
                  f"{row['seconds']:6.1f} s" + (f" | ELO {row['elo']:7.1f}" if "elo" in row else ""), flush=True)

    def found_solution(self, config, generation, best):
        # neat-python also calls this at the end of a run with no_fitness_termination.
        if not config.no_fitness_termination:
            self.solved = generation

    def end_generation(self, config, population, species_set):
        next_generation = self.generation + 1
        due = self.interval is not None and (next_generation % self.interval == 0 or next_generation == self.final)
        if due:
            self.folder.save_checkpoint(next_generation, self.population.config, population, species_set,
                                        random.getstate(), self._extras(next_generation))

    def _extras(self, generation: int) -> dict:
        selfplay = self.evaluator.selfplay
        return {"champion": self.evaluator.champion, "evaluator_generation": self.evaluator.generation,
                "rows": [r for r in self.rows if r["generation"] < generation],
                "best_genome": self.population.best_genome, "run_settings": self.run.to_dict(),
                "selfplay": selfplay.state() if selfplay is not None else None}

    def save_snapshot(self) -> str:
        """Checkpoint of the generation that was running (interrupted, extinct, or the one that
        reached fitness_threshold): it will be evaluated again on resume."""
        return self.folder.save_checkpoint_bytes(self.generation, self.snapshot)


def generation_row(generation: int, population: dict, species, stats: GenerationStats, seconds: float,
                   population_behaviors: list[str], league: dict | None = None) -> dict:
    """One generation's stats.csv row (run_folder.py names the columns), with its species sizes.
    Means of returns and lengths are over the generation's scored episodes, exactly rounded.
    `league` holds a self-play run's elo and league_size (run/league.py)."""
    fits = [g.fitness for g in population.values()]
    sizes = [g.size() for g in population.values()]  # (nodes, enabled connections), as neat-python counts
    returns = [r for episodes in stats.scored.values() for r in episodes.returns]
    lengths = [n for episodes in stats.scored.values() for n in episodes.lengths]
    row = {"generation": generation, "best_fitness": max(fits), "mean_fitness": statistics.fmean(fits),
           "stdev_fitness": statistics.pstdev(fits), "species": len(species.species), "episodes": stats.episodes,
           "scored_steps": stats.scored_steps, "scored_steps_per_s": round(stats.scored_steps_per_second, 1),
           "agent_steps": stats.agent_steps, "seconds": round(seconds, 3),
           "mean_return": _mean(returns), "mean_episode_length": _mean(lengths),
           "mean_nodes": statistics.fmean(n for n, _ in sizes),
           "mean_connections": statistics.fmean(c for _, c in sizes), **(league or {})}
    if len(population_behaviors) > 1:
        for behavior in population_behaviors:
            episodes = stats.scored.get(behavior)
            if episodes is not None:
                row[f"mean_return{BEHAVIOR_SEPARATOR}{behavior}"] = _mean(episodes.returns)
                row[f"mean_episode_length{BEHAVIOR_SEPARATOR}{behavior}"] = _mean(episodes.lengths)
    for key, value in stats.game.summary().items():
        row[GAME_PREFIX + key] = value
    row[SPECIES_SIZES] = {sid: len(s.members) for sid, s in species.species.items()}
    return row


def _mean(values: list) -> float | str:
    """The exactly rounded mean; an empty cell for no values."""
    return math.fsum(values) / len(values) if values else ""
