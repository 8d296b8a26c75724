"""The environment a run's settings name, behind the runner's interface (environment.py): a Unity
build (or the Editor), or copies of a Gymnasium environment."""
from __future__ import annotations

from typing import Callable

from ..config.settings_model import Settings
from ..envs.gym import DEFAULT_COPIES, GymEnvironment, GymSetup, check as check_gym
from ..errors import ConfigError
from ..environment import Environment


def gym_setup(settings: Settings) -> GymSetup:
    """The copies a Gymnasium run plays in each process; max_steps cuts their episodes (so no
    step is spent on an unscored rest of an episode)."""
    return GymSetup(settings.gym, dict(settings.env_kwargs), settings.agents or DEFAULT_COPIES, settings.max_steps,
                    image_size=settings.gym_image_size)


def check_environment(settings: Settings) -> None:
    """Refuse an environment that cannot start with a ConfigError, before anything is created: a
    missing or non-executable build; a Gymnasium environment that is unknown, needs a package
    that is missing, or has spaces neatpar does not take."""
    if settings.gym is not None:
        check_gym(gym_setup(settings))
    elif settings.env is not None:
        from ..envs.unity.builds import resolve_build
        resolve_build(settings.env)


def launch_parameters(settings: Settings) -> tuple | dict:
    """What a Unity build is sent at every launch: the `name = number` pairs, or the first lessons'
    values of a parameter file (seeds from the run's, curriculum.py; each part's reset then sends
    the current lessons')."""
    parameters = settings.env_parameters
    if isinstance(parameters, tuple):
        return parameters
    return {p.name: p.lessons[0].value for p in parameters.resolve_seeds(settings.seed or 0).parameters}


def open_environment(settings: Settings, log_folder: str | None, worker_id: int | None = None,
                     allow_child: bool = False, on_launch: Callable[[int], None] | None = None,
                     display=None) -> Environment:
    """The environment of a run; nothing starts until its first reset. `worker_id` moves a Unity
    build's port (env hosts each take their own); `allow_child` lets an env host own one;
    `on_launch` is called with the PID of each process the environment launches (a Gymnasium
    environment launches none and needs none of these); `display` (envs.unity.bridge.Display)
    launches a Unity build with graphics, in a window, at real-time speed."""
    if settings.gym is not None:
        if display is not None:
            raise ConfigError(f"graphics open a Unity build's window; {settings.gym} is a Gymnasium environment: "
                              f"record a video of it instead, or watch it with render_mode = 'human' in env_kwargs")
        return GymEnvironment(gym_setup(settings))
    # The Unity side pulls in mlagents-envs and gRPC: imported only for Unity runs.
    from ..envs.unity.adapter import UnityAdapter
    from ..envs.unity.bridge import SimulatorBridge
    bridge = SimulatorBridge(
        settings.env, args=settings.env_args, no_graphics=settings.no_graphics, time_scale=settings.time_scale,
        timeout=settings.timeout, log_folder=log_folder, seed=settings.seed or 0,
        env_parameters=launch_parameters(settings), worker_id=settings.worker_id if worker_id is None else worker_id,
        allow_child=allow_child, display=display)
    bridge.on_launch = on_launch
    return UnityAdapter(bridge)
