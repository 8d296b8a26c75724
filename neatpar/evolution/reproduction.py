"""neatpar's drop-in for neat.DefaultReproduction: neat-python 2.0's reproduction step by step,
with the children of a generation made in one C call.

The steps and their order are neat-python's (neat/reproduction.py): stagnation, adjusted
fitness, spawn amounts (compute_spawn, _adjust_spawn_exact), elites, the survival cut, then per
child two parent draws, a genome key, crossover and mutation. The genome config is read once per
generation (a ConfigView), and parents whose genes are objects are read once, not per child. The
class keeps neat-python's name so the config file's [DefaultReproduction] section is read
unchanged.
"""
from __future__ import annotations

import math

import neat
from neat.math_util import mean

from . import _core
from .genome import warn_initial_connection


class DefaultReproduction(neat.DefaultReproduction):
    """neat.DefaultReproduction whose children are made at C speed."""

    def create_new(self, genome_type, genome_config, num_genomes):
        genome_config.innovation_tracker = self.innovation_tracker
        view = _core.ConfigView(genome_config)
        new_genomes = {}
        for _ in range(num_genomes):
            key = next(self.genome_indexer)
            g = genome_type(key)
            if _core.configure_new(g, view) is NotImplemented:
                g.configure_new(genome_config)
            else:
                warn_initial_connection(genome_config)
            new_genomes[key] = g
            self.ancestors[key] = tuple()
        return new_genomes

    def reproduce(self, config, species, pop_size, generation):
        # A generation's structural mutations share innovation numbers; the counter runs on.
        config.genome_config.innovation_tracker = self.innovation_tracker
        self.innovation_tracker.reset_generation()
        remaining, all_fitnesses = self._not_stagnant(species, generation)
        if not remaining:
            species.species = {}
            return {}
        spawn_amounts = self._spawn_amounts(remaining, all_fitnesses, pop_size)
        species.species = {}
        jobs = [self._plan(s, spawn, species) for spawn, s in zip(spawn_amounts, remaining)]
        snapshots = _records_of_object_form(jobs)
        new_population: dict = {}
        _core.breed(_core.ConfigView(config.genome_config), jobs, self.genome_indexer, config.genome_type,
                    new_population, self.ancestors, snapshots)
        return new_population

    def _not_stagnant(self, species, generation) -> tuple[list, list]:
        """The species that go on, and their members' fitnesses; stagnant ones are reported."""
        all_fitnesses, remaining = [], []
        for sid, s, stagnant in self.stagnation.update(species, generation):
            if stagnant:
                self.reporters.species_stagnant(sid, s)
            else:
                all_fitnesses.extend(m.fitness for m in s.members.values())
                remaining.append(s)
        return remaining, all_fitnesses

    def _spawn_amounts(self, remaining, all_fitnesses, pop_size) -> list:
        """Adjusted fitness per species (mean member fitness, normalised over the whole
        population's range, at least 1.0), and the offspring each species gets."""
        min_fitness, max_fitness = min(all_fitnesses), max(all_fitnesses)
        fitness_range = max(1.0, max_fitness - min_fitness)
        for s in remaining:
            s.adjusted_fitness = (mean([m.fitness for m in s.members.values()]) - min_fitness) / fitness_range
        adjusted = [s.adjusted_fitness for s in remaining]
        self.reporters.info(f"Average adjusted fitness: {mean(adjusted):.3f}")
        previous_sizes = [len(s.members) for s in remaining]
        rc = self.reproduction_config
        min_species_size = max(rc.min_species_size, rc.elitism)
        spawn_amounts = self.compute_spawn(adjusted, previous_sizes, pop_size, min_species_size)
        return self._adjust_spawn_exact(spawn_amounts, pop_size, min_species_size)

    def _plan(self, s, spawn, species) -> tuple[list, list, int]:
        """(elites, parents, children to make) of a species, which keeps its record (emptied)."""
        rc = self.reproduction_config
        spawn = max(spawn, rc.elitism)
        assert spawn > 0
        # Descending fitness, genome id breaking ties (neat-python's deterministic order; in C
        # for float fitnesses and int ids, which no two members share).
        old_members = _core.ranked(s.members)
        if old_members is None:
            old_members = list(s.members.items())
            old_members.sort(reverse=True, key=lambda x: (x[1].fitness, x[0]))
        s.members = {}
        species.species[s.key] = s
        elites = old_members[:rc.elitism] if rc.elitism > 0 else []
        spawn -= len(elites)
        cutoff = max(int(math.ceil(rc.survival_threshold * len(old_members))), 2)
        return elites, old_members[:cutoff], max(spawn, 0)


def _records_of_object_form(jobs) -> dict:
    """id(genome) -> its genes as records, for the parents that keep gene objects (neat-python's
    genomes, or neatpar's after code asked for the dicts): read once, used by every child. Only
    parents are read (a species' survivors, not all its members); nothing changes a parent during
    a reproduction."""
    return {id(g): _core.genes_of(g) for _, parents, _ in jobs for _, g in parents
            if getattr(g, "_genes", None) is None}
