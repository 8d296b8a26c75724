"""A search for neat-python scripts: `population.run(SearchEvaluator(...).evaluate, n)` scores each
generation through a search strategy (strategy.py), from a fitness function that returns
`(fitness, descriptor)` (or a number, for search = fitness), evaluated in this process or by a
population-level evaluator that hands the descriptors back (neatpar.ParallelEvaluator's
`last_descriptors`).

    search = SearchEvaluator("novelty", eval_genome, novelty_k=15)
    with neatpar.ParallelEvaluator(2, eval_genome, seed=1) as pool:
        search = SearchEvaluator("map-elites", evaluator=pool, descriptor_bounds="0 1, 0 1", descriptor_bins="8 8")
        search.attach(population)       # MAP-Elites breeds from the archive (its reproduction class)
        population.run(search.evaluate, 50)
    search.best.genome                  # the genome of the best true fitness seen
"""
from __future__ import annotations

from typing import Any, Callable

from ..config.searches import check_fitness_termination
from ..errors import ConfigError
from .descriptors import descriptor_of, outcome_of
from .results import Best, Outcome, SearchStats
from .strategy import Search, make_search, restore


class SearchEvaluator:
    """neat-python's fitness callback through a search: each genome's outcome (true fitness,
    descriptor) from `function(genome, config)` in this process, or from `evaluator` (an object
    with `evaluate(genomes, config)` that sets genome.fitness and leaves `last_descriptors`,
    key -> descriptor, as neatpar.ParallelEvaluator does); then `genome.fitness` becomes what the
    search selects on. `search` is a strategy or its name with make_search's keyword arguments
    (`seed`, `novelty_k`, ...). `history` keeps each generation's SearchStats, `fitness` the last
    generation's true fitness by genome key."""

    def __init__(self, search: Search | str = "fitness", function: Callable | None = None, *, evaluator: Any = None,
                 **keys: Any):
        if (function is None) == (evaluator is None):
            raise ConfigError("SearchEvaluator needs a fitness function f(genome, config) or an evaluator (e.g. a "
                              "neatpar.ParallelEvaluator), not both or neither")
        if evaluator is not None and not hasattr(evaluator, "last_descriptors"):
            raise ConfigError(f"SearchEvaluator(evaluator={type(evaluator).__name__}): the evaluator must hand back "
                              f"the descriptors as last_descriptors (neatpar.ParallelEvaluator does)")
        self.search: Search = make_search(search, **keys) if isinstance(search, str) else search
        self.function, self.evaluator = function, evaluator
        self.generation = 0
        self.history: list[SearchStats] = []
        self.fitness: dict[int, float] = {}

    @property
    def best(self) -> Best | None:
        """The genome of the best true fitness seen so far (with its descriptor and generation)."""
        return self.search.best

    def attach(self, population) -> None:
        """Bind the search to a neat.Population just made or restored (MAP-Elites' reproduction)."""
        self.check(population.config)
        self.search.attach(population)

    def check(self, config) -> None:
        """Refuse a neat config whose fitness_threshold would compare what a novelty search writes
        into genome.fitness (the command line's rule), before any generation is scored."""
        check_fitness_termination(self.search.name, config, "SearchEvaluator's neat config")

    def evaluate(self, genomes, config) -> None:
        """neat-python's fitness callback: every genome's outcome, scored through the search."""
        self.check(config)
        pairs = list(genomes)
        needs = self.search.needs_descriptor
        if self.function is not None:
            outcomes = {key: outcome_of(key, self.function(genome, config), needs) for key, genome in pairs}
        else:
            self.evaluator.evaluate(pairs, config)
            described = self.evaluator.last_descriptors
            outcomes = {key: Outcome(float(genome.fitness),
                                     descriptor_of(key, described[key]) if key in described else None)
                        for key, genome in pairs}
        stats = self.search.score(pairs, outcomes, self.generation)
        self.fitness = {key: outcome.fitness for key, outcome in outcomes.items()}
        self.history.append(stats)
        self.generation += 1

    def state(self) -> dict:
        """A plain, picklable dict (the search's state and the generation count) for a checkpoint."""
        return {"generation": self.generation, "search": self.search.state()}

    def restore(self, state: dict) -> None:
        """Continue from `state()` (with the population restored from the same checkpoint)."""
        self.generation, self.search = state["generation"], restore(state["search"])
