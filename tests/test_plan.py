"""Tests of run/plan.py: a run's plan, made before anything starts. A new run takes its settings
from the config file and the flags typed, its seeded first population and a default run folder; a
resumed run takes the checkpoint's stored settings, its population and its own folder; what
cannot be done is refused here, before a run folder or a simulator exists."""
import os
import re

import pytest

from neatpar.cli.command_line import build_parser, run_request
from neatpar.run.plan import make_plan
from neatpar.errors import ConfigError
from support.configs import ball_cfg, write_config
from support.evolution import genes_of
from support.runs import evolve_ok


def planned(*argv):
    return make_plan(run_request(build_parser().parse_args(["evolve", *argv])))


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory):
    """A real run of 2 generations on the ball build (checkpoints 1 and 2), made once."""
    folder = tmp_path_factory.mktemp("plan")
    out = folder / "run"
    evolve_ok(ball_cfg(folder, generations=2), out)
    return out


def test_a_new_run_takes_its_config_and_the_flags_typed_and_a_seeded_population(tmp_path, monkeypatch):
    config = ball_cfg(tmp_path, generations=3)
    monkeypatch.chdir(tmp_path)
    plan = planned("--config", config, "--generations", "7")
    assert plan.settings.generations == 7 and dict(plan.run.flags) == {"generations": "7"}
    assert plan.run.config_text == open(config).read()
    assert re.fullmatch(r"runs/ball-\d{8}-\d{6}", plan.out) and not os.path.exists("runs")  # nothing made yet
    assert plan.start.done == 0 and plan.start.checkpoint is None and not plan.here and plan.history is None
    assert plan.default_out
    again = planned("--config", config, "--generations", "7", "--out", str(tmp_path / "mine"))
    assert again.out == str(tmp_path / "mine") and not again.default_out
    assert [genes_of(g) for g in again.start.population.population.values()] == \
           [genes_of(g) for g in plan.start.population.population.values()]   # the config's seed


def test_a_resumed_run_continues_in_its_own_folder_with_its_stored_settings(finished_run, tmp_path):
    checkpoint = str(finished_run / "checkpoints" / "checkpoint-1.gz")
    os.remove(finished_run.parent / "ball.cfg")   # not needed: the settings are in the checkpoint
    plan = planned("--resume", checkpoint)
    assert plan.here and plan.out == str(finished_run) and plan.start.done == 1
    assert plan.settings.generations == 2 and plan.history == str(finished_run) and plan.notes == ()  # its stats.csv
    assert plan.start.population.generation == 1
    elsewhere = planned("--resume", checkpoint, "--out", str(tmp_path / "copy"))
    assert not elsewhere.here and elsewhere.out == str(tmp_path / "copy")


def test_a_checkpoint_moved_away_from_its_run_folder_resumes_with_a_note_that_stats_csv_begins_there(
        finished_run, tmp_path):
    """Checkpoints hold no stats rows (they are the run folder's): without its folder's stats.csv
    the resumed run's begins at the checkpoint's generation, and the plan says so."""
    lone = tmp_path / "elsewhere" / "checkpoints"
    lone.mkdir(parents=True)
    checkpoint = lone / "checkpoint-1.gz"
    checkpoint.write_bytes((finished_run / "checkpoints" / "checkpoint-1.gz").read_bytes())
    plan = planned("--resume", str(checkpoint), "--out", str(tmp_path / "run"))
    assert plan.notes == (f"no stats.csv beside checkpoint {checkpoint} (its run folder's): the new stats.csv "
                          f"begins at generation 1",)


def test_what_cannot_be_run_is_refused_before_anything_starts(finished_run, tmp_path):
    last = str(finished_run / "checkpoints" / "checkpoint-2.gz")
    with pytest.raises(ConfigError, match="is at generation 2, and the run has 2 generations: nothing to do"):
        planned("--resume", last)
    with pytest.raises(ConfigError, match="config file .* not found: leave out --config"):
        planned("--resume", last, "--generations", "3", "--config", str(tmp_path / "gone.cfg"))
    with pytest.raises(ConfigError, match="--config is missing"):
        planned()
    assert planned("--resume", last, "--generations", "3").start.done == 2   # extended: it goes on


def test_the_plan_carries_what_the_run_needs_of_the_command_line(finished_run, tmp_path):
    """After the plan nothing reads the arguments: whether the run prints and the checkpoint it
    resumes from are the plan's."""
    config = ball_cfg(tmp_path, generations=3)
    new = planned("--config", config, "--quiet", "--out", str(tmp_path / "new"))
    assert new.quiet and new.resume is None
    checkpoint = str(finished_run / "checkpoints" / "checkpoint-1.gz")
    again = planned("--resume", checkpoint)
    assert not again.quiet and again.resume == checkpoint


def test_clips_of_an_environment_that_cannot_give_pictures_are_refused_before_anything_starts(tmp_path):
    config = write_config(tmp_path, "nopictures.cfg", neatpar={"env": "gymnasium:support.videos:NoPictures",
                                                               "agents": 2, "max_steps": 5}, num_inputs=2, num_outputs=2)
    with pytest.raises(ConfigError, match=r"^video_interval = 3 records clips, but env = "
                                          r"gymnasium:support.videos:NoPictures cannot give pictures of its episodes: "
                                          r".*; or set video_interval = 0$"):
        planned("--config", config, "--video-interval", "3", "--out", str(tmp_path / "run"))
    assert planned("--config", config, "--out", str(tmp_path / "run")).settings.video_interval == 0
    assert not (tmp_path / "run").exists()
