"""Env hosts as local processes: N spawn workers of a neatpar Pool, one simulator each.

Each host (a pool worker) creates its simulator lazily with its own port, kills it on SIGTERM and
when the main process dies, and publishes in a shared array (HostCells) the simulator's PID and
start time (processes.py), so that the main process can kill the simulator of a host it lost (and
only that process, even if the PID was reused), and how far its part is. After every simulator step
it beats through the pool's progress cell (the pool's timeout sees it alive) and writes the part's
episodes and scored decisions so far into its cells. Stopping the hosts, the main process kills
their simulators too: where a stopped process runs none of its code (Windows ends a process without
a signal), that is what ends their games.
"""
from __future__ import annotations

import atexit
import multiprocessing
import os
import signal
from typing import Any

from .. import processes
from ..errors import HostLost, RemoteError, WorkerDied
from ..parallel import workers
from ..parallel.pool import Pool
from .host_book import Finished, HostBook, host_error
from .hosts import HostProgress, HostSetup, HostState, PartProgress, silence_limit
from .generation_plan import Compiled


class HostCells:
    """Per host, in shared memory: its simulator's PID and start time (processes.start_stamp), and
    the generation, part, episodes and scored decisions of the part it runs (written by the host,
    read by the main process; each cell is one aligned 64-bit value)."""
    PID, START, GENERATION, PART, EPISODES, SCORED = range(6)
    SIZE = 6

    def __init__(self, count: int):
        self.array = multiprocessing.get_context("spawn").RawArray("q", self.SIZE * count)
        for index in range(count):
            self.array[self.SIZE * index + self.PART] = -1

    def get(self, index: int, cell: int) -> int:
        return self.array[self.SIZE * index + cell]

    def set(self, index: int, cell: int, value: int) -> None:
        self.array[self.SIZE * index + cell] = value

    def report(self, index: int, report: HostProgress) -> None:
        """A host's progress; a new part's cells are cleared before they name it."""
        base = self.SIZE * index
        if self.array[base + self.PART] != report.part or self.array[base + self.GENERATION] != report.generation:
            self.array[base + self.PART] = -1
            self.array[base + self.GENERATION] = report.generation
        self.array[base + self.EPISODES] = report.episodes
        self.array[base + self.SCORED] = report.scored_steps
        self.array[base + self.PART] = report.part


_host: HostState | None = None
_cells: HostCells | None = None


def _host_init(setup: HostSetup, cells: HostCells) -> None:
    """Pool initializer of a local env host: its state, and cleanup on every way out."""
    global _host, _cells
    index = workers.slot()

    def publish(pid: int) -> None:
        cells.set(index, HostCells.PID, pid)
        cells.set(index, HostCells.START, processes.start_stamp(pid))

    _host, _cells = HostState(setup, index, on_launch=publish), cells
    signal.signal(signal.SIGTERM, _on_sigterm)
    workers.on_parent_exit(_host.kill)
    atexit.register(_host.close)


def _on_sigterm(signum, frame) -> None:
    if _host is not None:
        _host.kill()
    processes.kill_children()  # a game still being launched, which the bridge does not know yet
    os._exit(128 + signum)


def _host_part(config, compiled: Compiled, generation: int, part: int):
    """A pool task in a local env host."""
    return _host.evaluate(config, compiled, generation, part, on_step=_on_step)


def _on_step(report: HostProgress) -> None:
    workers.heartbeat()
    _cells.report(_host.index, report)


def _host_survey():
    """A pool task in a local env host: its game's population agents."""
    return _host.survey()


class LocalHosts(HostBook):
    """N env hosts as spawn processes of a neatpar Pool (one simulator each)."""

    def __init__(self, setup: HostSetup, count: int):
        super().__init__()
        self.count = count
        self.timeout = silence_limit(setup.settings)  # a host beats once per simulator step
        self._cells = HostCells(count)
        self.pool = Pool(count, _host_init, (setup, self._cells))
        self._refs: tuple = ()
        self._agents: int | None = None
        self.layouts: dict = {}   # behavior -> Layout, as the host that counted the agents found them

    def agents(self) -> int | None:
        """The agents of the population behaviors in a host's game, counted once by one host; None
        when the count failed (its host was lost: it is replaced, and parts follow the default)."""
        if self._agents is None:
            result = self.pool.apply_async(_host_survey, timeout=self.timeout)
            try:
                found = result.get()
                self._agents, self.layouts = found.agents, found.layouts
            except WorkerDied as error:
                self._kill_simulator(error.worker)
                self._agents = 0
            except RemoteError as error:
                raise host_error(error.__cause__, error)
        return self._agents or None

    def prepare(self, config_bytes: bytes) -> None:
        """The run's neat config, installed once in each host that needs it (hosts read its input
        and output counts to make their runner; the genomes arrive compiled)."""
        for ref in self._refs:
            self.pool.unshare(ref)
        self._refs = (self.pool.share(None, pickled=config_bytes),)

    def free(self) -> int:
        """Hosts without a part (the pool replaces a lost host itself: every host can take one)."""
        return self.count - len(self._running)

    def submit(self, ticket: Any, compiled: Compiled, generation: int, part: int) -> None:
        result = self.pool.apply_async(_host_part, (*self._refs, compiled, generation, part), timeout=self.timeout)
        self._start(result, ticket, generation, part)

    def progress(self) -> dict[Any, PartProgress]:
        """How far each running part is, by ticket, from the hosts' cells."""
        running = {where: ticket for ticket, where in self._where().items()}
        cells = self._cells
        for index in range(self.count):
            generation, part = cells.get(index, HostCells.GENERATION), cells.get(index, HostCells.PART)
            ticket = running.get((generation, part))
            if ticket is not None:
                self._keep(ticket, generation, part, cells.get(index, HostCells.EPISODES),
                           cells.get(index, HostCells.SCORED))
        return super().progress()

    def wait(self, timeout: float) -> list[Finished]:
        """The parts that finished; a lost host's error is HostLost."""
        done = self.pool.wait(list(self._running), timeout=timeout, return_when_any=True)
        out = []
        for result in done:
            ticket = self._finish(result).ticket
            error = result.error
            if isinstance(error, WorkerDied):
                self._kill_simulator(error.worker)
                error = HostLost(str(error))
            elif isinstance(error, RemoteError):
                error = host_error(error.__cause__, error)
            out.append(Finished(ticket, None if error else result.get(), error))
        return out

    def _kill_simulator(self, index: int) -> None:
        """Kill the simulator host `index` had started, if it still runs (checked by PID and start
        time, so a later process that got the same PID is left alone)."""
        cells = self._cells
        pid, started = cells.get(index, HostCells.PID), cells.get(index, HostCells.START)
        cells.set(index, HostCells.PID, 0)
        cells.set(index, HostCells.PART, -1)  # its part runs again elsewhere: its progress no longer counts
        if pid:
            processes.kill(pid, started)

    @property
    def pids(self) -> list[int]:
        """PIDs of the live host processes."""
        return self.pool.pids

    @property
    def simulator_pids(self) -> list[int]:
        """PIDs of the simulators the hosts have started (0 where none runs)."""
        return [self._cells.get(i, HostCells.PID) for i in range(self.count)]

    def kill(self) -> None:
        """Stop every host and simulator now."""
        try:
            self.pool.terminate()
        finally:
            self._forget()
            for index in range(self.count):
                self._kill_simulator(index)

    def close(self) -> None:
        """Idle hosts close their simulators and exit; busy ones are stopped at once."""
        try:
            if self._running:
                self.pool.terminate()
            else:
                self.pool.close()
        finally:
            self._forget()
            for index in range(self.count):  # whatever a host could not close on its way out
                self._kill_simulator(index)
