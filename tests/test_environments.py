"""The environment a run's settings name (neatpar/episodes/environments.py): a Unity build, checked
before anything starts and launched only by the first reset, on the port the caller moves it to
and reporting each launch's PID; or copies of a Gymnasium environment, made in this process."""
import os
import stat

import numpy as np
import pytest

from neatpar.envs.gym import DEFAULT_COPIES, GymEnvironment, GymSetup
from neatpar.envs.unity.adapter import UnityAdapter
from neatpar.envs.unity.bridge import Display
from neatpar.errors import ConfigError
from neatpar.episodes.environments import check_environment, gym_setup, open_environment
from neatpar.settings import Settings
from support.paths import BALL
from support.processes import child_pids, cmdline, parent_of, wait_gone
from support.simulators import free_worker_id

BALL_BEHAVIOR = "Ball3D?team=0: population"


def ball_settings(**over):
    return Settings.create({"env": BALL, "env_args": "--agents 2 --max-steps 20", "behaviors": BALL_BEHAVIOR,
                            "max_steps": 20, "seed": 3, "worker_id": free_worker_id(), **over})


def test_a_gymnasium_run_plays_the_settings_copies_cut_at_max_steps():
    settings = Settings.create({"env": "gymnasium:CartPole-v1", "agents": 5, "max_steps": 30,
                                "env_kwargs": {"sutton_barto_reward": True}})
    assert gym_setup(settings) == GymSetup("CartPole-v1", {"sutton_barto_reward": True}, 5, 30)
    assert gym_setup(settings.with_changes(agents=None)).copies == DEFAULT_COPIES


def test_a_gymnasium_environment_opens_in_this_process_and_launches_nothing():
    settings = Settings.create({"env": "gymnasium:CartPole-v1", "agents": 3, "max_steps": 10})
    launched = []
    before = child_pids()
    environment = open_environment(settings, None, worker_id=7, on_launch=launched.append)
    try:
        assert isinstance(environment, GymEnvironment) and environment.setup == gym_setup(settings)
        environment.reset(1)
        batch = environment.poll()[environment.behavior]
        assert list(batch.decision_ids) == [0, 1, 2] and np.isfinite(batch.observations).all()
        assert environment.process_pid is None and launched == [] and child_pids() == before
    finally:
        environment.close()


def test_a_unity_build_starts_at_its_first_reset_on_the_port_asked_for_and_reports_its_pid(tmp_path):
    settings, worker_id = ball_settings(), free_worker_id()
    launched = []
    before = child_pids()
    environment = open_environment(settings, str(tmp_path / "logs"), worker_id=worker_id, on_launch=launched.append)
    try:
        assert isinstance(environment, UnityAdapter)
        assert child_pids() == before and launched == []  # nothing starts before the first reset
        environment.reset(5)
        assert launched == [environment.process_pid] and parent_of(launched[0]) == os.getpid()
        assert "ball" in cmdline(launched[0])
        assert environment.bridge.worker_id == worker_id  # the port the caller moved it to
        assert os.path.exists(tmp_path / "logs" / f"Player-{worker_id}.log")  # logs in the folder given
    finally:
        environment.close()
    assert not wait_gone(launched)


def test_a_unity_build_takes_the_settings_worker_id_unless_the_caller_moves_it():
    settings = ball_settings()
    environment = open_environment(settings, None)
    try:
        assert environment.bridge.worker_id == settings.worker_id and environment.process_pid is None
    finally:
        environment.close()


def test_a_missing_or_unrunnable_build_is_refused_before_anything_starts(tmp_path):
    before = child_pids()
    with pytest.raises(ConfigError, match=r"simulator build .*nothing not found .*fix \[neatpar\] env"):
        check_environment(ball_settings(env=str(tmp_path / "nothing")))
    build = tmp_path / "game.x86_64"
    build.write_text("#!/bin/sh\n")
    build.chmod(stat.S_IRUSR | stat.S_IWUSR)
    with pytest.raises(ConfigError, match=r"game.x86_64 is not executable: chmod \+x"):
        check_environment(ball_settings(env=str(tmp_path / "game")))
    check_environment(ball_settings())  # the real build passes
    assert child_pids() == before


def test_an_unknown_gymnasium_environment_is_refused_before_anything_starts():
    with pytest.raises(ConfigError, match="LunarLandr-v3"):
        check_environment(Settings.create({"env": "gymnasium:LunarLandr-v3"}))
    check_environment(Settings.create({"env": "gymnasium:CartPole-v1"}))


def test_a_display_reaches_the_unity_build_s_bridge_and_a_gymnasium_environment_refuses_one():
    display = Display(800, 600, 50)
    environment = open_environment(ball_settings(), None, display=display)
    assert environment.bridge.display == display and not environment.bridge.no_graphics
    assert environment.bridge.time_scale == 1.0 and not environment.bridge.connected
    assert open_environment(ball_settings(), None).bridge.no_graphics   # headless unless asked
    with pytest.raises(ConfigError, match=r"^graphics open a Unity build's window; CartPole-v1 is a Gymnasium "
                                          r"environment: record a video of it instead, or watch it with "
                                          r"render_mode = 'human' in env_kwargs$"):
        open_environment(Settings.create({"env": "gymnasium:CartPole-v1"}), None, display=display)
