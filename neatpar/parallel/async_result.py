"""The future result of one pool task, as the caller holds it: ready, its value or error, and the
items a generator task has streamed so far; waiting on it drives its pool."""
from __future__ import annotations

from typing import Any, Protocol


class Waiter(Protocol):
    """What a result waits on: its pool (pool.py's Pool), driven until the result is ready."""

    def wait(self, results: list, timeout: float | None = None) -> list: ...


class AsyncResult:
    """The future result of one task; `partial` holds the items a generator task has yielded."""

    def __init__(self, pool: Waiter, task_id: int):
        self._pool = pool
        self.task_id = task_id
        self.partial: list = []
        self._done = False
        self._value: Any = None
        self._error: BaseException | None = None

    def ready(self) -> bool:
        """The task has finished, with a value or an error."""
        return self._done

    def successful(self) -> bool:
        """The finished task returned (did not fail); a ValueError before it finished."""
        if not self._done:
            raise ValueError(f"task {self.task_id} is not ready")
        return self._error is None

    def wait(self, timeout: float | None = None) -> None:
        """Drive the pool until the task finished or `timeout` passed."""
        self._pool.wait([self], timeout)

    def get(self, timeout: float | None = None) -> Any:
        """Wait for the result; re-raise the task's error (with the worker's traceback)."""
        self.wait(timeout)
        if not self._done:
            raise TimeoutError(f"task {self.task_id} not finished within {timeout} s")
        if self._error is not None:
            raise self._error
        return self._value

    @property
    def error(self) -> BaseException | None:
        """The task's error once it failed, else None."""
        return self._error

    def _finish(self, value: Any = None, error: BaseException | None = None) -> None:
        self._done, self._value, self._error = True, value, error
