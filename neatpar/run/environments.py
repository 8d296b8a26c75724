"""The environment a run's settings name, behind the runner's interface (envs/base.py)."""
from __future__ import annotations

from typing import Callable

from ..envs.base import Environment
from ..envs.unity.adapter import UnityAdapter
from ..envs.unity.bridge import SimulatorBridge, resolve_build
from ..settings import Settings


def check_environment(settings: Settings) -> None:
    """Refuse an environment that cannot start (a missing or non-executable build) with a
    ConfigError, before anything is created."""
    if settings.env is not None:
        resolve_build(settings.env)


def open_environment(settings: Settings, log_folder: str | None, worker_id: int | None = None,
                     allow_child: bool = False, on_launch: Callable[[int], None] | None = None) -> Environment:
    """The environment of a run; nothing starts until its first reset. `worker_id` moves a Unity
    build's port (env hosts each take their own); `allow_child` lets an env host own one;
    `on_launch` is called with the PID of each process the environment launches."""
    bridge = SimulatorBridge(
        settings.env, args=settings.env_args, no_graphics=settings.no_graphics, time_scale=settings.time_scale,
        timeout=settings.timeout, log_folder=log_folder, seed=settings.seed or 0,
        env_parameters=settings.env_parameters, worker_id=settings.worker_id if worker_id is None else worker_id,
        allow_child=allow_child)
    bridge.on_launch = on_launch
    return UnityAdapter(bridge)
