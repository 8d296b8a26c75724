"""The settings model's types (neatpar/settings.py): the environment `env` names parsed once into an
EnvTarget, roles as the Role enum, the behaviors of each role derived in one place, and the
choices of `network`, `fitness`, `inference`, `backend` and `neat_step` taken from their types;
bad values are one-line errors that name the setting as written."""
import dataclasses
import typing

import pytest

from neatpar.errors import ConfigError
from neatpar.settings import (BehaviorRole, EnvKind, EnvTarget, Role, Settings, Source, flags)

BUILD = "/builds/duel"


def test_env_is_parsed_once_into_its_kind():
    assert Settings.create({"env": "gymnasium:CartPole-v1"}).target == EnvTarget(EnvKind.GYMNASIUM, "CartPole-v1")
    assert Settings.create({"env": " GYMNASIUM:pkg.mod:Id-v0 "}).target == EnvTarget(EnvKind.GYMNASIUM, "pkg.mod:Id-v0")
    unity = Settings.create({"env": BUILD, "behaviors": "Duel?team=0: population"})
    assert unity.target == EnvTarget(EnvKind.BUILD, BUILD) and unity.gym is None
    editor = Settings.create({"env": "editor", "behaviors": "Duel?team=0: population"})
    assert editor.target == EnvTarget(EnvKind.EDITOR, None) and editor.env is None
    assert Settings.create({"env": "gymnasium:CartPole-v1"}).gym == "CartPole-v1"


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


def test_the_choices_of_an_option_come_from_its_type():
    fields = {f.name: f for f in dataclasses.fields(Settings)}
    hints = typing.get_type_hints(Settings)
    for name in ("network", "fitness", "inference", "backend", "neat_step"):
        options = typing.get_args(hints[name])
        assert fields[name].metadata["reader"].options == options, name
        for option in options:
            assert getattr(Settings.create({"env": "gymnasium:CartPole-v1", name: option}), name) == option
    shown = {f.name: f.metadata["reader"].options for f in flags() if hasattr(f.metadata["reader"], "options")}
    assert shown == {"inference": ("inprocess", "pool", "auto"), "backend": ("local", "ray")}


@pytest.mark.parametrize("source, written", [(Source.FILE, "[neatpar] network = lstm"),
                                             (Source.FLAG, "--network lstm"), (Source.KEYWORD, "network='lstm'")])
def test_a_value_outside_the_choices_is_a_one_line_error(source, written):
    with pytest.raises(ConfigError) as error:
        Settings.create({"env": "gymnasium:CartPole-v1", "network": "lstm"}, source)
    assert str(error.value) == f"{written} is not one of feedforward, recurrent, ctrnn"
