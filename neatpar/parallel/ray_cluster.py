"""Joining or starting a Ray cluster, for both Ray backends (ParallelEvaluator's tasks and env-host
actors). Ray is an optional extra (`pip install 'neatpar[ray]'`); asking for it without Ray
installed is a ConfigError that says so. neatpar joins the cluster at `address` (or RAY_ADDRESS),
or starts a local instance, and shuts down only an instance it started itself.
"""
from __future__ import annotations

import contextlib
import logging
import os
import pickle
import random
from typing import Any, NamedTuple

from ..errors import ConfigError, one_line

RAY_PIN = "ray==2.60.0"


def require_ray():
    """The ray module, or a ConfigError that says what to install."""
    try:
        import ray
    except ImportError:
        raise ConfigError(f"the Ray backend needs Ray, which is not installed: pip install 'neatpar[ray]' "
                          f"(installs {RAY_PIN})") from None
    return ray


@contextlib.contextmanager
def _global_random_kept():
    """ray.init and ray.shutdown draw from the global `random`, which neat-python's reproduction
    uses: without this, a seeded run would depend on the backend."""
    saved = random.getstate()
    try:
        yield
    finally:
        random.setstate(saved)


def connect(address: str | None):
    """Join the Ray cluster at `address` (or RAY_ADDRESS), else start a local instance.
    Returns (ray, started): `started` is True when this call started the instance."""
    ray = require_ray()
    if ray.is_initialized():
        return ray, False
    try:
        with _global_random_kept():
            ray.init(address=address, include_dashboard=False, logging_level=logging.WARNING,
                     configure_logging=False)
    except ConnectionError as exc:
        raise ConfigError(f"cannot reach the Ray cluster at {address or os.environ.get('RAY_ADDRESS')}: "
                          f"{one_line(exc, limit=300)}; start it with `ray start --head` or fix "
                          f"--address") from None
    return ray, True


@contextlib.contextmanager
def worker_logs_silenced():
    """Ray prints its workers' output and the raylets' error messages ("(raylet) A worker died or
    was killed ...") on the driver's stdout and stderr; a quiet run wants none of it. Turned off
    here with the switch Ray's own debugger uses (ray._private.worker._worker_logs_enabled; Ray is
    pinned), and back on afterwards."""
    require_ray()
    import ray._private.worker as ray_worker
    saved = ray_worker._worker_logs_enabled
    ray_worker._worker_logs_enabled = False
    try:
        yield
    finally:
        ray_worker._worker_logs_enabled = saved


def shutdown(ray) -> None:
    """Stop the Ray instance this process started."""
    with _global_random_kept():
        ray.shutdown()


class Kept(NamedTuple):
    """A value kept while the bytes (or digest) it was made from stay the same."""
    key: bytes
    value: Any


_config_read = Kept(b"", None)


def config_from(payload: bytes) -> Any:
    """The neat config `payload` holds, unpickled once per Ray worker while the bytes stay the same."""
    global _config_read
    if payload != _config_read.key:
        _config_read = Kept(payload, pickle.loads(payload))
    return _config_read.value


def first_line(exc: BaseException) -> str:
    """The first line of an exception's text (Ray's errors carry whole tracebacks)."""
    return one_line(exc, first=True, limit=300)
