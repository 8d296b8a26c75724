"""How a generation is scored and selected: fitness (neat-python as it is), novelty search,
novelty blended with fitness, and MAP-Elites over NEAT genomes, behind one strategy protocol
(strategy.py), with the behaviour descriptors they compare (descriptors.py)."""
from .search_evaluator import SearchEvaluator
from .descriptors import (DescriptorAccumulator, DescriptorSpec, GenomeDescriptors, descriptor_matrix,
                          outcome_of, parse_descriptor)
from .map_elites import EliteArchive, Grid, MapElitesReproduction, MapElitesSearch, parse_bins, parse_bounds
from .novelty import NoveltyArchive, NoveltySearch
from .results import Best, Outcome, SearchStats
from .strategy import SEARCHES, FitnessSearch, Search, make_search, reproduction_type, restore

__all__ = ["Best", "DescriptorAccumulator", "DescriptorSpec", "EliteArchive", "FitnessSearch", "GenomeDescriptors",
           "Grid", "MapElitesReproduction", "MapElitesSearch", "NoveltyArchive", "NoveltySearch", "Outcome", "SEARCHES",
           "Search", "SearchEvaluator", "SearchStats", "descriptor_matrix", "make_search", "outcome_of", "parse_bins",
           "parse_bounds", "parse_descriptor", "reproduction_type", "restore"]
