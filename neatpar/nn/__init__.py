"""The population kernel: neat-python networks of a whole population evaluated in one call."""
from .kernel import FeedForwardPopulation, RecurrentPopulation

__all__ = ["FeedForwardPopulation", "RecurrentPopulation"]
