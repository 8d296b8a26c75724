"""The pool's worker lifecycle: the records of a worker slot and its task, and the one table
(TRANSITIONS) of the messages each worker state accepts and where each leads, with its two checks."""
from __future__ import annotations

import enum
import time
from typing import Any, NamedTuple

from ..errors import PoolProtocolError
from .messages import Done, Failed, Items, LoadFailed, Reached, Ready, Retire, StartFailed, StartStage


class WorkerState(enum.Enum):
    """Where a pool worker is: starting (until Ready), idle, running a task, or gone (its process
    ended)."""
    STARTING = "starting"
    IDLE = "idle"
    BUSY = "busy"
    GONE = "gone"


class Dispatched(NamedTuple):
    """The pool handed an idle worker a task (an event of the pool's, not a worker's message)."""


class Ended(NamedTuple):
    """The worker's process ended: it exited or died, or the pool killed or stopped it."""


# The state machine, one row per state: the messages a worker in that state may send (and the
# pool's own events) and the state each leads to. A message not in its worker's row is out of turn.
TRANSITIONS: dict[WorkerState, dict[type, WorkerState]] = {
    WorkerState.STARTING: {Reached: WorkerState.STARTING, Ready: WorkerState.IDLE, StartFailed: WorkerState.GONE,
                           Ended: WorkerState.GONE},
    WorkerState.IDLE: {Dispatched: WorkerState.BUSY, Retire: WorkerState.GONE, Ended: WorkerState.GONE},
    WorkerState.BUSY: {Items: WorkerState.BUSY, Done: WorkerState.IDLE, Failed: WorkerState.IDLE,
                       LoadFailed: WorkerState.IDLE,
                       Retire: WorkerState.GONE,   # maxtasksperchild reached; the task sent meanwhile is queued again
                       Ended: WorkerState.GONE},
    WorkerState.GONE: {},
}
POOL_EVENTS = (Dispatched, Ended)   # the pool's own events: never a worker's message


class PoolTask:
    """A task queued or running: its pickled payload, the shared objects it needs, the worker slot
    it is pinned to (None: any), its progress timeout and the AsyncResult it finishes."""
    __slots__ = ("id", "payload", "refs", "worker", "timeout", "result")

    def __init__(self, task_id: int, payload: bytes, refs: list[int], worker: int | None, timeout: float | None,
                 result: Any):
        self.id, self.payload, self.refs = task_id, payload, refs
        self.worker, self.timeout, self.result = worker, timeout, result


class PoolWorker:
    """A worker slot's process and channel, its state, its task, the shared objects it holds and
    how far it is: in starting (`reached`) and in its task (`seen_position`, `last_progress`)."""
    __slots__ = ("index", "process", "conn", "state", "task", "refs", "last_progress", "seen_position", "reached")

    def __init__(self, index: int, process, conn):
        self.index, self.process, self.conn = index, process, conn
        self.state = WorkerState.STARTING
        self.reached = Reached(StartStage.SPAWN, -1)  # how far it got while starting
        self.task: PoolTask | None = None
        self.refs: set[int] = set()
        self.last_progress = time.monotonic()
        self.seen_position = 0


def check_turn(w: PoolWorker, message) -> None:
    """A PoolProtocolError for a message the worker's state does not accept, or one about another
    task than the worker's."""
    accepted = [kind.__name__ for kind in TRANSITIONS[w.state] if kind not in POOL_EVENTS]
    task_id = getattr(message, "task_id", None)
    if type(message) in TRANSITIONS[w.state] and type(message) not in POOL_EVENTS and (
            task_id is None or (w.task is not None and task_id == w.task.id)):
        return
    doing = f" with task {w.task.id}" if w.task is not None else ""
    about = f" about task {task_id}" if task_id is not None else ""
    raise PoolProtocolError(
        f"pool worker {w.index} (pid {w.process.pid}) sent {type(message).__name__}{about} while "
        f"{w.state.value}{doing}, out of turn ({'an' if w.state is WorkerState.IDLE else 'a'} {w.state.value} "
        f"worker sends {' or '.join(accepted) or 'nothing'}): "
        f"the pool stops; a task must not send on its worker's channel (neatpar.parallel.workers.send)")


def step(w: PoolWorker, event) -> None:
    """The one place a worker's state changes: to where TRANSITIONS leads from its state on `event`
    (a message it sent, or Dispatched or Ended)."""
    after = TRANSITIONS[w.state].get(type(event))
    if after is None:
        raise PoolProtocolError(f"pool worker {w.index} cannot take {type(event).__name__} while {w.state.value}")
    w.state = after
