"""A seeded run gives the same results on every Python (3.10 to 3.13) and numpy (1.23.5, 2.x): the
results of one interpreter (each fixture names its own: Python 3.11 with numpy 1.23.5, the
configuration neatpar was released on, for XOR; Python 3.13 with numpy 2 for the ball run, recorded
again when winners came to be checked on fresh episodes) are kept in tests/fixtures/seeded/ (written by tests/fixtures/record_seeded.py), and each
test runs the same seeded run here and compares exactly. Python's `random` is the same Mersenne
Twister on every version and neatpar's NEAT step draws from it as neat-python does; the simulator
draws from numpy's seeded Generator (PCG64), the same stream in numpy 1.23 and 2.x. What Python
itself changed in float arithmetic is kept out of the results: the XOR fitness values add up
exactly (support/seeded.py, FITNESS_QUANTUM: sum() of floats compensates from Python 3.12), and
stats.csv's standard deviation is correctly rounded on every Python (pstdev: 3.11 changed it)."""
from types import SimpleNamespace

import pytest

from neatpar.record.stats_row import StatsRow
from neatpar.generation_stats import GenerationStats
from support import evolution as es
from support import seeded


@pytest.fixture(scope="module")
def xor_fixture() -> seeded.Fixture:
    return seeded.Fixture.read("xor")


@pytest.mark.parametrize("impl", ["neatpar", "neat-python"])
def test_seeded_xor_run_is_the_recorded_one(xor_fixture, impl):
    """configs/xor.cfg, seed 7, ten generations in process: after every generation the whole state
    (every gene of every genome bit for bit, species, counters, ancestors, random state, reporter
    output) has the recorded digest, each genome the recorded fitness, and the winner every
    recorded gene. neat-python's own classes too: both are version-independent."""
    classes = es.neatpar_classes() if impl == "neatpar" else es.NEAT_PYTHON
    seeded.assert_matches(xor_fixture, f"the seeded XOR run of {impl}'s classes", seeded.XOR,
                          seeded.xor_record(classes))


def test_seeded_ball_evolve_is_the_recorded_one():
    """`neatpar evolve` of the ball build (3 generations of 16 genomes, 8 agents, episodes of up to
    60 decisions, seed 11), its simulator on this interpreter and numpy: stats.csv cell for cell
    (less the wall-clock columns, seeded.STATS_TIMING) and the whole of winner.json."""
    seeded.assert_matches(seeded.Fixture.read("ball"), "the seeded ball run", seeded.BALL, seeded.ball_record(),
                          what="stats.csv less " + ", ".join(seeded.STATS_TIMING) + ", and winner.json")


class Genome(SimpleNamespace):
    """What a stats row reads of a genome: its fitness and size()."""

    def size(self) -> tuple[int, int]:
        return 2, 3


def test_stats_csv_standard_deviation_is_the_same_on_every_python():
    """stdev_fitness is the exact standard deviation correctly rounded, which statistics.pstdev
    gives from Python 3.11 on; 3.10's gives 1.3149405880114886 here, one unit in the last place off."""
    population = {key: Genome(fitness=fitness) for key, fitness in enumerate([0.1, 2.17, 3.76, 1.52])}
    species = SimpleNamespace(species={1: SimpleNamespace(members=population)})
    row = StatsRow.of_generation(0, population, species, GenerationStats(), 1.0, ["Ball3D?team=0"])
    assert row.stdev_fitness == 1.3149405880114888
