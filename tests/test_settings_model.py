"""The settings model (neatpar/config/settings_model.py): the choices of `network`, `fitness`, `inference`,
`backend` and `neat_step` taken from their types; bad values are one-line errors that name the
setting as written; each key's declaration says whether a resume may change it."""
import dataclasses
import typing

import pytest

from neatpar.config.settings_model import Settings, flags, resumable
from neatpar.config.readers import Source
from neatpar.errors import ConfigError


def test_the_choices_of_an_option_come_from_its_type():
    fields = {f.name: f for f in dataclasses.fields(Settings)}
    hints = typing.get_type_hints(Settings)
    for name in ("network", "fitness", "inference", "backend", "neat_step"):
        options = typing.get_args(hints[name])
        assert fields[name].metadata["reader"].options == options, name
        for option in options:
            assert getattr(Settings.create({"env": "gymnasium:CartPole-v1", name: option}), name) == option
    shown = {f.name: f.metadata["reader"].options for f in flags() if hasattr(f.metadata["reader"], "options")}
    assert shown == {"inference": ("inprocess", "pool", "auto"), "backend": ("local", "ray"),
                     "search": ("fitness", "novelty", "novelty+fitness", "map-elites")}


@pytest.mark.parametrize("source, written", [(Source.FILE, "[neatpar] network = lstm"),
                                             (Source.FLAG, "--network lstm"), (Source.KEYWORD, "network='lstm'")])
def test_a_value_outside_the_choices_is_a_one_line_error(source, written):
    with pytest.raises(ConfigError) as error:
        Settings.create({"env": "gymnasium:CartPole-v1", "network": "lstm"}, source)
    assert str(error.value) == f"{written} is not one of feedforward, recurrent, ctrnn, hyperneat, es-hyperneat"


def test_each_key_says_whether_a_resume_may_change_it():
    """Only keys that leave the generations' results as they are may change on resume; the
    declaration of each key says so, and a key the model does not have may not."""
    may = {f.name for f in dataclasses.fields(Settings) if resumable(f.name)}
    assert may == {"generations", "checkpoint_interval", "video_interval", "inference", "workers", "backend",
                   "address", "timeout", "worker_id"}
    assert not resumable("seed") and not resumable("no_such_key")


def test_the_editor_with_another_worker_id_is_one_line_naming_the_fix():
    """mlagents-envs connects the Editor on its own port only (worker_id 0)."""
    assert Settings.create({"env": "editor", "behaviors": "Ball3D?team=0: population"}).worker_id == 0
    with pytest.raises(ConfigError) as error:
        Settings.create({"env": "editor", "behaviors": "Ball3D?team=0: population", "worker_id": 3})
    assert str(error.value) == ("worker_id = 3 with env = editor: the Unity Editor connects on its own port (worker_id "
                                "0) only; leave worker_id out, or set env to a build path")
