"""neatpar: parallel NEAT neuroevolution, with a bridge to Unity ML-Agents simulators."""
from .errors import (
    ClearedGlobalError,
    ConfigError,
    FitnessError,
    GenomeEvaluationError,
    LiveHandleError,
    NeatparError,
    UnguardedScriptError,
    WorkerStartError,
)
from .evaluator import ParallelEvaluator
from .handles import install_exit_guard
from .pool import Pool

install_exit_guard()


def __getattr__(name):
    # UnityEvaluator pulls in mlagents-envs and gRPC; import it only when asked for.
    if name == "UnityEvaluator":
        from .runner import UnityEvaluator
        return UnityEvaluator
    raise AttributeError(f"module 'neatpar' has no attribute {name!r}")


__version__ = "0.1.0"

__all__ = [
    "ClearedGlobalError",
    "ConfigError",
    "FitnessError",
    "GenomeEvaluationError",
    "LiveHandleError",
    "NeatparError",
    "ParallelEvaluator",
    "Pool",
    "UnityEvaluator",
    "UnguardedScriptError",
    "WorkerStartError",
]
