"""Launching the simulator builds through the real mlagents-envs UnityEnvironment in tests,
with free ports and guaranteed clean-up."""
import contextlib
import os
import random
import socket

from mlagents_envs.environment import UnityEnvironment

from conftest import ROOT, wait_gone

BUILDS = os.path.join(ROOT, "unity_builds")
BASE_PORT = 5005


def free_worker_id() -> int:
    """A worker_id whose port (5005 + id) is free on this machine right now."""
    for _ in range(200):
        worker_id = random.randint(100, 3000)
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", BASE_PORT + worker_id))
                return worker_id
            except OSError:
                continue
    raise RuntimeError("no free port for a simulator")


@contextlib.contextmanager
def simulator(build="ball", args=(), seed=0, side_channels=None, log_folder=None, timeout_wait=30):
    """A UnityEnvironment on a simulator build; closed (and its process reaped) on exit."""
    env = UnityEnvironment(os.path.join(BUILDS, build), worker_id=free_worker_id(), seed=seed,
                           no_graphics=True, additional_args=list(args), side_channels=side_channels or [],
                           log_folder=log_folder, timeout_wait=timeout_wait)
    process = env._process
    try:
        yield env
    finally:
        try:
            env.close()
        finally:
            if process is not None and process.poll() is None:
                process.kill()
            if process is not None:
                process.wait()
                assert not wait_gone([process.pid], 2.0)
