"""The winners' ONNX model files (neatpar/record/models.py): written atomically, one per population
behavior that reported (named after it when there are several), and the behavior `neatpar export`
writes for chosen or refused in one line. (What the models compute: test_onnx_export.py; models of
real runs played in Unity's way: test_export.py.)"""
import os

import neat
import onnx
import pytest

from support.configs import make_config
from neatpar.environment import Layout
from neatpar.errors import ConfigError
from neatpar.nn.onnx_export import export_policy
from neatpar.record.models import check_model_file, choose_behavior, model_file, save_policy, write_winner_models
from neatpar.settings import Settings

LAYOUT = Layout((3, 1), 1, (2,))   # 4 inputs; 1 continuous action and one branch of 2: 3 outputs
TWO = "Blue?team=0: population, Purple?team=1: population, Ball?team=2: champion"


def settings(behaviors: str) -> Settings:
    return Settings.create({"env": "/builds/teams", "behaviors": behaviors})


@pytest.fixture
def genome_and_config(tmp_path):
    config = make_config(tmp_path, num_inputs=4, num_outputs=3)
    return next(iter(neat.Population(config, seed=1).population.values())), config


def test_save_policy_writes_the_model_atomically(genome_and_config, tmp_path):
    genome, config = genome_and_config
    model = export_policy(genome, config, LAYOUT)
    folder = tmp_path / "out"
    folder.mkdir()
    path = folder / "winner.onnx"
    path.write_bytes(b"an older model")
    save_policy(model, str(path))
    assert onnx.load(str(path)) == model
    assert os.listdir(folder) == ["winner.onnx"]


def test_one_model_per_population_behavior_that_reported(genome_and_config, tmp_path):
    genome, config = genome_and_config
    assert model_file("Blue?team=0", settings("Blue?team=0: population")) == "winner.onnx"
    assert model_file("Blue team?team=0", settings(TWO.replace("Blue", "Blue team"))) == "winner-Blue_team.onnx"
    out = tmp_path / "run"
    out.mkdir()
    written = write_winner_models(genome, config, settings(TWO), {"Blue?team=0": LAYOUT, "Ball?team=2": LAYOUT},
                                  str(out))
    assert written == [str(out / "winner-Blue.onnx")]   # Purple never reported; Ball is no population
    assert os.listdir(out) == ["winner-Blue.onnx"]


def test_the_behavior_to_export_for_is_the_only_one_or_the_one_asked_for():
    layouts = {"Blue?team=0": LAYOUT, "Purple?team=1": LAYOUT}
    assert choose_behavior(settings("Blue?team=0: population"), layouts, None) == "Blue?team=0"
    assert choose_behavior(settings(TWO), layouts, "Purple?team=1") == "Purple?team=1"
    with pytest.raises(ConfigError, match=r"^the config has 2 population behaviors \(Blue\?team=0, Purple\?team=1\): "
                                          r"choose one with --behavior$"):
        choose_behavior(settings(TWO), layouts, None)
    with pytest.raises(ConfigError, match=r"^behavior 'Red' is not among the behaviors the environment reported "
                                          r"\('Blue\?team=0', 'Purple\?team=1'\): fix --behavior$"):
        choose_behavior(settings(TWO), layouts, "Red")


def test_a_model_file_to_write_is_named_onnx_in_a_folder_that_exists(tmp_path):
    check_model_file(str(tmp_path / "brain.onnx"))
    check_model_file(str(tmp_path / "Brain.ONNX"))
    with pytest.raises(ConfigError) as error:
        check_model_file(str(tmp_path / "brain.txt"))
    assert str(error.value) == (f"--out {tmp_path / 'brain.txt'}: the name must end in .onnx, which Unity imports as a "
                                f"model: e.g. --out {tmp_path / 'brain.onnx'}")
    with pytest.raises(ConfigError, match=r"the folder .*nowhere does not exist: create it, or write the model"):
        check_model_file(str(tmp_path / "nowhere" / "brain.txt"))
    assert not os.listdir(tmp_path)
