"""Env hosts as Ray actors: one actor per simulator, placed anywhere on a Ray cluster.

Each actor owns a HostState (hosts.py), so each simulator connection is created inside the actor
that uses it, on whichever node runs it. The actor's methods run in threads
(max_concurrency=2) so that `stop` can kill the simulator, and `progress` be read, while a part is
running. `progress` answers the host's latest report (HostProgress: its simulator steps, and the
episodes and scored decisions of its part so far), asked about once a second. A dead actor is
replaced; a busy actor whose simulator makes no step for the silence limit is killed, and its
part runs again on a new actor.
"""
from __future__ import annotations

import logging
import os
import time
from collections import deque
from typing import Any

from ..errors import ConfigError, HostLost, NeatparError, RemoteError
from ..parallel.ray_cluster import config_from, connect, first_line, shutdown
from .hosts import HostProgress, HostState, PartProgress, silence_limit

STOP_SECONDS = 10.0
log = logging.getLogger("neatpar")


class EnvHostActor:
    """The body of an env host actor (wrapped by ray.remote in RayHosts)."""

    def __init__(self, setup, index: int):
        self.state = HostState(setup, index)

    def evaluate(self, config_bytes: bytes, compiled: tuple, generation: int, part: int):
        return self.state.evaluate(config_from(config_bytes), compiled, generation, part)

    def survey(self):
        return self.state.survey()

    def progress(self) -> HostProgress:
        """The host's latest report (updated after every simulator step while a part runs)."""
        return self.state.report

    def where(self) -> tuple[str, int, int | None]:
        """(node address, actor PID, simulator PID or None)."""
        import ray
        return ray.util.get_node_ip_address(), os.getpid(), self.state.environment.process_pid

    def stop(self, graceful: bool) -> None:
        """Close the simulator (graceful) or kill it (while a part may be running)."""
        (self.state.close if graceful else self.state.kill)()


class RayHosts:
    """N env hosts as Ray actors, one simulator each; the scheduler's backend (see hosts.py)."""

    def __init__(self, setup, count: int, address: str | None = None):
        self.ray, self._started = connect(address)
        cpus = int(self.ray.cluster_resources().get("CPU", 0))
        if count > cpus:
            self._shutdown()
            raise ConfigError(f"envs = {count} env hosts need a CPU each but the Ray cluster has {cpus}: "
                              f"lower --envs, or add nodes to the cluster")
        self._actor_class = self.ray.remote(num_cpus=1, max_restarts=0, max_concurrency=2)(EnvHostActor)
        self.setup, self.count = setup, count
        self._actors = [self._new_actor(i) for i in range(count)]
        self._idle = deque(range(count))
        self._running: dict = {}  # ObjectRef -> (ticket, actor index)
        self._where: dict = {}    # ticket -> (generation, part) of a running part
        self._seen: dict = {}     # ticket -> PartProgress, the most a running part has reported
        self._refs: tuple = ()
        self.timeout = silence_limit(setup.settings)
        self._heard: dict[int, tuple[int, float]] = {}  # busy actor -> (steps, when they last changed)
        self._next_check = 0.0
        self._agents: int | None = None

    def agents(self) -> int | None:
        """The agents of the population behaviors in a host's game, counted once by the first
        actor; None when the count failed (the actor died or did not answer: it is replaced)."""
        if self._agents is None:
            ray = self.ray
            try:
                self._agents = ray.get(self._actors[0].survey.remote(), timeout=self.timeout).agents
            except (ray.exceptions.RayActorError, ray.exceptions.GetTimeoutError):
                ray.kill(self._actors[0])
                self._actors[0] = self._new_actor(0)
                self._agents = 0
            except ray.exceptions.RayTaskError as exc:
                cause = getattr(exc, "cause", None)
                raise cause if isinstance(cause, NeatparError) else RemoteError(first_line(exc), str(exc)) from None
        return self._agents or None

    def _new_actor(self, index: int):
        return self._actor_class.remote(self.setup, index)

    def prepare(self, config_bytes: bytes) -> None:
        self._refs = (self.ray.put(config_bytes),)

    def submit(self, ticket: Any, compiled: tuple, generation: int, part: int) -> None:
        index = self._idle.popleft()
        ref = self._actors[index].evaluate.remote(*self._refs, compiled, generation, part)
        self._running[ref] = (ticket, index)
        self._where[ticket], self._seen[ticket] = (generation, part), PartProgress()
        self._heard[index] = (-1, time.monotonic())

    def progress(self) -> dict[Any, PartProgress]:
        """How far each running part is, by ticket, from the actors' latest answers to `progress`."""
        return dict(self._seen)

    def wait(self, timeout: float) -> list[tuple[Any, Any, BaseException | None]]:
        ray = self.ray
        ready, _ = ray.wait(list(self._running), num_returns=1, timeout=timeout)
        self._kill_hung()
        out = []
        for ref in ready:
            ticket, index = self._running.pop(ref)
            self._where.pop(ticket, None)
            self._seen.pop(ticket, None)
            value, error = None, None
            try:
                value = ray.get(ref)
            except ray.exceptions.RayActorError as exc:
                error = HostLost(f"env host {index} (Ray actor) died: {first_line(exc)}")
                self._actors[index] = self._new_actor(index)
            except ray.exceptions.RayTaskError as exc:
                cause = getattr(exc, "cause", None)
                error = cause if isinstance(cause, NeatparError) else RemoteError(first_line(exc), str(exc))
            self._idle.append(index)
            out.append((ticket, value, error))
        return out

    def _kill_hung(self) -> None:
        """Ask each busy actor how far it is (about once a second): the parts' progress is kept;
        an actor that made no simulator step for `timeout` seconds, or does not answer, is killed
        (its part then fails with RayActorError and runs again on a new actor)."""
        now = time.monotonic()
        if now < self._next_check:
            return
        self._next_check = now + 1.0
        busy = {index: ticket for ticket, index in self._running.values()}
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
            self._keep(busy[index], report)
        for index in busy:
            if now - self._heard[index][1] > self.timeout:
                log.warning("env host %d (Ray actor) made no progress for %.0f s; replacing it", index, self.timeout)
                self.ray.kill(self._actors[index])
                self._heard[index] = (-1, float("inf"))

    def _keep(self, ticket: Any, report: HostProgress) -> None:
        """A running part's progress from its actor's report (an earlier part's report, or less
        than the part reported before, changes nothing)."""
        seen = self._seen.get(ticket)
        if seen is not None and self._where.get(ticket) == (report.generation, report.part):
            self._seen[ticket] = PartProgress(max(seen.episodes, report.episodes),
                                              max(seen.scored_steps, report.scored_steps))

    def actor_locations(self) -> list[tuple[str, int, int | None]]:
        """(node, actor PID, simulator PID) of each host."""
        return self.ray.get([actor.where.remote() for actor in self._actors], timeout=STOP_SECONDS)

    def kill(self) -> None:
        """End every actor now (each actor's simulator quits when its connection drops)."""
        try:
            for actor in self._actors:
                self.ray.kill(actor)
        finally:
            self._actors, self._running = [], {}
            self._where, self._seen = {}, {}
            self._shutdown()

    def close(self) -> None:
        """Close each simulator (killed if a part is running), then end the actors."""
        ray, graceful = self.ray, not self._running
        try:
            stops = [actor.stop.remote(graceful) for actor in self._actors]
            ray.wait(stops, num_returns=len(stops), timeout=STOP_SECONDS)
        finally:
            for actor in self._actors:
                ray.kill(actor)
            self._actors, self._running = [], {}
            self._where, self._seen = {}, {}
            self._shutdown()

    def _shutdown(self) -> None:
        if self._started:
            shutdown(self.ray)
            self._started = False
