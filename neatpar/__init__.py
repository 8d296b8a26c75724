"""neatpar: parallel NEAT neuroevolution on Unity ML-Agents simulators and Gymnasium environments.

Importing neatpar changes nothing outside it: what the spawn pool needs in multiprocessing and
threading is installed when the first pool starts. It declares the environments' live handles to
the pool (envs/live_handles.py), so a script that makes its own UnityEnvironment is guarded too,
and its NEAT step classes to the settings (config/files.py: `neat_step = neatpar`).
"""
from .errors import (
    ClearedGlobalError,
    ConfigError,
    FitnessError,
    GenomeEvaluationError,
    LiveHandleError,
    NeatparError,
    SimulatorError,
    TransferError,
    UnguardedScriptError,
    WorkerStartError,
)
from .config.files import NeatStepClasses as _NeatStepClasses, declare_neat_step as _declare_neat_step
from .config.settings_model import Settings
from .envs import live_handles as _live_handles
from .evolution import Genome, Reproduction, SpeciesSet
from .parallel.parallel_evaluator import ParallelEvaluator
from .parallel.pool import Pool
from .version import __version__

_live_handles.declare()
_declare_neat_step("neatpar", _NeatStepClasses(Genome, Reproduction, SpeciesSet))


def __getattr__(name):
    # The evaluator pulls in the runner, env hosts and Ray's glue: imported only when asked for.
    if name in ("EnvEvaluator", "UnityEvaluator"):
        from .episodes import env_evaluator
        return getattr(env_evaluator, name)
    if name in ("evolve", "resume", "RunResult", "RunPhase"):   # a run with its folder: the evaluator's imports
        from .run import lifecycle, start
        return getattr(start if name in ("evolve", "resume") else lifecycle, name)
    if name in ("SearchEvaluator", "MapElitesReproduction"):   # searches: numpy and the C k-NN, on first use
        from . import search
        return getattr(search, name)
    raise AttributeError(f"module 'neatpar' has no attribute {name!r}")


__all__ = [
    "ClearedGlobalError",
    "ConfigError",
    "EnvEvaluator",
    "FitnessError",
    "Genome",
    "GenomeEvaluationError",
    "LiveHandleError",
    "MapElitesReproduction",
    "NeatparError",
    "ParallelEvaluator",
    "Pool",
    "Reproduction",
    "RunPhase",
    "RunResult",
    "SearchEvaluator",
    "Settings",
    "SimulatorError",
    "SpeciesSet",
    "TransferError",
    "UnguardedScriptError",
    "UnityEvaluator",
    "WorkerStartError",
    "evolve",
    "resume",
]
