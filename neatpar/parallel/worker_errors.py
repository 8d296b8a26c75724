"""The one-line errors for what goes wrong in a pool worker before it runs a task: a start that
failed or died (named by the stage it reached), or a task it could not load. None of them is a
genome's fault, so the evaluator raises them as they are."""
from __future__ import annotations

from typing import Callable

from ..errors import TransferError, UnguardedScriptError, WorkerStartError, one_line
from .messages import LoadFailed, StartFailed, StartStage
from .serialize import main_script_path, spawn_reimports_main

START_ADVICE = (
    "spawn re-runs the top level of your main script in every worker: keep live handles "
    "(environment connections, sockets, servers) and the pool itself under `if __name__ == \"__main__\":`"
)
IMPORT_ADVICE = ("define it at the top level of a module the workers can import (not under "
                 "`if __name__ == \"__main__\":`)")


def load_advice(cause: str) -> str:
    """Advice for an object a worker could not load: only a failed import has a general fix."""
    failed_import = cause.startswith(("AttributeError: Can't get attribute", "ModuleNotFoundError", "ImportError"))
    return f"; {IMPORT_ADVICE}" if failed_import else ""


def start_failed(message: StartFailed) -> Exception:
    """The error for a worker that reported a failure before it was ready."""
    summary = one_line(message.summary)
    if message.stage is StartStage.UNGUARDED:
        return UnguardedScriptError(f"pool worker could not start: {summary}")
    if message.stage is StartStage.INITIALIZER:
        return WorkerStartError(f"pool worker initializer failed: {summary}")
    if message.stage is StartStage.LOAD:
        name, _, cause = summary.partition(": ")
        return TransferError(f"pool workers cannot load {name}: {cause}{load_advice(cause)}")
    if spawn_reimports_main():
        return UnguardedScriptError(f"pool worker failed while re-importing your main script ({summary}); {START_ADVICE}")
    return WorkerStartError(f"pool worker failed while starting ({summary})")


def died_starting(head: str, stage: StartStage, loading: str, initializer: Callable | None) -> WorkerStartError:
    """The error for a worker that exited before it was ready: `head` says which and how, `stage`
    how far it got, `loading` what it was loading if it got that far."""
    if stage is StartStage.SPAWN:
        return WorkerStartError(f"{head} while its interpreter was starting, before any of your code ran")
    if stage is StartStage.IMPORT and not spawn_reimports_main():
        return WorkerStartError(f"{head} while starting, before it loaded what the pool sent")
    if stage is StartStage.IMPORT:
        script = main_script_path()
        return UnguardedScriptError(f"{head} while re-importing your main script{f' {script}' if script else ''}; "
                                    f"spawn re-runs its top level in every worker: keep what must run only in the "
                                    f"main process under `if __name__ == \"__main__\":`")
    if stage is StartStage.LOAD:
        return WorkerStartError(f"{head} while loading {loading} (unpickling it)")
    if stage is StartStage.UNGUARDED:
        return WorkerStartError(f"{head} while clearing your main module's live globals")
    return WorkerStartError(f"{head} in its initializer {getattr(initializer, '__qualname__', repr(initializer))}")


def task_not_loaded(index: int, message: LoadFailed) -> TransferError:
    """The error for a task whose function or arguments worker `index` could not unpickle."""
    cause = one_line(message.summary)
    return TransferError(f"pool worker {index} cannot load task {message.task_id} (its function and arguments): "
                         f"{cause}{load_advice(cause)}")
