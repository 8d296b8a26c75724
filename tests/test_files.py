"""Config files (neatpar/config/files.py): one file read into the neat-python config and the
checked settings, the file's text given instead (a resumed run's stored copy) with its relative
paths anchored where the file was, the NEAT step classes `neat_step` names (neatpar's, declared
when neatpar is imported, or neat-python's own), the populations' own neat configs of an
asymmetric game, and one-line errors for files that cannot be read."""
import os

import neat
import pytest

import neatpar
from neatpar.config.files import NeatStepClasses, load, neat_step_classes, population_configs, read_neat_config
from neatpar.errors import ConfigError
from support.configs import ball_cfg, write_config
from support.duels import asymmetric_cfg


def test_a_file_gives_its_neat_config_with_neatpar_s_classes_and_its_settings(tmp_path):
    config, settings = load(ball_cfg(tmp_path, generations=4))
    assert config.genome_type is neatpar.Genome and config.reproduction_type is neatpar.Reproduction
    assert config.species_set_type is neatpar.SpeciesSet and config.genome_config.num_inputs == 8
    assert settings.generations == 4 and settings.population_behaviors == ("Ball3D?team=0",)
    theirs, _ = load(ball_cfg(tmp_path, "theirs.cfg", neat_step="neat-python"))
    assert (theirs.genome_type, theirs.reproduction_type, theirs.species_set_type) == \
           (neat.DefaultGenome, neat.DefaultReproduction, neat.DefaultSpeciesSet)


def test_the_step_classes_are_those_declared_for_their_name():
    assert neat_step_classes("neatpar") == NeatStepClasses(neatpar.Genome, neatpar.Reproduction, neatpar.SpeciesSet)
    assert neat_step_classes("neat-python").genome is neat.DefaultGenome
    with pytest.raises(ConfigError, match="neat_step = mine names no declared NEAT step classes"):
        neat_step_classes("mine")


def test_a_stored_text_is_read_as_the_file_it_was_with_its_paths_anchored_there(tmp_path):
    path = ball_cfg(tmp_path, generations=6)
    text = open(path).read()
    os.remove(path)   # the text alone is enough; the path only names it
    config, settings = load(path, text)
    assert settings.generations == 6 and config.pop_size == 8
    rival = load(path, text.replace("Ball3D?team=0: population", "Ball3D?team=0: population, B?team=1: rival.json"))
    assert rival[1].behaviors[1].genome_file == os.path.join(str(tmp_path), "rival.json")


def test_files_that_cannot_be_read_are_one_line_errors(tmp_path):
    with pytest.raises(ConfigError, match="config file '.*none.cfg' not found"):
        load(str(tmp_path / "none.cfg"))
    plain = write_config(tmp_path, "plain.cfg")
    with pytest.raises(ConfigError, match="has no \\[neatpar\\] section"):
        load(plain)
    broken = tmp_path / "broken.cfg"
    broken.write_text("[neatpar\nenv = x\n")
    with pytest.raises(ConfigError, match="cannot be parsed"):
        load(str(broken))
    _, settings = load(ball_cfg(tmp_path))
    with pytest.raises(ConfigError, match="neat config '.*missing.cfg' not found"):
        read_neat_config(settings, str(tmp_path / "missing.cfg"))


def test_an_asymmetric_game_s_populations_have_their_own_neat_configs(tmp_path):
    config, settings = load(asymmetric_cfg(tmp_path))
    configs = population_configs(settings, config)
    assert list(configs) == ["Duel?team=0", "Keeper?team=1"] and configs["Duel?team=0"] is config
    assert configs["Keeper?team=1"].genome_config.num_inputs == 5
    stored = {"Keeper?team=1": open(tmp_path / "keeper.cfg").read().replace("pop_size = 6", "pop_size = 4")}
    assert population_configs(settings, config, stored)["Keeper?team=1"].pop_size == 4
