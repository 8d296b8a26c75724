"""The population kernel: neat-python networks of a whole population evaluated in one call."""
from .kernel import CTRNNPopulation, FeedForwardPopulation, RecurrentPopulation

__all__ = ["CTRNNPopulation", "FeedForwardPopulation", "RecurrentPopulation"]
