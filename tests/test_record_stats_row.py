"""The typed stats row (neatpar/record/stats_row.py): one generation's values as fields, made into
stats.csv's cells in the documented column order, and kept in checkpoints as a record that reads
back as the same row."""
import csv
import io

from hypothesis import given, settings, strategies as st

from neatpar.record.stats_file import StatsFile
from neatpar.record.stats_row import STATS_FIELDS, BehaviorValues, StatsRow, stats_columns
from neatpar.generation_stats import GenerationStats, LeagueValues, ScoredEpisodes

BEHAVIOR = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=12)
MEAN = st.one_of(st.none(), st.floats(allow_nan=False, allow_infinity=False))


def row(generation=0, league=None, behaviors=None, game=None, species_sizes=None, mean_return=1.5) -> StatsRow:
    return StatsRow(generation, 3.0, 1.5, 0.5, 2, 8, 80, 100.0, 90, 0.8, mean_return, 5.0, 3.0, 2.5,
                    league, behaviors or {}, game or {}, species_sizes or {})


class Genome:
    def __init__(self, fitness, size):
        self.fitness, self._size = fitness, size

    def size(self):
        return self._size


class Species:
    def __init__(self, members):
        self.members = members


class SpeciesSet:
    def __init__(self, sizes):
        self.species = {sid: Species(dict.fromkeys(range(n))) for sid, n in sizes.items()}


def test_the_fields_are_stats_csv_s_columns_in_order():
    assert list(row().columns()) == list(STATS_FIELDS)
    full = row(league=LeagueValues(1200.0, 1), behaviors={"B?team=0": BehaviorValues(1.0, None)},
               game={"Game/Goals": 2.0})
    assert list(full.columns()) == [*STATS_FIELDS, "elo", "league_size", "mean_return:B?team=0",
                                    "mean_episode_length:B?team=0", "game:Game/Goals"]
    assert full.columns()["mean_episode_length:B?team=0"] == "" and row(mean_return=None).columns()["mean_return"] == ""


def test_a_generation_s_row_is_made_from_its_genomes_species_and_episodes():
    population = {1: Genome(1.0, (3, 2)), 2: Genome(3.0, (5, 4))}
    stats = GenerationStats(scored_steps=30, agent_steps=40, seconds=2.0, episodes=3,
                            scored={"A": ScoredEpisodes([1.0, 2.0], [10, 20]), "B": ScoredEpisodes([0.1], [30])})
    made = StatsRow.of_generation(4, population, SpeciesSet({7: 2}), stats, 1.23456, ["A", "B", "C"],
                                  LeagueValues(1190.0, 2))
    assert (made.generation, made.best_fitness, made.mean_fitness, made.stdev_fitness) == (4, 3.0, 2.0, 1.0)
    assert (made.species, made.episodes, made.scored_steps) == (1, 3, 30)
    assert (made.scored_steps_per_s, made.seconds) == (15.0, 1.235)
    assert made.mean_return == (1.0 + 2.0 + 0.1) / 3 and made.mean_episode_length == 20.0
    assert (made.mean_nodes, made.mean_connections) == (4.0, 3.0)
    assert made.behaviors == {"A": BehaviorValues(1.5, 15.0), "B": BehaviorValues(0.1, 30.0)}   # C played none
    assert made.species_sizes == {7: 2} and made.league == LeagueValues(1190.0, 2)
    alone = StatsRow.of_generation(0, population, SpeciesSet({7: 2}), GenerationStats(), 1.0, ["A"])
    assert alone.behaviors == {} and alone.mean_return is None   # one behavior: no columns of its own


@settings(max_examples=200, deadline=None)
@given(behaviors=st.dictionaries(BEHAVIOR, st.builds(BehaviorValues, MEAN, MEAN), max_size=3),
       game=st.dictionaries(st.text(min_size=1, max_size=12), st.floats(allow_nan=False), max_size=3),
       league=st.one_of(st.none(), st.builds(LeagueValues, st.floats(allow_nan=False), st.integers(0, 50))),
       mean_return=MEAN, sizes=st.dictionaries(st.integers(1, 99), st.integers(1, 99), max_size=4))
def test_a_row_kept_in_a_checkpoint_reads_back_as_the_same_row(behaviors, game, league, mean_return, sizes):
    original = row(3, league, behaviors, game, sizes, mean_return)
    assert StatsRow.from_record(original.to_record()) == original


def test_a_column_that_first_appears_later_is_empty_before_it(tmp_path):
    rows = [row(0, game={"b": 1.0}), row(1, game={"a": 2.0, "b": 3.0}), row(2)]
    assert stats_columns(rows) == [*STATS_FIELDS, "game:b", "game:a"]
    stats = StatsFile(str(tmp_path))
    for each in rows:
        stats.append(each)
    with open(tmp_path / "stats.csv") as f:
        table = list(csv.reader(io.StringIO(f.read())))
    assert table[0] == [*STATS_FIELDS, "game:b", "game:a"]
    assert [line[-2:] for line in table[1:]] == [["1.0", ""], ["3.0", "2.0"], ["", ""]]


def test_a_search_s_columns_follow_the_fixed_ones_and_its_true_fitness_replaces_the_selection_value():
    from neatpar.record.tensorboard import generation_values
    from neatpar.search import SearchStats
    population = {1: Genome(0.9, (2, 3)), 2: Genome(0.1, (2, 3))}   # genome.fitness: their novelty
    stats = SearchStats(4, "novelty", 2.0, 1.5, 2.0, archive_size=7, archive_added=2, mean_novelty=0.5,
                        max_novelty=0.9, threshold=0.12)
    made = StatsRow.of_generation(4, population, SpeciesSet({1: 2}), GenerationStats(), 1.0, ["B"], search=stats,
                                  fitness={1: 1.0, 2: 2.0})
    assert (made.best_fitness, made.mean_fitness) == (2.0, 1.5)
    assert list(made.columns())[len(STATS_FIELDS):] == ["archive_size", "archive_added", "coverage", "qd_score",
                                                        "mean_novelty", "max_novelty", "novelty_threshold"]
    assert made.columns()["coverage"] == "" and StatsRow.from_record(made.to_record()) == made
    tags = generation_values(made)[""]
    assert tags["Search/Mean Novelty"] == 0.5 and "Search/QD-Score" not in tags
    fitness_run = StatsRow.of_generation(4, population, SpeciesSet({1: 2}), GenerationStats(), 1.0, ["B"],
                                         search=SearchStats(4, "fitness", 0.9, 0.5, 0.9), fitness={1: 1.0, 2: 2.0})
    assert fitness_run.search is None and fitness_run.best_fitness == 0.9   # a fitness run's columns as they were


def test_a_curriculum_s_lesson_is_a_lesson_column_read_back_and_a_tensorboard_tag():
    """lesson/PARAMETER per curriculum (the lesson's index), before the game's columns; read back from
    a checkpoint's record or stats.csv; ML-Agents' `Environment/Lesson Number/PARAMETER` tag."""
    from neatpar.record.tensorboard import generation_values
    population = {1: Genome(1.0, (3, 2))}
    made = StatsRow.of_generation(2, population, SpeciesSet({1: 1}), GenerationStats(), 1.0, ["A"],
                                  lessons={"wall": 2, "goal": 0})
    made.game = {"Game/Goals": 1.0}
    assert list(made.columns())[-3:] == ["lesson/wall", "lesson/goal", "game:Game/Goals"]
    assert made.columns()["lesson/wall"] == 2
    assert StatsRow.from_record(made.to_record()) == made
    from_csv = {k: ("" if v == "" else str(v)) for k, v in made.columns().items()}   # stats.csv cells
    assert StatsRow.from_record(from_csv).lessons == {"wall": 2, "goal": 0}
    tags = generation_values(made)[""]
    assert tags["Environment/Lesson Number/wall"] == 2.0 and tags["Environment/Lesson Number/goal"] == 0.0
