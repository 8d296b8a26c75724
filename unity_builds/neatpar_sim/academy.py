"""ML-Agents' Academy, Agent and DecisionRequester (C# package 2.x) for the simulator's tasks.

One academy step (Academy.EnvironmentStep) does, in order:
  1. spawn the agents due at this step count (a task's intro: `spawn_after`);
  2. DecisionRequester.MakeRequests with the step count before the increment: an agent requests a
     decision when `count % period == offset`, and an action at every step if actions between
     decisions are taken (else only with its decision);
  3. the academy step count and every agent's step count go up (AgentIncrementStep);
  4. requesting agents queue their decision infos: reward and group reward accumulated (float32,
     like C#'s `float m_Reward`) since their previous info, then reset (Agent.SendInfo);
  5. Python is asked for actions only if some info (decision or terminal) is queued
     (RpcCommunicator.DecideBatch); its actions apply by position over this exchange's decision
     requests, and a requesting agent's action is "empty" (zeros) until they arrive;
  6. agents whose action was requested execute their latest received action (zeros if none since
     their last terminal); the task returns rewards, episode ends and destroyed agents
     (Agent.AgentStep, OnActionReceived);
  7. Agent.MaxStep ends episodes as interrupted (max_step_reached) once an agent's step count
     reaches it.
An episode end queues a terminal info (observation, reward so far, done, max_step_reached) that
reaches Python with the next exchange; the agent keeps its id and asks for its next decision when
its DecisionRequester next does. Like Agent.NotifyAgentDone, a second end before the agent's next
decision sends nothing. A destroyed agent (Agent.OnDisable) sends its terminal info and is replaced
at once by a new agent with an id never used in this process (C#'s static EpisodeIdCounter).

A RESET from Python (Academy.ForcedFullReset) restarts every live agent's episode without a
terminal info, ids unchanged, and sets the step count to 0; its reply is the next exchange. The
academy step in which the RESET arrived ends there (C# would still execute that step's actions
on the reset agents), and rewards not yet reported are dropped, so an episode begun by a RESET
starts from nothing. Agents of a behavior with `spawn_after` > 0 are disabled at a RESET (a
terminal info each, as OnDisable sends) and new ones are enabled `spawn_after` steps later: the
intro is part of every episode of the scene. A behavior's BrainParameters ride with the first
exchange that carries an info of it (RpcCommunicator.GetTempUnityRlInitializationOutput).

Time: Unity runs an academy step per FixedUpdate, every Time.fixedDeltaTime (0.02 s by default) of
game time, and game time runs Time.timeScale times faster than real time. At a time scale of 1 or
less (a person watches: `neatpar play --graphics` asks 1) each academy step begins
FIXED_DELTA_TIME / time scale after the previous one began (`pace`), Python's time between steps
included; above 1 (training: ML-Agents' trainer asks 20, neatpar 20 by default) the steps run as
fast as they can, as a Unity player does whose physics take less than a step's share.

Agents in `watched` (a clip is being made of them) are drawn as their episode ends, before they
restart (`ends`): the state their terminal info's observation shows.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from .spec import Behavior, MaskedActionError, OptionError, Task, per_behavior

ACADEMY_OPTIONS = ("decision_period", "decision_offset", "actions_between", "max_step")
_TIMING_OPTIONS = ACADEMY_OPTIONS[:3]
_LIMIT = 10**7
FIXED_DELTA_TIME = 0.02   # Unity's default Time.fixedDeltaTime: the game time of one academy step, s


@dataclass(frozen=True)
class Requester:
    """One behavior's DecisionRequester (period, offset, actions between decisions) and Agent.MaxStep."""
    period: int = 1
    offset: int = 0
    between: bool = True
    max_step: int = 0

    def decides(self, count: int) -> bool:
        return count % self.period == self.offset


def requesters(options: dict, task: Task) -> dict[str, Requester]:
    """Each behavior's Requester from the academy options (or the task's own timing)."""
    names = [b.name for b in task.behaviors]
    max_step = per_behavior(options, "max_step", 0, names, 0, _LIMIT)
    fixed = task.timing()
    if fixed is not None:
        given = sorted({k.partition(".")[0] for k in options if k.partition(".")[0] in _TIMING_OPTIONS})
        if given:
            raise OptionError(f"this task fixes {', '.join(_TIMING_OPTIONS)} itself (turns); "
                              f"leave out {', '.join(given)}")
        return {name: Requester(*fixed[name], max_step=m) for name, m in zip(names, max_step)}
    period = per_behavior(options, "decision_period", 1, names, 1, _LIMIT)
    offset = per_behavior(options, "decision_offset", 0, names, 0, _LIMIT)
    between = per_behavior(options, "actions_between", 1, names, 0, 1)
    for name, p, o in zip(names, period, offset):
        if o >= p:
            where = f" for {name}" if len(names) > 1 else ""
            raise OptionError(f"decision_offset must be below decision_period{where} (from 0 to {p - 1}), got {o}")
    return {name: Requester(p, o, bool(b), m) for name, p, o, b, m in zip(names, period, offset, between, max_step)}


@dataclass
class InfoBatch:
    """AgentInfos of one behavior queued together: one step's decision requests, or the terminal
    infos of one event. Row-aligned arrays; `masks` only on decision infos."""
    ids: np.ndarray            # int32
    observations: np.ndarray   # (k, width) float32
    rewards: np.ndarray        # float32
    group_rewards: np.ndarray  # float32
    group_ids: np.ndarray      # int32
    masks: np.ndarray | None = None
    done: bool = False
    interrupted: np.ndarray | None = None  # bool, terminal infos only
    frames: tuple[np.ndarray, ...] = ()    # per visual sensor of the behavior: (k, height, width, channels)


@dataclass
class EpisodeEnd:
    """Episodes that ended with a terminal info: their returns (float32 running sums of every reward
    and group reward, like C#'s GetCumulativeReward) and lengths in academy steps."""
    returns: np.ndarray
    lengths: np.ndarray


@dataclass
class Outgoing:
    """What one exchange sends: the queued infos of every behavior that ever had an agent (in
    subscription order), and the behaviors whose BrainParameters go with it."""
    infos: dict[str, list[InfoBatch]]
    announce: list[Behavior]


class Roster:
    """The agents of one behavior, one per row of the task's arrays, with the state C#'s Agent
    keeps: step count, reward and group reward (float32) since the last info, the episode's
    running return, whether its last info was terminal, and its latest received action."""

    def __init__(self, behavior: Behavior, requester: Requester):
        self.behavior, self.requester = behavior, requester
        self.spawn_after = 0
        self.subscribed = False  # some agent of the behavior was ever enabled
        self.ids = np.zeros(0, np.int32)
        self.live = np.zeros(0, bool)
        self.order = np.zeros(0, np.int64)  # live rows in subscription order (new agents last)
        self.resize(0)

    def resize(self, n: int) -> None:
        """n rows; existing rows keep their agent (and id), new rows have none yet; every row's
        state starts clean (AgentForceReset: a fresh episode, nothing carried over)."""
        keep = min(n, len(self.ids))
        ids, live = np.full(n, -1, np.int32), np.zeros(n, bool)
        ids[:keep], live[:keep] = self.ids[:keep], self.live[:keep]
        self.ids, self.live, self.order = ids, live, self.order[self.order < n]
        self.steps = np.zeros(n, np.int64)      # Agent.StepCount
        self.reward = np.zeros(n, np.float32)   # m_Reward
        self.group_reward = np.zeros(n, np.float32)
        self.returns = np.zeros(n, np.float32)  # the episode's running return
        self.info_done = np.zeros(n, bool)      # m_Info.done: a terminal sent, no decision since
        self.continuous = np.zeros((n, self.behavior.continuous), np.float32)  # latest received actions
        self.discrete = np.zeros((n, len(self.behavior.branches)), np.int32)
        self.nobody = np.zeros(n, bool)         # no agent acts or decides
        self._refresh()

    def _refresh(self) -> None:
        """`everyone`: every row live, in row order (the fast path)."""
        n = len(self.ids)
        self.everyone = len(self.order) == n and bool(self.live.all()) and bool((self.order == np.arange(n)).all())

    def rows(self, mask: np.ndarray | None = None) -> np.ndarray | slice:
        """Live rows (within `mask`) in subscription order; a slice when that is every row in order."""
        if mask is None:
            return slice(None) if self.everyone else self.order
        return self.order[mask[self.order]] if not self.everyone else np.flatnonzero(mask)

    def enable(self, rows: np.ndarray, ids: np.ndarray) -> None:
        """New agents take `rows` (subscribing last); their state starts clean."""
        self.ids[rows], self.live[rows] = ids, True
        self.order = np.concatenate([self.order[~np.isin(self.order, rows)], rows])
        self.steps[rows] = 0
        self.reward[rows] = self.group_reward[rows] = self.returns[rows] = 0.0
        self.info_done[rows] = False
        self.continuous[rows] = 0.0
        self.discrete[rows] = 0
        self.subscribed = True
        self._refresh()

    def disable(self, rows: np.ndarray) -> None:
        self.ids[rows], self.live[rows] = -1, False
        self.order = self.order[~np.isin(self.order, rows)]
        self._refresh()


class Academy:
    """Steps the agents of a task as ML-Agents' Academy does and queues what Python must see."""

    def __init__(self, log: Callable[[str], None], record_episodes: bool = False, strict_masks: bool = False):
        self.log = log
        self.record_episodes = record_episodes
        self.strict_masks = strict_masks  # a masked action ends the player (else: logged once per behavior)
        self.masked_warned: set[str] = set()
        self.sent_masks: dict[str, np.ndarray | None] = {}  # the masks of this exchange's decision infos
        self.next_id = 0  # ids are never reused in this process, across resets too
        self.rosters: dict[str, Roster] = {}  # every behavior of every task so far, in order
        self.announced: set[str] = set()
        self.task: Task | None = None
        self.count = 0  # Academy.StepCount
        self.queue: dict[str, list[InfoBatch]] = {}
        self.requests: dict[str, np.ndarray | slice] = {}  # rows of this exchange's decision infos
        self.episodes: list[EpisodeEnd] = []
        self._acting: dict[str, np.ndarray] = {}
        self._deciding: dict[str, np.ndarray] = {}
        self.step_seconds = 0.0   # the real time an academy step takes (0: as fast as it can)
        self._next_step = 0.0     # when the next academy step may begin (time.monotonic)
        self.watched: dict[str, set[int]] = {}   # agent ids by behavior whose episode's end is drawn
        self.ends: list[tuple[int, np.ndarray]] = []   # (agent id, picture) of watched agents' ends

    # ------------------------------------------------------------ RESET

    def reset(self, task: Task, timing: dict[str, Requester]) -> None:
        """Python's RESET: live agents restart (no terminal info); a behavior with an intro, or
        agents beyond the new counts, are disabled (terminal infos); the step count starts at 0."""
        old = self.task
        self.requests = {}
        rows_now = {b.name: task.rows(b.name) for b in task.behaviors}
        for name, roster in self.rosters.items():
            if not roster.live.any():
                continue
            keep = np.arange(len(roster.ids)) < rows_now.get(name, 0)
            if name not in rows_now or task.spawn_after(name) > 0:
                keep[:] = False
            gone = roster.live & ~keep
            if gone.any():
                self._end(roster, gone, np.zeros(len(gone), bool), old.observe(name), old.group_ids(name),
                          old.frames(name))
                roster.disable(np.flatnonzero(gone))
        for behavior in task.behaviors:
            roster = self.rosters.get(behavior.name)
            if roster is None:
                roster = self.rosters[behavior.name] = Roster(behavior, timing[behavior.name])
            roster.behavior, roster.requester = behavior, timing[behavior.name]
            roster.spawn_after = task.spawn_after(behavior.name)
            roster.resize(rows_now[behavior.name])
        self.task, self.count = task, 0

    # ------------------------------------------------------------ one academy step

    def advance(self) -> Outgoing:
        """Run academy steps until one has infos queued; return what that exchange sends."""
        while not self._begin_step():
            self._finish_step()
        return self._take()

    def act(self, agent_actions) -> None:
        """Python's actions for this exchange's decision requests (by position); finish the step."""
        for name, rows in self.requests.items():
            sent = agent_actions[name].value if name in agent_actions else ()
            if len(sent):
                self._store_actions(self.rosters[name], rows, sent)
        self.requests = {}
        self._finish_step()

    def pace(self, time_scale: float) -> None:
        """Unity's Time.timeScale: at 1 or less an academy step takes FIXED_DELTA_TIME / time_scale
        of real time; above 1 none is waited for (see the module docstring)."""
        self.step_seconds = FIXED_DELTA_TIME / time_scale if 0 < time_scale <= 1 else 0.0
        self._next_step = 0.0

    def _wait_for_step(self) -> None:
        """Sleep until this academy step's real time comes (a step late starts at once)."""
        now = time.monotonic()
        if self._next_step > now:
            time.sleep(self._next_step - now)
            now = self._next_step
        self._next_step = now + self.step_seconds

    def _begin_step(self) -> bool:
        """Spawns, decision requests, step counts and decision infos; True when Python must be asked."""
        if self.step_seconds:
            self._wait_for_step()
        count = self.count
        self._spawn_due(count)
        self._acting, self._deciding = {}, {}
        for behavior in self.task.behaviors:
            roster = self.rosters[behavior.name]
            decides = roster.requester.decides(count)
            self._deciding[behavior.name] = roster.live if decides else roster.nobody
            self._acting[behavior.name] = roster.live if decides or roster.requester.between else roster.nobody
            roster.steps += 1
            if decides and roster.live.any():
                self._queue_decisions(roster)
        self.count += 1
        return any(self.queue.values())

    def _finish_step(self) -> None:
        """Actions executed (the task's step), rewards added, episode ends, MaxStep, replacements."""
        actions = {name: (self.rosters[name].continuous, self.rosters[name].discrete) for name in self._acting}
        results = self.task.step(actions, self._acting, self._deciding)
        restart, replaced = {}, {}
        for behavior in self.task.behaviors:
            name = behavior.name
            roster, result = self.rosters[name], results[name]
            self._add_rewards(roster, result)
            ended, destroyed, interrupted = self._ends(roster, result)
            notify = ended if destroyed is None else ended | destroyed
            if notify.any():
                self._end(roster, notify, interrupted, self.task.observe(name), self.task.group_ids(name),
                          self.task.frames(name))
                roster.steps[ended] = 0  # Agent._AgentReset
            if destroyed is None:
                restart[name] = np.flatnonzero(ended)
            else:
                restart[name] = np.flatnonzero(ended & ~destroyed)
                replaced[name] = self._replace(roster, destroyed)
        self.task.restart(restart)
        if replaced:
            self.task.spawned(replaced)

    @staticmethod
    def _ends(roster: Roster, result) -> tuple[np.ndarray, np.ndarray | None, np.ndarray]:
        """Rows whose episode ends this step (the task's EndEpisode, then Agent.MaxStep), rows
        destroyed (None if none), and which ends are interrupted (max_step_reached)."""
        ended = result.done if roster.everyone else result.done & roster.live
        destroyed = result.destroyed
        if destroyed is not None:
            destroyed = destroyed & roster.live
            if not destroyed.any():
                destroyed = None
        interrupted = result.interrupted & ended
        if roster.requester.max_step:
            maxed = roster.live & (roster.steps >= roster.requester.max_step) & ~ended
            if destroyed is not None:
                maxed &= ~destroyed
            ended, interrupted = ended | maxed, interrupted | maxed
        return ended, destroyed, interrupted

    def _replace(self, roster: Roster, destroyed: np.ndarray) -> np.ndarray:
        """New agents, with fresh ids, in the rows of destroyed ones (subscribing in the order the
        old ones acted); returns those rows, ascending."""
        rows = np.asarray(roster.rows(destroyed))
        roster.disable(rows)
        self._enable(roster, rows)
        return np.sort(rows)

    # ------------------------------------------------------------ agents

    def _spawn_due(self, count: int) -> None:
        """Enable the agents whose behavior's intro ends at this step count, ids in scene order
        (row by row, behaviors in order within a row)."""
        due = [r for r in self.rosters.values()
               if r.spawn_after == count and r.behavior in self.task.behaviors and not r.live.all()]
        if not due:
            return
        pending = sorted((row, b) for b, r in enumerate(due) for row in np.flatnonzero(~r.live).tolist())
        for b, roster in enumerate(due):
            rows = [row for row, owner in pending if owner == b]
            ids = [self.next_id + k for k, (_, owner) in enumerate(pending) if owner == b]
            roster.enable(np.array(rows, np.int64), np.array(ids, np.int32))
        self.next_id += len(pending)

    def _enable(self, roster: Roster, rows: np.ndarray) -> None:
        ids = np.arange(self.next_id, self.next_id + len(rows), dtype=np.int32)
        self.next_id += len(rows)
        roster.enable(rows, ids)

    def _add_rewards(self, roster: Roster, result) -> None:
        """Agent.AddReward / AddGroupReward in float32, for live agents."""
        if roster.everyone:
            roster.reward += result.reward
            roster.group_reward += result.group_reward
            roster.returns += result.reward
            roster.returns += result.group_reward
        else:
            live = roster.live
            for target, value in ((roster.reward, result.reward), (roster.group_reward, result.group_reward),
                                  (roster.returns, result.reward), (roster.returns, result.group_reward)):
                np.add(target, value, out=target, where=live)

    def _queue_decisions(self, roster: Roster) -> None:
        """Agent.SendInfo for every live agent of a deciding behavior, in subscription order."""
        name = roster.behavior.name
        rows = roster.rows()
        masks = self.task.masks(name)
        self.queue.setdefault(name, []).append(InfoBatch(
            roster.ids[rows], self.task.observe(name)[rows], roster.reward[rows].copy(),
            roster.group_reward[rows].copy(), self.task.group_ids(name)[rows],
            None if masks is None else masks[rows], frames=tuple(f[rows] for f in self.task.frames(name))))
        roster.reward[rows] = 0.0
        roster.group_reward[rows] = 0.0
        roster.info_done[rows] = False
        roster.continuous[rows] = 0.0  # the action is "empty" until Python's reply
        roster.discrete[rows] = 0
        self.requests[name] = rows
        self.sent_masks[name] = None if masks is None else masks[rows]

    def _end(self, roster: Roster, rows_mask: np.ndarray, interrupted: np.ndarray, observations: np.ndarray,
             group_ids: np.ndarray, frames: Sequence[np.ndarray] = ()) -> None:
        """Agent.NotifyAgentDone: a terminal info for each agent in `rows_mask` whose last info was
        not already terminal; its rewards and latest action are cleared."""
        rows = roster.rows(rows_mask & ~roster.info_done)
        if not len(rows):
            return
        self.queue.setdefault(roster.behavior.name, []).append(InfoBatch(
            roster.ids[rows], observations[rows], roster.reward[rows].copy(), roster.group_reward[rows].copy(),
            group_ids[rows], None, True, interrupted[rows], tuple(f[rows] for f in frames)))
        watched = self.watched.get(roster.behavior.name)
        if watched:
            self._draw_ends(roster, rows, watched)
        if self.record_episodes:
            self.episodes.append(EpisodeEnd(roster.returns[rows].copy(), roster.steps[rows].copy()))
        roster.reward[rows] = roster.group_reward[rows] = roster.returns[rows] = 0.0
        roster.info_done[rows] = True
        roster.continuous[rows] = 0.0
        roster.discrete[rows] = 0

    def _draw_ends(self, roster: Roster, rows: np.ndarray, watched: set[int]) -> None:
        """The pictures of the watched agents among `rows` as their episode ends (a task that
        draws nothing gives none)."""
        for row in np.asarray(rows).tolist():
            agent = int(roster.ids[row])
            if agent in watched:
                image = self.task.render(roster.behavior.name, row)
                if image is not None:
                    self.ends.append((agent, image))

    def _store_actions(self, roster: Roster, rows, sent) -> None:
        """Python's actions, by position over the decision requests; missing ones stay zeros."""
        k = len(roster.ids[rows])
        if len(sent) != k:
            self.log(f"warning: {len(sent)} actions for {roster.behavior.name}, expected {k}; missing ones are 0")
        sent = list(sent[:k])
        positions = slice(0, len(sent)) if isinstance(rows, slice) else rows[:len(sent)]
        c, d = roster.behavior.continuous, len(roster.behavior.branches)
        if c:
            roster.continuous[positions] = [(list(a.continuous_actions) + [0.0] * c)[:c] for a in sent]
        if d:
            received = np.array([(list(a.discrete_actions) + [0] * d)[:d] for a in sent], np.int64).reshape(-1, d)
            roster.discrete[positions] = received
            self._check_masks(roster, received)

    def _check_masks(self, roster: Roster, received: np.ndarray) -> None:
        """Python's discrete actions against the masks sent with the decision requests they answer
        (Unity does not check: it executes them). A masked one is logged (once per behavior), or,
        with strict_masks, ends the player."""
        name = roster.behavior.name
        masks = self.sent_masks.get(name)
        if masks is None or not len(received):
            return
        branches = np.asarray(roster.behavior.branches)
        starts = np.concatenate([[0], np.cumsum(branches)[:-1]])
        inside = (received >= 0) & (received < branches)
        columns = starts + np.clip(received, 0, branches - 1)
        forbidden = inside & masks[np.arange(len(received))[:, None], columns]
        if not forbidden.any():
            return
        agent, branch = (int(i) for i in np.argwhere(forbidden)[0])
        ids = roster.ids[self.requests[name]]
        message = (f"agent {int(ids[agent])} of {name} was sent action {int(received[agent, branch])} on branch "
                   f"{branch}, which the mask sent with its decision request forbids "
                   f"({int(forbidden.sum())} masked actions in this exchange)")
        if self.strict_masks:
            raise MaskedActionError(message)
        if name not in self.masked_warned:
            self.masked_warned.add(name)
            self.log(f"warning: {message}")

    # ------------------------------------------------------------ the exchange

    def _take(self) -> Outgoing:
        infos = {name: self.queue.pop(name, []) for name, r in self.rosters.items() if r.subscribed}
        announce = [r.behavior for name, r in self.rosters.items()
                    if name not in self.announced and infos.get(name)]
        self.announced.update(b.name for b in announce)
        self.queue = {}
        return Outgoing(infos, announce)

    def announced_behaviors(self) -> dict[str, Behavior]:
        """The behaviors whose BrainParameters Python has, as announced."""
        return {name: r.behavior for name, r in self.rosters.items() if name in self.announced}

    def take_episodes(self) -> list[EpisodeEnd]:
        episodes, self.episodes = self.episodes, []
        return episodes
