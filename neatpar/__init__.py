"""neatpar: parallel NEAT neuroevolution, with a bridge to Unity ML-Agents simulators.

Importing neatpar changes nothing outside it: what the spawn pool needs in multiprocessing and
threading is installed when the first pool starts.
"""
from .errors import (
    ClearedGlobalError,
    ConfigError,
    FitnessError,
    GenomeEvaluationError,
    LiveHandleError,
    NeatparError,
    SimulatorError,
    UnguardedScriptError,
    WorkerStartError,
)
from .parallel.evaluator import ParallelEvaluator
from .parallel.pool import Pool

__version__ = "0.2.0"


def __getattr__(name):
    # The Unity side pulls in mlagents-envs and gRPC: imported only when asked for.
    if name == "UnityEvaluator":
        from .run.evaluator import UnityEvaluator
        return UnityEvaluator
    if name == "Settings":
        from .settings import Settings
        return Settings
    raise AttributeError(f"module 'neatpar' has no attribute {name!r}")


__all__ = [
    "ClearedGlobalError",
    "ConfigError",
    "FitnessError",
    "GenomeEvaluationError",
    "LiveHandleError",
    "NeatparError",
    "ParallelEvaluator",
    "Pool",
    "Settings",
    "SimulatorError",
    "UnguardedScriptError",
    "UnityEvaluator",
    "WorkerStartError",
]
