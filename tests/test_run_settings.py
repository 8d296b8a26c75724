"""A run's stored settings (neatpar/config/run_settings.py): what a resume continues with, and how what
is typed again is applied with a note or refused."""
import pytest

from neatpar.errors import ConfigError
from neatpar.config.run_settings import RunSettings, config_changes, resumed
from support.configs import ball_cfg

WHERE = "run/checkpoints/checkpoint-2.gz"


@pytest.fixture
def stored(tmp_path):
    """The record of a run started with `--seed 5 --generations 8`."""
    return RunSettings.from_file(ball_cfg(tmp_path), {"seed": "5", "generations": "8"})


def edited(tmp_path, stored, old, new, name="edited.cfg"):
    path = tmp_path / name
    text = stored.config_text.replace(old, new)
    assert text != stored.config_text
    path.write_text(text)
    return str(path)


def test_the_record_loads_the_run_s_settings_with_its_flags(stored):
    config, settings = stored.load()
    assert (settings.seed, settings.generations, settings.max_steps) == (5, 8, 15)
    assert config.pop_size == 8
    assert RunSettings.from_dict(stored.to_dict()) == stored


def test_nothing_typed_again_changes_nothing(stored):
    assert resumed(stored, None, {}, WHERE) == (stored, [])


def test_the_same_values_typed_again_change_nothing(tmp_path, stored):
    same = edited(tmp_path, stored, "[DefaultGenome]", "# a comment only\n[DefaultGenome]")
    record, notes = resumed(stored, same, {"seed": "5", "generations": "08"}, WHERE)
    assert notes == [] and record.load()[1] == stored.load()[1]


def test_more_generations_extend_the_run_silently(stored):
    record, notes = resumed(stored, None, {"generations": "18"}, WHERE)
    assert notes == [] and record.load()[1].generations == 18 and record.load()[1].seed == 5


@pytest.mark.parametrize("flag, value, old", [("seed", "6", "5"), ("envs", "2", "1")])
def test_a_flag_that_would_change_the_results_is_refused(stored, flag, value, old):
    with pytest.raises(ConfigError) as error:
        resumed(stored, None, {flag: value}, WHERE)
    assert str(error.value) == (f"--{flag} {value} differs from the run's {flag} = {old} (stored in {WHERE}): the "
                                f"resumed generations would differ from an uninterrupted run; leave out --{flag} to "
                                f"continue the run, or start a new run with --{flag} {value}")


def test_where_the_networks_run_is_applied_with_a_note(stored):
    record, notes = resumed(stored, None, {"inference": "pool", "workers": "3"}, WHERE)
    assert (record.load()[1].inference, record.load()[1].workers) == ("pool", 3)
    assert notes == ["--inference pool replaces the run's inference = inprocess; the generations' results stay as "
                     "they would have been",
                     "--workers 3 replaces the run's workers = 2; the generations' results stay as they would have been"]


def test_a_config_that_changes_only_when_the_run_stops_is_applied_with_a_note(tmp_path, stored):
    path = edited(tmp_path, stored, "no_fitness_termination = true", "no_fitness_termination = false")
    record, notes = resumed(stored, path, {}, WHERE)
    assert record.config_text == open(path).read() and record.flags == stored.flags
    assert notes == [f"--config {path} changes [NEAT] no_fitness_termination; the generations' results stay as they "
                     f"would have been"]


def test_a_config_that_would_change_the_results_is_refused(tmp_path, stored):
    path = edited(tmp_path, stored, "pop_size = 8", "pop_size = 16")
    with pytest.raises(ConfigError, match=r"--config .*edited.cfg changes \[NEAT\] pop_size \(8 -> 16\) of the config "
                                          r"the run started with \(.*ball.cfg, stored in run/checkpoints"):
        resumed(stored, path, {}, WHERE)


def test_config_changes_ignore_comments_and_spacing_and_see_keys_added_or_removed():
    old = "[NEAT]\npop_size = 8\n# note\n[neatpar]\nenv = x\n"
    assert config_changes(old, "[NEAT]\npop_size=8\n\n[neatpar]\nenv   =   x\n") == []
    assert config_changes(old, "[NEAT]\npop_size = 9\n[neatpar]\nenv = x\nseed = 2\n") == [
        ("NEAT", "pop_size", "8", "9"), ("neatpar", "seed", None, "2")]
