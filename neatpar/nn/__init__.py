"""The population kernel: neat-python networks of a whole population evaluated in one call; and
HyperNEAT's substrate networks behind the same interface."""
from .kernel import CTRNNPopulation, FeedForwardPopulation, RecurrentPopulation
from .substrate import IOShapes, Query, Substrate, make_substrate
from .substrate_population import SubstratePopulation

__all__ = ["CTRNNPopulation", "FeedForwardPopulation", "RecurrentPopulation", "IOShapes", "Query", "Substrate",
           "SubstratePopulation", "make_substrate"]
