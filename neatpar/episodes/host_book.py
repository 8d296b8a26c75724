"""The main side's book of the parts running on env hosts, shared by LocalHosts and RayHosts:
which part runs under which handle (an AsyncResult, an ObjectRef) and where, how far each has got,
and what a finished one gave back."""
from __future__ import annotations

from typing import Any, NamedTuple

from ..errors import NeatparError
from .hosts import PartProgress, PartResult


class Running(NamedTuple):
    """A part handed to a host: the scheduler's ticket, and the host's index when it is known."""
    ticket: Any
    host: int | None
    generation: int
    part: int


class Finished(NamedTuple):
    """A part that ended on a host: its ticket, and what the host returned or the error that ended it."""
    ticket: Any
    result: PartResult | None
    error: BaseException | None


def host_error(cause: BaseException | None, otherwise: BaseException) -> BaseException:
    """A one-line error raised in a host (a bad config, a simulator that failed) as it is; any
    other failure as `otherwise`."""
    return cause if isinstance(cause, NeatparError) else otherwise


class HostBook:
    """Running parts by handle, and the most each has reported (never less than before: a host
    moving on to its next part does not make a part go back)."""

    def __init__(self):
        self._running: dict[Any, Running] = {}
        self._seen: dict[Any, PartProgress] = {}  # ticket -> the most its running part has reported

    def _start(self, handle: Any, ticket: Any, generation: int, part: int, host: int | None = None) -> None:
        self._running[handle] = Running(ticket, host, generation, part)
        self._seen[ticket] = PartProgress()

    def _finish(self, handle: Any) -> Running:
        running = self._running.pop(handle)
        self._seen.pop(running.ticket, None)
        return running

    def _keep(self, ticket: Any, generation: int, part: int, episodes: int, scored_steps: int) -> None:
        """A running part's progress from its host's report (an earlier part's report, or less than
        the part reported before, changes nothing)."""
        seen = self._seen.get(ticket)
        if seen is not None and self._where().get(ticket) == (generation, part):
            self._seen[ticket] = PartProgress(max(seen.episodes, episodes), max(seen.scored_steps, scored_steps))

    def _where(self) -> dict[Any, tuple[int, int]]:
        """Ticket -> (generation, part) of each running part."""
        return {r.ticket: (r.generation, r.part) for r in self._running.values()}

    def progress(self) -> dict[Any, PartProgress]:
        """How far each running part is, by ticket."""
        return dict(self._seen)

    def _forget(self) -> None:
        self._running.clear()
        self._seen.clear()
