"""Tests of cli/genome_commands.py: `neatpar play` and `neatpar export` on saved genomes (the
layouts of a run's record, else of the game launched once; an asymmetric run's genome plays against
the other population's winner), and their one-line errors."""
import json
import pickle
import shutil

import pytest

from neatpar.cli.genome_commands import _asymmetric_match, _check_model_path
from neatpar.errors import ConfigError
from neatpar.config.files import load, population_configs
from support.configs import ball_cfg
from support.duels import asymmetric_cfg
from support.runs import evolve_ok, neatpar_cli, one_line_error


def test_play_a_saved_winner(tmp_path):
    config = ball_cfg(tmp_path, generations=1)
    assert neatpar_cli("evolve", "--config", config, "--out", str(tmp_path / "run")).returncode == 0
    result = neatpar_cli("play", "--config", config, "--genome", str(tmp_path / "run" / "winner.json"),
                         "--episodes", "3")
    assert result.returncode == 0, result.stderr
    assert "3 episodes" in result.stdout and len(result.stdout.splitlines()[-1].split()) == 4


def test_genome_file_of_the_wrong_kind(tmp_path):
    config = ball_cfg(tmp_path)
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"weights": [1, 2]}))
    one_line_error(tmp_path, ["play", "--config", config, "--genome", str(other)], "is not a neatpar genome")
    pickled = tmp_path / "dict.pickle"
    pickled.write_bytes(pickle.dumps({"a": 1}))
    one_line_error(tmp_path, ["play", "--config", config, "--genome", str(pickled)], "holds a dict, not a genome")


def test_a_genome_of_another_config_names_both_shapes(tmp_path):
    config = ball_cfg(tmp_path, generations=1)
    assert neatpar_cli("evolve", "--config", config, "--out", str(tmp_path / "run")).returncode == 0
    other = ball_cfg(tmp_path, name="other.cfg", num_inputs=6, num_outputs=3)
    one_line_error(tmp_path, ["play", "--config", other, "--genome", str(tmp_path / "run" / "winner.json")],
        "has num_inputs = 8, num_outputs = 2 but the config has num_inputs = 6, num_outputs = 3")


def test_export_onto_a_missing_folder_or_a_folder_is_one_line(tmp_path):
    config = ball_cfg(tmp_path, generations=1)
    assert neatpar_cli("evolve", "--config", config, "--out", str(tmp_path / "run")).returncode == 0
    genome = str(tmp_path / "run" / "winner.json")
    missing = tmp_path / "nowhere" / "brain.onnx"
    one_line_error(tmp_path, ["export", "--config", config, "--genome", genome, "--out", str(missing)],
        f"--out {missing}: the folder {tmp_path / 'nowhere'} does not exist: create it, or write the model elsewhere")
    one_line_error(tmp_path, ["export", "--config", config, "--genome", genome, "--out", str(tmp_path)],
        f"--out {tmp_path} is a folder: name the file to write, e.g. --out {tmp_path / 'brain.onnx'}")
    assert not (tmp_path / "nowhere").exists()


def test_export_uses_the_run_s_record_or_launches_the_game_once(tmp_path):
    config_path = ball_cfg(tmp_path, generations=1)
    out = tmp_path / "run"
    evolve_ok(config_path, out)
    recorded = neatpar_cli("export", "--config", config_path, "--genome", str(out / "winner.json"),
                           "--out", str(tmp_path / "a.onnx"))
    assert recorded.returncode == 0, recorded.stderr
    assert (tmp_path / "a.onnx").read_bytes() == (out / "winner.onnx").read_bytes()
    alone = tmp_path / "elsewhere"
    alone.mkdir()
    shutil.copy(out / "winner.json", alone / "winner.json")  # no behaviors.json beside it
    launched = neatpar_cli("export", "--config", config_path, "--genome", str(alone / "winner.json"),
                           "--out", str(tmp_path / "b.onnx"))
    assert launched.returncode == 0, launched.stderr
    assert (tmp_path / "b.onnx").read_bytes() == (out / "winner.onnx").read_bytes()
    wrong = neatpar_cli("export", "--config", config_path, "--genome", str(out / "winner.json"), "--out",
                        str(tmp_path / "c.onnx"), "--behavior", "Nope?team=0")
    assert wrong.returncode == 2 and wrong.stderr.strip() == (
        "neatpar: error: behavior 'Nope?team=0' is not among the behaviors the environment reported "
        "('Ball3D?team=0'): fix --behavior")
    assert not (tmp_path / "c.onnx").exists()


def test_export_checks_its_out_path_before_anything_runs(tmp_path):
    _check_model_path(str(tmp_path / "brain.onnx"))   # a file in a folder that exists: fine
    with pytest.raises(ConfigError, match="is a folder: name the file to write"):
        _check_model_path(str(tmp_path))
    with pytest.raises(ConfigError, match="the folder .* does not exist: create it"):
        _check_model_path(str(tmp_path / "nowhere" / "brain.onnx"))


def test_an_asymmetric_run_s_genome_plays_its_behavior_against_the_other_population_s_winner(tmp_path):
    config, settings = load(asymmetric_cfg(tmp_path))
    configs = population_configs(settings, config)
    run = tmp_path / "run"
    for behavior_folder in ("behavior-Duel_team=0", "behavior-Keeper_team=1"):
        (run / behavior_folder).mkdir(parents=True)
    keeper_winner = run / "behavior-Keeper_team=1" / "winner.json"
    with pytest.raises(ConfigError, match="is not in a population folder of an asymmetric run"):
        _asymmetric_match(str(tmp_path / "winner.json"), settings, configs)
    with pytest.raises(ConfigError, match="the opponent of 'Duel\\?team=0' is the winner of 'Keeper\\?team=1'"):
        _asymmetric_match(str(run / "behavior-Duel_team=0" / "winner.json"), settings, configs)
    evolve_ok(asymmetric_cfg(tmp_path, generations=1), tmp_path / "evolved")
    shutil.copy(tmp_path / "evolved" / "behavior-Keeper_team=1" / "winner.json", keeper_winner)
    behavior, opponents = _asymmetric_match(str(run / "behavior-Duel_team=0" / "winner.json"), settings, configs)
    assert behavior == "Duel?team=0" and list(opponents) == ["Keeper?team=1"]
    assert opponents["Keeper?team=1"].key == json.load(open(keeper_winner))["key"]
