"""Which behaviors have reported (neatpar/episodes/arrivals.py): the Arrivals record on its own, and
through a generation on the probe build: a behavior the config does not name gets neutral actions and
one warning, a configured one that never reports is an error after BEHAVIOR_WAIT_STEPS."""
import pytest

from neatpar.episodes.arrivals import BEHAVIOR_WAIT_STEPS, Arrivals
from neatpar.errors import EnvironmentMismatch
from support.episode_runs import expected_return, probe_config, run_generation


def test_arrivals_are_complete_when_every_configured_behavior_was_checked():
    arrivals = Arrivals(["Blue?team=0", "Purple?team=1"])
    assert not arrivals.complete() and arrivals.missing() == ["Blue?team=0", "Purple?team=1"]
    arrivals.checked.add("Purple?team=1")
    assert arrivals.missing() == ["Blue?team=0"]
    arrivals.checked.add("Blue?team=0")
    assert arrivals.complete() and arrivals.missing() == []


def test_unlisted_behaviors_are_taken_once_sorted():
    arrivals = Arrivals(["Blue?team=0"])
    arrivals.unlisted.update({"Zed?team=2", "Red?team=1"})
    assert arrivals.take_unlisted() == ["Red?team=1", "Zed?team=2"]
    assert arrivals.take_unlisted() == []


def test_a_behavior_the_config_does_not_name_gets_neutral_actions_and_one_warning(tmp_path, caplog):
    config, settings = probe_config(tmp_path, "--behaviors 2 --agents 2 --episode-decisions 3,0")
    with caplog.at_level("WARNING", logger="neatpar"):
        genomes, _ = run_generation(config, settings)
    warnings = [r.getMessage() for r in caplog.records if "Rival?team=1" in r.getMessage()]
    assert warnings == ["behavior 'Rival?team=1' is in the environment but not in [neatpar] behaviors: its agents "
                        "get neutral actions (zeros; for a discrete branch, the first action their mask allows)"]
    assert all(g.fitness == expected_return(g, config, 3, 20) for _, g in genomes)


def test_a_configured_behavior_that_never_reports_is_an_error_after_the_wait(tmp_path):
    config, settings = probe_config(tmp_path, "--agents 2 --episode-decisions 3",
                                    "Probe?team=0: population, Ghost?team=1: champion")
    with pytest.raises(EnvironmentMismatch, match=rf"behavior 'Ghost\?team=1' is not in the environment: no agent "
                                                  rf"of it asked for a decision in {BEHAVIOR_WAIT_STEPS} environment "
                                                  rf"steps; it has 'Probe\?team=0'"):
        run_generation(config, settings)
