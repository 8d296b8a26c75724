"""Tests of config/searches.py: the search keys of [neatpar] (their readers, the names they share
with neatpar/search/), the rules between them and the other keys, and between the search and the
neat config, each a one-line ConfigError naming the key."""
import neat
import pytest

from neatpar import ConfigError, Settings
from neatpar.config import searches
from neatpar.config.files import load
from neatpar.config.readers import Source
from neatpar.config.settings_model import flags
from neatpar.search import SEARCHES
from neatpar.search.novelty import ARCHIVES
from support.paths import BUILDS
from support.searches import maze_cfg

MAZE = {"env": f"{BUILDS}/maze", "behaviors": "Maze?team=0: population"}


def settings(**keys):
    return Settings.create({**MAZE, **keys}, Source.FILE)


def test_the_keys_name_the_searches_and_archives_the_search_package_has():
    assert searches.SEARCHES == SEARCHES and searches.NOVELTY_ARCHIVES == ARCHIVES
    assert "search" in {f.name for f in flags()}   # --search on neatpar evolve
    default = settings()
    assert (default.search, default.descriptor, default.novelty_k, default.novelty_archive) == \
        ("fitness", None, 15, "threshold")


def test_the_grid_and_descriptor_keys_read_text_and_python_values_alike():
    read = settings(search="map-elites", descriptor=" final_observation[ 10 : 12 ] ",
                    descriptor_bounds="-1 1, 0 2.5", descriptor_bins="8 4")
    assert read.descriptor == "final_observation[10:12]"
    assert read.descriptor_bounds == ((-1.0, 1.0), (0.0, 2.5)) and read.descriptor_bins == (8, 4)
    again = Settings(**{**MAZE, "behaviors": read.behaviors, "search": "map-elites",
                        "descriptor": "mean_observation[:2]",
                        "descriptor_bounds": [(-1, 1), (0, 2.5)], "descriptor_bins": [8, 4]})
    assert again.descriptor_bounds == read.descriptor_bounds and again.descriptor_bins == (8, 4)
    assert searches.descriptor_width("final_observation[10:12]") == 2
    assert searches.descriptor_width("final_observation[-2:]") is None


@pytest.mark.parametrize("keys, message", [
    ({"descriptor": "final_obs[0:2]"}, "[neatpar] descriptor = final_obs[0:2] is not final_observation[i:j]"),
    ({"descriptor_bounds": "1 -1"}, "[neatpar] descriptor_bounds = 1 -1 is not a low and a high"),
    ({"descriptor_bins": "8 x"}, "[neatpar] descriptor_bins = 8 x is not whole numbers"),
    ({"search": "novelty"}, "search = novelty compares behaviours: set descriptor"),
    ({"search": "map-elites", "descriptor": "final_observation[10:12]"}, "search = map-elites needs descriptor_bounds"),
    ({"search": "map-elites", "descriptor": "final_observation[10:12]", "descriptor_bounds": "-1 1, -1 1"},
     "search = map-elites needs descriptor_bins"),
    ({"descriptor_bounds": "-1 1, -1 1", "descriptor_bins": "8"},
     "descriptor_bounds has 2 dimensions but descriptor_bins has 1"),
    ({"search": "map-elites", "descriptor": "final_observation[9:12]", "descriptor_bounds": "-1 1, -1 1",
      "descriptor_bins": "8 8"}, "descriptor = final_observation[9:12] has 3 values but descriptor_bins has 2"),
    ({"search": "rank"}, "[neatpar] search = rank is not one of fitness, novelty, novelty+fitness, map-elites"),
    ({"novelty_k": "0"}, "[neatpar] novelty_k = 0 is out of range"),
    ({"novelty_archive": "all"}, "[neatpar] novelty_archive = all is not one of threshold, random"),
    ({"novelty_weight": "1.5"}, "[neatpar] novelty_weight = 1.5 is out of range"),
])
def test_bad_search_keys_are_one_line_errors_naming_the_key(keys, message):
    with pytest.raises(ConfigError) as error:
        settings(**keys)
    assert message in str(error.value) and "\n" not in str(error.value)


def test_a_search_other_than_fitness_refuses_league_behaviors():
    duel = {"env": f"{BUILDS}/duel", "behaviors": "Duel?team=0: population, Duel?team=1: league",
            "descriptor": "final_observation[0:2]"}
    assert Settings.create({**duel, "search": "fitness"}, Source.FILE).search == "fitness"
    with pytest.raises(ConfigError, match=r"search = novelty with a league behavior: self-play .* use search = "
                                          r"fitness"):
        Settings.create({**duel, "search": "novelty"}, Source.FILE)


def test_novelty_searches_refuse_neat_python_s_fitness_threshold_which_would_compare_novelty(tmp_path):
    path = maze_cfg(tmp_path, "maze-novelty.cfg")
    config, read = load(path)
    assert read.search == "novelty" and config.no_fitness_termination
    config.no_fitness_termination = False
    with pytest.raises(ConfigError, match=r"search = novelty sets genome.fitness to novelty, .* "
                                          r"no_fitness_termination"):
        read.check_neat_config(config, path)
    map_elites, read = load(maze_cfg(tmp_path, "maze-map-elites.cfg"))
    assert not map_elites.no_fitness_termination   # genome.fitness stays the fitness: the threshold holds
    assert isinstance(map_elites, neat.Config)
