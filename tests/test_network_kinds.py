"""The network kinds as the settings know them (neatpar/config/network_kinds.py): one entry per kind,
whose names are the key's choices and whose words make its help; each kind's own rules for the
other settings (a CTRNN's Euler steps per decision, no neat_configs) and for the neat config
(feed-forward genomes for feedforward, time constants above 0 for ctrnn), checked on every way of
making settings."""
import dataclasses

import pytest

from neatpar.config.files import load
from neatpar.config.network_kinds import KINDS, MAX_CTRNN_STEPS, network_help, network_kind
from neatpar.config.settings_model import Settings
from neatpar.errors import ConfigError
from support.configs import CTRNN_GENES, ball_cfg, make_config

GYM = {"env": "gymnasium:CartPole-v1"}


def test_the_key_s_choices_and_help_come_from_the_entries():
    assert tuple(KINDS) == ("feedforward", "recurrent", "ctrnn", "hyperneat", "es-hyperneat")
    field = next(f for f in dataclasses.fields(Settings) if f.name == "network")
    assert field.metadata["reader"].options == tuple(KINDS)
    assert field.metadata["help"] == network_help() == ("feedforward, recurrent, ctrnn (continuous-time), hyperneat "
                                                        "(CPPNs painting a substrate's weights) or es-hyperneat (CPPNs "
                                                        "whose weight patterns place a substrate's hidden nodes) "
                                                        "networks")
    for name in KINDS:
        assert Settings.create({**GYM, "network": name}).network_kind is network_kind(name) is KINDS[name]


def test_a_ctrnn_s_euler_steps_per_decision_are_bounded():
    Settings.create({**GYM, "network": "ctrnn", "ctrnn_decision_time": MAX_CTRNN_STEPS * 0.001,
                     "ctrnn_time_step": 0.001})
    with pytest.raises(ConfigError, match=f"is {MAX_CTRNN_STEPS + 1} Euler steps per decision, more than"):
        Settings.create({**GYM, "network": "ctrnn", "ctrnn_decision_time": 1.001, "ctrnn_time_step": 0.001})
    fine = Settings.create({**GYM, "ctrnn_decision_time": 1.001, "ctrnn_time_step": 0.001})   # not a CTRNN
    with pytest.raises(ConfigError, match="Euler steps per decision"):
        dataclasses.replace(fine, network="ctrnn")
    with pytest.raises(ConfigError, match="Euler steps per decision"):
        fine.with_changes(network="ctrnn")


def test_an_asymmetric_game_s_own_neat_configs_are_refused_for_ctrnns(tmp_path):
    behaviors = "Duel?team=0: league, Keeper?team=1: league"
    Settings.create({"env": "/builds/duel", "behaviors": behaviors, "neat_configs": "Keeper?team=1: k.cfg"})
    with pytest.raises(ConfigError, match="neat_configs with network = ctrnn"):
        Settings.create({"env": "/builds/duel", "behaviors": behaviors, "neat_configs": "Keeper?team=1: k.cfg",
                         "network": "ctrnn"})


def test_each_kind_s_rules_for_the_neat_config(tmp_path):
    recurrent = make_config(tmp_path, "recurrent.cfg", feed_forward="false")
    settings = Settings.create(GYM)
    with pytest.raises(ConfigError, match="feed_forward = false evolves recurrent genomes; set \\[neatpar\\] network"):
        settings.check_neat_config(recurrent, "recurrent.cfg")
    settings.with_changes(network="recurrent").check_neat_config(recurrent)
    zero = make_config(tmp_path, "zero.cfg", **{**CTRNN_GENES, "time_constant_min_value": 0.0})
    settings.with_changes(network="recurrent").check_neat_config(zero)
    with pytest.raises(ConfigError, match="time_constant_min_value = 0.0 lets a node's time constant reach 0.0"):
        settings.with_changes(network="ctrnn").check_neat_config(zero, "zero.cfg")
    with pytest.raises(ConfigError, match="feed_forward = false evolves recurrent genomes"):
        load(ball_cfg(tmp_path, feed_forward="false"))   # a file is checked as it is read


def test_hyperneat_s_keys_are_read_and_checked(tmp_path):
    coordinates = tmp_path / "nodes.json"
    coordinates.write_text('{"outputs": [[0, 1], [1, 1]]}')
    settings = Settings.create({**GYM, "network": "hyperneat", "substrate_hidden": " 8X8 ,16",
                                "substrate_coordinates": "nodes.json", "hyperneat_leo": "yes"},
                               base=str(tmp_path))
    assert (settings.substrate_hidden, settings.substrate_coordinates) == ("8x8, 16", str(coordinates))
    assert (settings.hyperneat_activation, settings.hyperneat_weight_threshold, settings.hyperneat_max_weight,
            settings.hyperneat_bias, settings.hyperneat_leo) == ("tanh", 0.2, 5.0, False, True)
    for key, value, message in (("substrate_hidden", "8x, 16", "substrate_hidden=.* is not a list of layers"),
                                ("substrate_coordinates", "missing.json", "names no file"),
                                ("hyperneat_activation", "swish", "is not one of"),
                                ("hyperneat_weight_threshold", 1.0, "leaves no CPPN output above it"),
                                ("hyperneat_max_weight", 0, "must be greater than 0")):
        with pytest.raises(ConfigError, match=message):
            Settings.create({**GYM, "network": "hyperneat", key: value}, base=str(tmp_path))
    with pytest.raises(ConfigError, match="substrate_hidden is a setting of network = hyperneat"):
        Settings.create({**GYM, "substrate_hidden": "16"})


def test_hyperneat_s_rules_for_the_cppns_neat_config(tmp_path):
    settings = Settings.create({**GYM, "network": "hyperneat"})
    settings.check_neat_config(make_config(tmp_path, "2d.cfg", num_inputs=5, num_outputs=1))
    settings.check_neat_config(make_config(tmp_path, "3d.cfg", num_inputs=7, num_outputs=1))
    with pytest.raises(ConfigError, match="c.cfg: \\[DefaultGenome\\] num_inputs = 4, .* set num_inputs = 5"):
        settings.check_neat_config(make_config(tmp_path, "c.cfg", num_inputs=4, num_outputs=1), "c.cfg")
    with pytest.raises(ConfigError, match="reads 3 CPPN output\\(s\\) \\(weight, bias, link expression\\): set "
                                          "num_outputs = 3"):
        settings.with_changes(hyperneat_bias=True, hyperneat_leo=True).check_neat_config(
            make_config(tmp_path, "o.cfg", num_inputs=5, num_outputs=1))
    with pytest.raises(ConfigError, match="feed_forward = false, but HyperNEAT"):
        settings.check_neat_config(make_config(tmp_path, "r.cfg", num_inputs=5, num_outputs=1, feed_forward="false"))


def test_es_hyperneat_s_keys_are_read_checked_and_kept_to_their_kind(tmp_path):
    settings = Settings.create({**GYM, "network": "es-hyperneat", "es_max_depth": "3", "es_band_threshold": "0.1"})
    assert (settings.es_initial_depth, settings.es_max_depth, settings.es_band_threshold, settings.es_activation) == (
        1, 3, 0.1, "sigmoid")
    with pytest.raises(ConfigError, match="es_initial_depth = 3 is deeper than es_max_depth = 2"):
        Settings.create({**GYM, "network": "es-hyperneat", "es_initial_depth": 3})
    with pytest.raises(ConfigError, match="es_max_depth is a setting of network = es-hyperneat"):
        Settings.create({**GYM, "network": "hyperneat", "es_max_depth": 3})
    with pytest.raises(ConfigError, match="substrate_hidden is a setting of network = hyperneat"):
        Settings.create({**GYM, "network": "es-hyperneat", "substrate_hidden": "4"})
    for sizes, words in ((dict(num_inputs=7, num_outputs=1), "set num_inputs = 5"),
                         (dict(num_inputs=5, num_outputs=2), "set num_outputs = 1")):
        with pytest.raises(ConfigError, match=words):
            settings.check_neat_config(make_config(tmp_path, **sizes), "cppn.cfg")
