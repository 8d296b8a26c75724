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
from .pool import Pool

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
    "UnguardedScriptError",
    "WorkerStartError",
]
