"""ML-Agents' environment_parameters YAML (neatpar/config/parameter_file.py): constants, the three
samplers and curricula read as mlagents-learn reads them, seeds from the run's seed by ML-Agents'
rule, and each mistake one line naming the parameter and lesson."""
import logging
import textwrap

import pytest

from neatpar.config.parameter_file import (NO_SEED, CompletionCriteria, Constant, Gaussian, Lesson, Measure,
                                           MultiRangeUniform, Parameter, Uniform, read_parameter_file)
from neatpar.errors import ConfigError
from neatpar.settings import Settings

from support.curricula import FULL_YAML, write_yaml


def test_every_kind_of_parameter_is_read(tmp_path):
    read = read_parameter_file(write_yaml(tmp_path, FULL_YAML))
    by_name = {p.name: p for p in read.parameters}
    assert [p.name for p in read.parameters] == ["agents_bonus", "mass", "gravity", "scale", "wall", "target"]
    assert by_name["agents_bonus"] == Parameter("agents_bonus", (Lesson("agents_bonus", Constant(2.0)),))
    assert by_name["mass"].lessons[0].value == Uniform(0.5, 1.5, 7)
    assert by_name["gravity"].lessons[0].value == Gaussian(9.81, 0.5, NO_SEED)
    assert by_name["scale"].lessons[0].value == MultiRangeUniform(((0.8, 1.0), (1.2, 1.5)), NO_SEED)
    wall = by_name["wall"]
    assert [lesson.name for lesson in wall.lessons] == ["low", "middle", "high"]
    assert wall.lessons[0].completion_criteria == CompletionCriteria(
        "Ball3D", Measure.PROGRESS, 0.3, 0, True, False)
    assert wall.lessons[1].completion_criteria == CompletionCriteria("Ball3D", Measure.REWARD, 5.0, 2, False, True)
    assert wall.lessons[1].value == Uniform(1.0, 2.0, NO_SEED)
    assert wall.lessons[2].completion_criteria is None
    assert [p.name for p in read.curricula] == ["wall", "target"]


def test_seeds_follow_ml_agents_rule_run_seed_plus_a_count_of_unseeded_values(tmp_path):
    """EnvironmentParameterManager._set_sampler_seeds: every lesson value without a seed (constants
    too), in order, gets run_seed + offset; a given seed is kept and not counted."""
    read = read_parameter_file(write_yaml(tmp_path, FULL_YAML)).resolve_seeds(100)
    seeds = [(p.name, lesson.name, lesson.value.seed) for p in read.parameters for lesson in p.lessons]
    assert seeds == [("agents_bonus", "agents_bonus", 100), ("mass", "mass", 7), ("gravity", "gravity", 101),
                     ("scale", "scale", 102), ("wall", "low", 103), ("wall", "middle", 104), ("wall", "high", 105),
                     ("target", "near", 106), ("target", "far", 107)]


def test_a_whole_trainer_config_gives_its_environment_parameters_and_names_the_rest(tmp_path, caplog):
    body = "behaviors:\n  Ball3D:\n    trainer_type: ppo\nenv_settings:\n  seed: 3\nenvironment_parameters:\n" \
           + textwrap.indent(FULL_YAML, "  ")
    with caplog.at_level(logging.INFO, logger="neatpar"):
        read = read_parameter_file(write_yaml(tmp_path, body))
    assert len(read.parameters) == 6
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 1 and "ignores behaviors, env_settings" in lines[0]


def test_the_setting_takes_the_file_relative_to_the_config_and_pairs_as_before(tmp_path):
    path = write_yaml(tmp_path, FULL_YAML)
    settings = Settings(env="ball", behaviors="Ball3D?team=0: population", env_parameters=path)
    assert [p.name for p in settings.env_parameters.parameters][:2] == ["agents_bonus", "mass"]
    pairs = Settings(env="ball", behaviors="Ball3D?team=0: population", env_parameters="a = 1, b = 2")
    assert pairs.env_parameters == (("a", 1.0), ("b", 2.0))
    with pytest.raises(ConfigError, match="names no file"):
        Settings(env="ball", behaviors="Ball3D?team=0: population", env_parameters=str(tmp_path / "missing.yaml"))


BAD = [
    ("x:\n  sampler_type: triangle\n  sampler_parameters: {a: 1}\n",
     "parameter 'x': unknown sampler_type 'triangle'"),
    ("x:\n  sampler_type: uniform\n  sampler_parameters: {min_value: 2, max_value: 1}\n",
     "parameter 'x' uniform sampler: min_value 2 is greater than max_value 1"),
    ("x:\n  sampler_type: gaussian\n  sampler_parameters: {mean: 1}\n", "parameter 'x' gaussian sampler has no st_dev"),
    ("x:\n  sampler_type: multirangeuniform\n  sampler_parameters: {intervals: [[1, 2, 3]]}\n",
     "interval [1, 2, 3] is not a [min, max] pair"),
    ("x:\n  curriculum:\n    - name: a\n      completion_criteria: {behavior: B, threshold: 1}\n    - name: b\n"
     "      value: 2\n", "parameter 'x' lesson 'a' has no value"),
    ("x:\n  curriculum:\n    - name: a\n      value: 1\n      completion_criteria: {behavior: B}\n    - name: b\n"
     "      value: 2\n      completion_criteria: {behavior: B, threshold: 3}\n",
     "parameter 'x' lesson 'b' is the last lesson: it is never done, so it takes no completion_criteria"),
    ("x:\n  curriculum:\n    - name: a\n      value: 1\n    - name: b\n      value: 2\n",
     "parameter 'x' lesson 'a' has no completion_criteria"),
    ("x: 1\ny: 2\nx: 3\n", "'x' is named twice (line 3)"),
    ("x:\n  curriculum:\n    - name: a\n      value: 1\n      completion_criteria: {behavior: B, measure: steps}\n"
     "    - name: b\n      value: 2\n", "parameter 'x' lesson 'a' completion_criteria: measure 'steps' is not"),
    ("x:\n  curriculum:\n    - name: a\n      value: 1\n      completion_criteria: {behavior: B, measure: progress,"
     " threshold: 2}\n    - name: b\n      value: 2\n", "threshold 2 of measure progress is not from 0 to 1"),
    ("x:\n  curriculum:\n    - name: a\n      value: 1\n      completion_criteria: {threshold: 2}\n"
     "    - name: b\n      value: 2\n", "parameter 'x' lesson 'a' completion_criteria names no behavior"),
    ("x:\n  curriculum:\n    - name: a\n      value: 1\n      completion_criteria: {behavior: B}\n"
     "    - name: a\n      value: 2\n", "parameter 'x': lesson 'a' is named twice"),
    ("x: {sampler_type: uniform, sampler_parameters: {min_value: 0, max_value: 1, seed: 1.5}}\n",
     "seed 1.5 is not a 32-bit whole number"),
    ("x: hello\n", "parameter 'x': 'hello' is neither a number nor a sampler"),
    ("behaviors: {B: {}}\n", "a trainer config without environment_parameters"),
]


@pytest.mark.parametrize("body, message", BAD)
def test_each_mistake_is_one_line_naming_the_parameter_and_lesson(tmp_path, body, message):
    path = write_yaml(tmp_path, body)
    with pytest.raises(ConfigError) as error:
        Settings(env="ball", behaviors="Ball3D?team=0: population", env_parameters=path)
    text = str(error.value)
    assert "\n" not in text and text.startswith(path) and message in text


def test_neatpar_evolve_stops_on_a_bad_file_with_one_line_before_any_simulator(tmp_path):
    from support.configs import ball_cfg
    from support.runs import one_line_error
    write_yaml(tmp_path, "wall:\n  curriculum:\n    - name: low\n      value: 1\n      completion_criteria: "
                         "{behavior: Ball3D}\n    - name: high\n      value: 2\n      completion_criteria: "
                         "{behavior: Ball3D, threshold: 9}\n", "bad.yaml")
    config = ball_cfg(tmp_path, env_parameters="bad.yaml")
    line = one_line_error(tmp_path, ["evolve", "--config", config],
                          "parameter 'wall' lesson 'high' is the last lesson")
    assert "bad.yaml" in line
