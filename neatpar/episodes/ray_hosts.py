"""Env hosts as Ray actors: one actor per simulator, placed anywhere on a Ray cluster.

Each actor owns a HostState (hosts.py), so each simulator connection is created inside the actor
that uses it, on whichever node runs it. The actor's methods run in threads
(max_concurrency=2) so that `stop` can kill the simulator, and `progress` be read, while a part is
running. `progress` answers the host's latest report (HostProgress: its simulator steps, and the
episodes and scored decisions of its part so far), asked about once a second. A dead actor is
replaced; a busy actor whose simulator makes no step for the silence limit is killed, and its
part runs again on a new actor.

Parts go only to actors that are placed (their `ready` call answered): a replacement that no node
can take (a cluster with no free CPU that lost a node) holds no work, and the generation runs on
the actors that are placed; one warning says so when a replacement waits for a node longer than
PLACEMENT_NOTE_SECONDS, and when no actor at all is placed for the silence limit the run stops
with an error instead of waiting for ever. A replacement joins as soon as a node takes it.
"""
from __future__ import annotations

import logging
import os
import time
from collections import deque
from typing import Any

from ..errors import ConfigError, HostLost, NeatparError, RemoteError
from ..parallel.ray_cluster import config_from, connect, first_line, shutdown
from .host_book import Finished, HostBook, host_error
from .hosts import MAX_HOST_LOSSES, PROGRESS_SECONDS, HostProgress, HostState, PartResult, silence_limit
from .generation_plan import Compiled

STOP_SECONDS = 10.0
PLACEMENT_NOTE_SECONDS = 5.0  # a replacement not placed after this long is reported (once)
log = logging.getLogger("neatpar")


class EnvHostActor:
    """The body of an env host actor (wrapped by ray.remote in RayHosts)."""

    def __init__(self, setup, index: int):
        self.state = HostState(setup, index)

    def evaluate(self, config_bytes: bytes, compiled: Compiled, generation: int, part: int) -> PartResult:
        return self.state.evaluate(config_from(config_bytes), compiled, generation, part)

    def survey(self):
        return self.state.survey()

    def progress(self) -> HostProgress:
        """The host's latest report (updated after every simulator step while a part runs)."""
        return self.state.report

    def ready(self) -> bool:
        """Answers once the actor is placed on a node and constructed."""
        return True

    def where(self) -> tuple[str, int, int | None]:
        """(node address, actor PID, simulator PID or None)."""
        import ray
        return ray.util.get_node_ip_address(), os.getpid(), self.state.environment.process_pid

    def stop(self, graceful: bool) -> None:
        """Close the simulator (graceful) or kill it (while a part may be running)."""
        (self.state.close if graceful else self.state.kill)()


class RayHosts(HostBook):
    """N env hosts as Ray actors, one simulator each; the scheduler's backend (see hosts.py)."""

    def __init__(self, setup, count: int, address: str | None = None):
        super().__init__()
        self.ray, self._started = connect(address)
        cpus = int(self.ray.cluster_resources().get("CPU", 0))
        if count > cpus:
            self._shutdown()
            raise ConfigError(f"envs = {count} env hosts need a CPU each but the Ray cluster has {cpus}: "
                              f"lower --envs, or add nodes to the cluster")
        self._actor_class = self.ray.remote(num_cpus=1, max_restarts=0, max_concurrency=2)(EnvHostActor)
        self.setup, self.count = setup, count
        self.timeout = silence_limit(setup.settings)
        self._actors: list = [None] * count
        self._placing: dict[int, tuple[Any, float]] = {}  # actor not yet placed -> (its ready call, since when)
        self._failed_starts = [0] * count  # actors of this index that died before they were placed, in a row
        self._idle: deque = deque()        # placed actors without a part
        self._refs: tuple = ()
        self._heard: dict[int, tuple[int, float]] = {}  # busy actor -> (steps, when they last changed)
        self._next_check = 0.0
        self._agents: int | None = None
        self.layouts: dict = {}   # behavior -> Layout, as the host that counted the agents found them
        self._short_noted = False      # the warning about unplaced replacements was given
        self._none_placed_since: float | None = None
        for index in range(count):
            self._new_actor(index)

    def agents(self) -> int | None:
        """The agents of the population behaviors in a host's game, counted once by the first
        actor that is placed; None when the count failed (the actor died or did not answer: it is
        replaced)."""
        if self._agents is None:
            ray = self.ray
            while not self._idle:  # the count, too, goes only to an actor that is placed
                self.wait(PROGRESS_SECONDS)
            index = self._idle[0]
            try:
                found = ray.get(self._actors[index].survey.remote(), timeout=self.timeout)
                self._agents, self.layouts = found.agents, found.layouts
            except (ray.exceptions.RayActorError, ray.exceptions.GetTimeoutError):
                self._replace(index)
                self._agents = 0
            except ray.exceptions.RayTaskError as exc:
                raise host_error(getattr(exc, "cause", None), RemoteError(first_line(exc), str(exc))) from None
        return self._agents or None

    def _new_actor(self, index: int) -> None:
        """A new actor for host `index`; it takes parts once it is placed (its `ready` answers)."""
        actor = self._actors[index] = self._actor_class.remote(self.setup, index)
        self._placing[index] = (actor.ready.remote(), time.monotonic())

    def _replace(self, index: int) -> None:
        """End host `index`'s actor (dead, hung or unanswering) and start a new one."""
        self.ray.kill(self._actors[index])
        if index in self._idle:
            self._idle.remove(index)
        self._new_actor(index)

    def prepare(self, config_bytes: bytes) -> None:
        self._refs = (self.ray.put(config_bytes),)

    def free(self) -> int:
        """Placed actors without a part: how many parts can be handed out now."""
        return len(self._idle)

    def submit(self, ticket: Any, compiled: Compiled, generation: int, part: int) -> None:
        index = self._idle.popleft()
        ref = self._actors[index].evaluate.remote(*self._refs, compiled, generation, part)
        self._start(ref, ticket, generation, part, host=index)
        self._heard[index] = (-1, time.monotonic())

    def wait(self, timeout: float) -> list[Finished]:
        """The parts that finished within `timeout` seconds (how far running ones are: `progress`,
        from the actors' latest answers); actors that got placed meanwhile become free."""
        ray = self.ray
        placing = {ref: index for index, (ref, _) in self._placing.items()}
        waiting = list(self._running) + list(placing)
        ready = []
        if waiting and ray.wait(waiting, num_returns=1, timeout=timeout)[0]:
            ready = ray.wait(waiting, num_returns=len(waiting), timeout=0)[0]  # all that are ready by now
        elif not waiting:
            time.sleep(timeout)
        self._kill_hung()
        out = []
        for ref in ready:
            if ref in placing:
                self._placed(placing[ref], ref)
                continue
            running = self._finish(ref)
            ticket, index = running.ticket, running.host
            value, error = None, None
            try:
                value = ray.get(ref)
                self._idle.append(index)
            except ray.exceptions.RayActorError as exc:
                error = HostLost(f"env host {index} (Ray actor) died: {first_line(exc)}")
                self._new_actor(index)  # free once it is placed: no part waits on a replacement
            except ray.exceptions.RayTaskError as exc:
                error = host_error(getattr(exc, "cause", None), RemoteError(first_line(exc), str(exc)))
                self._idle.append(index)
            out.append(Finished(ticket, value, error))
        self._check_placement()
        return out

    def _placed(self, index: int, ref) -> None:
        """Host `index`'s ready call answered: the actor takes parts, or (it died before it could
        be placed) it is started again, and again at most MAX_HOST_LOSSES times in a row."""
        del self._placing[index]
        try:
            self.ray.get(ref)
        except self.ray.exceptions.RayActorError as exc:
            self._failed_starts[index] += 1
            if self._failed_starts[index] >= MAX_HOST_LOSSES:
                raise NeatparError(f"env host {index} (Ray actor) failed to start {self._failed_starts[index]} times "
                                   f"(last: {first_line(exc)}): check that neatpar and the build are installed on "
                                   f"every node") from None
            self._new_actor(index)
            return
        self._failed_starts[index] = 0
        self._idle.append(index)

    def _check_placement(self) -> None:
        """Warn once when a replacement is not placed for a while (the generation runs on the
        placed actors meanwhile); stop when no actor at all is placed for the silence limit."""
        now = time.monotonic()
        if not self._placing:
            self._short_noted = False
            self._none_placed_since = None
            return
        placed = self.count - len(self._placing)
        oldest = min(since for _, since in self._placing.values())
        if not self._short_noted and now - oldest > PLACEMENT_NOTE_SECONDS:
            self._short_noted = True
            waiting = ", ".join(str(i) for i in sorted(self._placing))
            log.warning("env host %s (Ray actor) not placed on the Ray cluster after %.0f s (no node with a free CPU): "
                        "generations run on the %d placed host(s) until a node takes it", waiting,
                        now - oldest, placed)
        if placed:
            self._none_placed_since = None
        elif self._none_placed_since is None:
            self._none_placed_since = now
        elif now - self._none_placed_since > self.timeout:
            raise NeatparError(f"no env host is placed on the Ray cluster: none of the {self.count} actors found a "
                               f"node with a free CPU within {self.timeout:.0f} s; add nodes to the cluster, or lower "
                               f"--envs")

    def _kill_hung(self) -> None:
        """Ask each busy actor how far it is (about once a second): the parts' progress is kept;
        an actor that made no simulator step for `timeout` seconds, or does not answer, is killed
        (its part then fails with RayActorError and runs again on a new actor)."""
        now = time.monotonic()
        if now < self._next_check or not self._running:
            return
        self._next_check = now + 1.0
        busy = {running.host: running.ticket for running in self._running.values()}
        probes = {self._actors[index].progress.remote(): index for index in busy}
        ready, _ = self.ray.wait(list(probes), num_returns=len(probes), timeout=2.0)
        for ref in ready:
            index = probes[ref]
            try:
                report = self.ray.get(ref)
            except self.ray.exceptions.RayActorError:
                continue  # died: its part reports that
            if report.steps != self._heard[index][0]:
                self._heard[index] = (report.steps, now)
            self._keep(busy[index], report.generation, report.part, report.episodes, report.scored_steps)
        for index in busy:
            if now - self._heard[index][1] > self.timeout:
                log.warning("env host %d (Ray actor) made no progress for %.0f s; replacing it", index, self.timeout)
                self.ray.kill(self._actors[index])
                self._heard[index] = (-1, float("inf"))

    def _placed_actors(self) -> list:
        return [actor for index, actor in enumerate(self._actors) if index not in self._placing]

    def actor_locations(self) -> list[tuple[str, int, int | None]]:
        """(node, actor PID, simulator PID) of each placed host."""
        return self.ray.get([actor.where.remote() for actor in self._placed_actors()], timeout=STOP_SECONDS)

    def kill(self) -> None:
        """End every actor now (each actor's simulator quits when its connection drops)."""
        try:
            for actor in self._actors:
                self.ray.kill(actor)
        finally:
            self._forget()
            self._shutdown()

    def close(self) -> None:
        """Close each placed actor's simulator (killed if a part is running), then end the actors."""
        ray, graceful = self.ray, not self._running
        try:
            stops = [actor.stop.remote(graceful) for actor in self._placed_actors()]
            ray.wait(stops, num_returns=len(stops), timeout=STOP_SECONDS)
        finally:
            for actor in self._actors:
                ray.kill(actor)
            self._forget()
            self._shutdown()

    def _forget(self) -> None:
        super()._forget()
        self._actors, self._placing, self._idle = [], {}, deque()

    def _shutdown(self) -> None:
        if self._started:
            shutdown(self.ray)
            self._started = False
