"""The environments' live handles, declared to the pool (parallel/declarations.py): what a pool
worker clears or refuses, and what must close before Python's exit joins threads.

Declared when neatpar is imported (by the package's __init__), so a script that creates an
ML-Agents UnityEnvironment itself and only uses neatpar's pool is guarded too. Nothing here
imports mlagents-envs: classes are matched by module and class name.
"""
from __future__ import annotations

import gc
import sys

from ..parallel.declarations import (HandleClass, ImportRefusal, declare_exit_hook, declare_handle_class,
                                     declare_import_refusal)

MLAGENTS_ENVIRONMENT = "mlagents_envs.environment"

ML_AGENTS_HANDLES = (
    HandleClass(MLAGENTS_ENVIRONMENT, "UnityEnvironment", "Unity environment connection", connecting=True),
    HandleClass("mlagents_envs.base_env", "BaseEnv", "ML-Agents environment connection", connecting=True),
)

# Left alone, a module-level UnityEnvironment would launch a second game on the parent's port in
# every worker (the stock server's SO_REUSEPORT even lets it bind that port).
UNITY_AT_IMPORT = ImportRefusal(
    MLAGENTS_ENVIRONMENT, "UnityEnvironment",
    "UnityEnvironment() ran at import time in a neatpar pool worker (spawn re-imports your main script in "
    "every worker); the connection must be created by the main process only")


def close_environments_before_thread_shutdown() -> None:
    """Close every open mlagents UnityEnvironment before Python joins its threads at exit.

    mlagents-envs 0.28 closes an environment from an atexit handler, but Python first joins the
    gRPC server's worker threads, one of which waits for the main thread's next reply to the game:
    a script that ends (often by an exception) without env.close() hangs forever at exit. Closing
    first answers the game with "quit" and lets the thread end, as env.close() would.
    """
    environment = sys.modules.get(MLAGENTS_ENVIRONMENT)
    if environment is None:
        return
    for obj in gc.get_objects():
        if isinstance(obj, environment.UnityEnvironment) and getattr(obj, "_loaded", False):
            try:
                obj._close(timeout=5)
            except Exception:  # noqa: BLE001 - best effort at exit
                pass


def declare() -> None:
    """Declare the environments' handles, refusals and exit hook to the pool (idempotent)."""
    for handle in ML_AGENTS_HANDLES:
        declare_handle_class(handle)
    declare_import_refusal(UNITY_AT_IMPORT)
    declare_exit_hook(close_environments_before_thread_shutdown)
