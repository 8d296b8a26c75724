"""The environment a settings' `env` names (neatpar/config/targets.py): read once (a build path made
absolute against the config file's folder, the Editor, `gymnasium:TARGET`, an Env class from
Python) and parsed once into an EnvTarget; a Gymnasium environment's behavior is what follows the
last ':' of its target."""
import os

import pytest

from neatpar.config.readers import Source, Where
from neatpar.config.settings_model import Settings
from neatpar.config.targets import GYM_PREFIX, EnvKind, EnvTarget, environment, gym_behavior_name
from neatpar.errors import ConfigError

BUILD = "/builds/duel"


def test_env_is_parsed_once_into_its_kind():
    assert Settings.create({"env": "gymnasium:CartPole-v1"}).target == EnvTarget(EnvKind.GYMNASIUM, "CartPole-v1")
    assert Settings.create({"env": " GYMNASIUM:pkg.mod:Id-v0 "}).target == EnvTarget(EnvKind.GYMNASIUM, "pkg.mod:Id-v0")
    unity = Settings.create({"env": BUILD, "behaviors": "Duel?team=0: population"})
    assert unity.target == EnvTarget(EnvKind.BUILD, BUILD) and unity.gym is None
    editor = Settings.create({"env": "editor", "behaviors": "Duel?team=0: population"})
    assert editor.target == EnvTarget(EnvKind.EDITOR, None) and editor.env is None
    assert Settings.create({"env": "gymnasium:CartPole-v1"}).gym == "CartPole-v1"


class OwnEnv:
    """Stands for a Gymnasium Env class of the user's own, given from Python."""


def test_env_is_read_as_a_build_path_against_the_config_s_folder_the_editor_or_a_gymnasium_target(tmp_path):
    where = Where(Source.FILE, str(tmp_path))
    assert environment("env", "builds/ball", where) == os.path.join(str(tmp_path), "builds", "ball")
    assert environment("env", "/abs/ball", where) == "/abs/ball"
    assert environment("env", " Editor ", where) is None and environment("env", None, where) is None
    assert environment("env", "Gymnasium: CartPole-v1", where) == GYM_PREFIX + "CartPole-v1"
    assert environment("env", OwnEnv, where) == f"{GYM_PREFIX}{__name__}:OwnEnv"


@pytest.mark.parametrize("value, why", [
    ("", "is not a build: give its path"), (3, "is not a build: give its path"),
    ("gymnasium:", "names no Gymnasium environment"), ("gymnasium:pkg.mod:", "names no Gymnasium environment")])
def test_an_env_that_names_nothing_is_a_one_line_error(value, why):
    with pytest.raises(ConfigError) as error:
        environment("env", value, Where(Source.FILE, "."))
    assert str(error.value).startswith(f"[neatpar] env = {value} {why}") and "\n" not in str(error.value)


@pytest.mark.parametrize("target, behavior", [("CartPole-v1", "CartPole-v1"), ("pkg.mod:Id-v0", "Id-v0"),
                                              ("package.module:MyEnv", "MyEnv")])
def test_a_gymnasium_environment_s_behavior_is_its_id_or_class_name(target, behavior):
    assert gym_behavior_name(target) == behavior
    assert EnvTarget.of(GYM_PREFIX + target) == EnvTarget(EnvKind.GYMNASIUM, target)
    assert Settings.create({"env": GYM_PREFIX + target}).population_behaviors == (behavior,)
