"""A short look at an environment (neatpar/episodes/survey.py), on the probe build through the real
mlagents-envs: the population agents live at once, however often they are replaced, and the layout of
every behavior, waiting past SURVEY_STEPS for one that comes late."""
import contextlib

from neatpar.episodes.environments import open_environment
from neatpar.episodes.survey import SURVEY_STEPS, survey
from support.episode_runs import probe_config


@contextlib.contextmanager
def probe(tmp_path, args, behaviors="Probe?team=0: population"):
    _, settings = probe_config(tmp_path, args, behaviors)
    environment = open_environment(settings, None)
    try:
        yield environment, settings
    finally:
        environment.close()


def test_a_late_behavior_is_waited_for_and_every_layout_read(tmp_path):
    late = SURVEY_STEPS + 5
    with probe(tmp_path, f"--behaviors 2 --agents 3 --spawn-after 0,{late}",
               "Probe?team=0: population, Rival?team=1: champion") as (environment, settings):
        found = survey(environment, settings)
    assert found.agents == 3                              # the population's; the rival's are not counted
    assert sorted(found.layouts) == ["Probe?team=0", "Rival?team=1"]
    assert {(layout.inputs, layout.outputs) for layout in found.layouts.values()} == {(4, 1)}


def test_agents_replaced_with_fresh_ids_are_counted_once(tmp_path):
    with probe(tmp_path, "--agents 3 --lifetime 2") as (environment, settings):
        found = survey(environment, settings)
    assert found.agents == 3 and list(found.layouts) == ["Probe?team=0"]
