"""Who drives each behavior (neatpar/config/behaviors.py): roles as the Role enum, a genome file's
path made absolute against the config file's folder, the behaviors of each role derived in one
place, league behaviors' own neat config files, and one-line errors for pairs that cannot work."""
import os

import pytest

from neatpar.config.behaviors import BehaviorRole, Role, behavior_files, behavior_roles
from neatpar.config.readers import Source, Where
from neatpar.config.settings_model import Settings
from neatpar.errors import ConfigError

BUILD = "/builds/duel"


def test_roles_are_a_type_and_the_behaviors_of_a_role_are_derived_in_one_place(tmp_path):
    genome = tmp_path / "rival.json"
    settings = Settings.create({"env": BUILD, "behaviors": f"A?team=0: population, B?team=1: league, "
                                                         f"C?team=2: champion, D?team=3: {genome}, "
                                                         f"E?team=4: population"})
    assert [r.role for r in settings.behaviors] == [Role.POPULATION, Role.LEAGUE, Role.CHAMPION, Role.FILE,
                                                    Role.POPULATION]
    assert settings.behaviors[3] == BehaviorRole("D?team=3", Role.FILE, str(genome))
    assert settings.population_behaviors == ("A?team=0", "E?team=4")
    assert settings.with_role(Role.LEAGUE) == ("B?team=1",) and not settings.asymmetric
    both = Settings.create({"env": BUILD, "behaviors": "A?team=0: league, B?team=1: league"})
    assert both.population_behaviors == () and both.asymmetric
    gym = Settings.create({"env": "gymnasium:CartPole-v1"})
    assert gym.population_behaviors == ("CartPole-v1",)


def test_roles_are_read_from_text_a_mapping_or_records_alike(tmp_path):
    where = Where(Source.FILE, str(tmp_path))
    text = behavior_roles("behaviors", "A?team=0: population\nB?team=1: rival.json", where)
    assert text == (BehaviorRole("A?team=0", Role.POPULATION),
                    BehaviorRole("B?team=1", Role.FILE, os.path.join(str(tmp_path), "rival.json")))
    assert behavior_roles("behaviors", {"A?team=0": "population", "B?team=1": "rival.json"}, where) == text
    assert behavior_roles("behaviors", text, where) == text


@pytest.mark.parametrize("value, why", [
    ("A?team=0", "has 'A?team=0', which is not 'BehaviorName: role'"),
    ("A?team=0: champion", "gives no behavior the role 'population'"),
    ("A?team=0: population, A?team=0: champion", "names a behavior twice"),
    ("", "names no behavior")])
def test_roles_that_cannot_work_are_one_line_errors(value, why):
    with pytest.raises(ConfigError) as error:
        behavior_roles("behaviors", value, Where(Source.FILE, "."))
    assert str(error.value).startswith(f"[neatpar] behaviors = {value} {why}")


@pytest.mark.parametrize("role, close", [("populaton", "population"), ("Champion", "champion"), ("leage", "league")])
def test_a_misspelt_role_that_names_no_file_suggests_the_close_role(tmp_path, role, close):
    value = f"A?team=0: population, B?team=1: {role}"
    with pytest.raises(ConfigError) as error:
        behavior_roles("behaviors", value, Where(Source.FILE, str(tmp_path)))
    assert str(error.value) == (f"[neatpar] behaviors = {value} has {role!r}, which is not a role (did you mean "
                                f"{close}?) nor a genome file ({tmp_path / role} does not exist); roles are "
                                f"population, champion, league or a saved genome file")


def test_a_file_named_like_a_role_or_a_missing_file_not_named_like_one_is_a_genome_file(tmp_path):
    """A file that exists is the behavior's genome whatever its name; a missing one that is not a
    role's near miss is left for the run's start to report (it may be written before then)."""
    (tmp_path / "champions").write_text("{}")
    where = Where(Source.FILE, str(tmp_path))
    roles = behavior_roles("behaviors", "A?team=0: population, B?team=1: champions, C?team=2: champion.json", where)
    assert [(r.role, r.genome_file) for r in roles[1:]] == [(Role.FILE, str(tmp_path / "champions")),
                                                           (Role.FILE, str(tmp_path / "champion.json"))]


def test_league_behaviors_own_neat_configs_are_files_relative_to_the_config(tmp_path):
    where = Where(Source.FILE, str(tmp_path))
    assert behavior_files("neat_configs", "Striker: striker.cfg, Goalie: ../goalie.cfg", where) == (
        ("Striker", os.path.join(str(tmp_path), "striker.cfg")),
        ("Goalie", os.path.normpath(os.path.join(str(tmp_path), "..", "goalie.cfg"))))
    with pytest.raises(ConfigError, match=r"has ': goalie.cfg', which is not 'BehaviorName: file'"):
        behavior_files("neat_configs", ": goalie.cfg", where)
