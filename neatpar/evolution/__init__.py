"""The NEAT step at C speed: drop-in classes for neat-python's DefaultGenome, DefaultReproduction
and DefaultSpeciesSet that produce, draw for draw, the populations neat-python's own classes
produce.

    config = neat.Config(neatpar.Genome, neatpar.Reproduction, neatpar.SpeciesSet,
                         neat.DefaultStagnation, "neat.cfg")

The classes keep neat-python's names (`__name__`), so an unchanged config file's
[DefaultGenome], [DefaultReproduction] and [DefaultSpeciesSet] sections are read as before.
"""
from ..processes import cpu_count
from . import _core
from .genome import DefaultGenome
from .reproduction import DefaultReproduction
from .species import DefaultSpeciesSet

# A speciation's distances are computed by up to this many threads (the result does not depend on it):
# the cores this process may run on.
_core.set_threads(min(4, cpu_count()))

Genome = DefaultGenome
Reproduction = DefaultReproduction
SpeciesSet = DefaultSpeciesSet

__all__ = ["Genome", "Reproduction", "SpeciesSet"]
