"""Env hosts as local processes: N spawn workers of a neatpar Pool, one simulator each.

Each host (a pool worker) creates its simulator lazily with its own port, kills it on SIGTERM and
when the main process dies, and publishes the simulator's PID and start time in a shared array,
so that the main process can kill the simulator of a host it lost (and only that process, even
if the PID was reused).
"""
from __future__ import annotations

import atexit
import multiprocessing
import os
import signal
from typing import Any

from ..errors import HostLost, NeatparError, RemoteError, WorkerDied
from ..parallel import workers
from ..parallel.pool import Pool
from .hosts import HostSetup, HostState, process_start_time, silence_limit

_host: HostState | None = None


def _host_init(setup: HostSetup, cells) -> None:
    """Pool initializer of a local env host: its state, and cleanup on every way out."""
    global _host
    index = workers.slot()

    def publish(pid: int) -> None:
        cells[2 * index], cells[2 * index + 1] = pid, process_start_time(pid) or 0

    _host = HostState(setup, index, on_launch=publish)
    signal.signal(signal.SIGTERM, _on_sigterm)
    workers.on_parent_exit(_host.kill)
    atexit.register(_host.close)


def _on_sigterm(signum, frame) -> None:
    if _host is not None:
        _host.kill()
    os._exit(128 + signum)


def _host_part(config, plan, genomes: list, generation: int, part: int):
    """A pool task in a local env host."""
    return _host.evaluate(config, plan, genomes, generation, part, heartbeat=workers.heartbeat)


def _host_survey() -> int:
    """A pool task in a local env host: its game's population agents."""
    return _host.survey()


class LocalHosts:
    """N env hosts as spawn processes of a neatpar Pool (one simulator each)."""

    def __init__(self, setup: HostSetup, count: int):
        self.count = count
        self.timeout = silence_limit(setup.settings)  # a host beats once per simulator step
        self._cells = multiprocessing.get_context("spawn").RawArray("q", 2 * count)  # per host: sim PID, start
        self.pool = Pool(count, _host_init, (setup, self._cells))
        self._refs: tuple = ()
        self._running: dict = {}  # AsyncResult -> ticket
        self._agents: int | None = None

    def agents(self) -> int | None:
        """The agents of the population behaviors in a host's game, counted once by one host; None
        when the count failed (its host was lost: it is replaced, and parts follow the default)."""
        if self._agents is None:
            result = self.pool.apply_async(_host_survey, timeout=self.timeout)
            try:
                self._agents = result.get()
            except WorkerDied as error:
                self._kill_simulator(error.worker)
                self._agents = 0
            except RemoteError as error:
                raise error.__cause__ if isinstance(error.__cause__, NeatparError) else error
        return self._agents or None

    def prepare(self, config_bytes: bytes, plan: Any) -> None:
        """The generation's config and (champion, files), sent once to each host that needs them."""
        for ref in self._refs:
            self.pool.unshare(ref)
        self._refs = (self.pool.share(None, pickled=config_bytes), self.pool.share(plan))

    def submit(self, ticket: Any, genomes: list, generation: int, part: int) -> None:
        result = self.pool.apply_async(_host_part, (*self._refs, genomes, generation, part), timeout=self.timeout)
        self._running[result] = ticket

    def wait(self, timeout: float) -> list[tuple[Any, Any, BaseException | None]]:
        """(ticket, value, error) of the parts that finished; a lost host's error is HostLost."""
        done = self.pool.wait(list(self._running), timeout=timeout, return_when_any=True)
        out = []
        for result in done:
            ticket = self._running.pop(result)
            error = result.error
            if isinstance(error, WorkerDied):
                self._kill_simulator(error.worker)
                error = HostLost(str(error))
            elif isinstance(error, RemoteError) and isinstance(error.__cause__, NeatparError):
                error = error.__cause__  # a one-line error raised in the host (bad config, simulator failed)
            out.append((ticket, None if error else result.get(), error))
        return out

    def _kill_simulator(self, index: int) -> None:
        """Kill the simulator host `index` had started, if it still runs (checked by PID and start
        time, so a later process that got the same PID is left alone)."""
        pid, started = self._cells[2 * index], self._cells[2 * index + 1]
        self._cells[2 * index] = 0
        if pid and process_start_time(pid) == started:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    @property
    def pids(self) -> list[int]:
        """PIDs of the live host processes."""
        return self.pool.pids

    @property
    def simulator_pids(self) -> list[int]:
        """PIDs of the simulators the hosts have started (0 where none runs)."""
        return [self._cells[2 * i] for i in range(self.count)]

    def close(self) -> None:
        """Idle hosts close their simulators and exit; busy ones are stopped at once."""
        try:
            if self._running:
                self.pool.terminate()
            else:
                self.pool.close()
        finally:
            self._running.clear()
            for index in range(self.count):  # whatever a host could not close on its way out
                self._kill_simulator(index)
