"""A local Ray cluster for a test module: 2 CPUs, token authentication off, workers that import
the tests' helper modules."""
import contextlib
import os

from .paths import TESTS

os.environ.setdefault("RAY_AUTH_MODE", "disabled")  # before Ray is imported: no token file for test clusters
import ray  # noqa: E402  (the ray extra: make test installs it)


@contextlib.contextmanager
def local_cluster(**env_vars: str):
    """A local Ray instance of 2 CPUs whose workers see `env_vars` and the tests' PYTHONPATH."""
    ray.init(num_cpus=2, include_dashboard=False, configure_logging=False,
             runtime_env={"env_vars": {"PYTHONPATH": TESTS, **env_vars}})
    try:
        yield ray
    finally:
        ray.shutdown()
