"""neatpar's drop-in for neat.DefaultSpeciesSet: neat-python's speciation with the distances
computed in C, in neat-python's order and with its cache (the reported mean and deviation of the
distances included).

The class keeps neat-python's name so the config file's [DefaultSpeciesSet] section is read
unchanged. Genomes whose class changes `distance`, and populations with repeated genome keys (which
neat-python's code tolerates), are speciated by neat-python's own code.
"""
from __future__ import annotations

import neat
from neat.species import Species

from . import _core
from .genome import DefaultGenome

_DISTANCES = (DefaultGenome.distance, neat.DefaultGenome.distance)


class DefaultSpeciesSet(neat.DefaultSpeciesSet):
    """neat.DefaultSpeciesSet with the genome distances in C."""

    def speciate(self, config, population, generation):
        assert isinstance(population, dict)
        old = [(sid, self.species[sid].representative) for sid in sorted(self.species)]
        threshold = self.species_set_config.compatibility_threshold
        found = _core.speciate(config.genome_config, population, sorted(population), old, threshold,
                               self.indexer, _DISTANCES)
        if found is NotImplemented:
            return super().speciate(config, population, generation)
        representatives, members, spread = found
        new_members = {sid: group for (sid, _), group in zip(representatives, members)}
        new_representatives = dict(representatives)
        self.genome_to_species = {}
        for sid in sorted(new_representatives):
            s = self.species.get(sid)
            if s is None:
                s = Species(sid, generation)
                self.species[sid] = s
            s.update(population[new_representatives[sid]],
                     _core.members_of(population, new_members[sid], sid, self.genome_to_species))
        if len(population) > 1:
            if isinstance(spread, OverflowError):  # neat-python's stdev of distances out of range
                raise spread
            mean, stdev = spread
            self.reporters.info(f"Mean genetic distance {mean:.3f}, standard deviation {stdev:.3f}")
