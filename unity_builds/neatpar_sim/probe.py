"""The probe task: a game whose every return is known in closed form, to test episode runners.

Behaviors `Probe?team=0` and, with `behaviors` = 2, `Rival?team=1`. Every agent observes the same
constant vector (`observation(width)`: 1.0, -0.5, 0.25, 0.75 repeating) at every step. Actions:
one continuous action, or with `discrete` = K one discrete branch of size K (`mask_first` = F
masks actions 0..F-1; the game does not enforce masks). Every execution of an action (C#'s
OnActionReceived: at a decision, and between decisions when actions between decisions are taken)
adds value(action) to the agent's reward: the continuous action[0] as received (float32), or the
discrete action index. An agent executes zeros (value 0) before its first decision and between an
episode end and its next decision. `episode_decisions` = L ends the episode (EndEpisode, not
interrupted) at the execution of the episode's L-th decision (0: never); `lifetime` = D destroys
an agent at the execution of its D-th decision (terminal info, not interrupted) and enables a new
agent with a fresh id in its place; `spawn_after` = K enables a behavior's agents K academy steps
after each reset; `turns` = 1 (two behaviors) lets only the side to move decide: Probe at even
academy step counts, Rival at odd ones, no actions between decisions. `couple` = 1 (two behaviors
with equal agents) adds to each agent's reward also the value the other behavior's agent of the
same row executes in that academy step, so a return shows the opponent's actions too (self-play
tests read which opponent an agent faced). Every option but `behaviors`, `turns` and `couple`
takes one value per behavior (a single value applies to both).

Closed form. Write a (+) b for float32 addition and S_m(v) = v (+) v (+) ... (+) v (m terms, left to
right; S_0 = 0). Every info's reward is the (+)-sum of the values the agent executed since its
previous info (nothing before the first info after a reset). For an agent whose action value is v
at every decision, with decision period N and offset o, E = N executions per decision with actions
between decisions (actions_between 1) and E = 1 without, from a reset (count = the academy step
count before its increment, 0 at the first step after the reset):
  - decision k of its first episode (k = 1, 2, ...) is requested at count o + (k-1)N; later
    episodes repeat the first, L*N counts later each;
  - decision k's info carries 0 for k = 1 and S_E(v) for k >= 2: the first k decisions' infos sum
    to (k-1)*S_E(v), and their actions earn k*S_E(v) (reported by infos 2..k+1) for k < L;
  - the L-th decision's action executes once, then the episode ends: its terminal info carries v
    and arrives with the next exchange (count o + (L-1)N + 1; with N = 1 together with the
    agent's next decision). The return of an episode (the sum of its infos' rewards) is
    (L-1)*S_E(v) + v. The stats return "Game/Return" is one running sum, S_{(L-1)E+1}(v); its
    "Environment/Episode Length" is o + (L-1)N + 1 academy steps for the first episode after a
    reset and L*N for later ones;
  - the next episode's first decision is at count o + L*N (reward 0: only zeros executed since);
  - Agent.MaxStep = M interrupts the episode at the M-th academy step of the episode if the task
    has not ended it by then (the first episode after a reset: at count M-1); the terminal carries
    the values executed since the last info;
  - `lifetime` D: the agent is destroyed at its D-th decision's execution (counted over its life
    across episodes, and again from a reset; terminal info carries v); the replacement's first
    decision is at the next count that is o modulo N, with reward 0;
  - `spawn_after` K: the first decision is at the first count >= K that is o modulo N, after
    which the forms above hold with counts shifted accordingly.
"""
from __future__ import annotations

import numpy as np

from . import render
from .spec import Behavior, OptionError, StepResult, Task, integer, per_behavior

OBSERVATION_PATTERN = (1.0, -0.5, 0.25, 0.75)
NAMES = ("Probe?team=0", "Rival?team=1")


def observation(width: int) -> np.ndarray:
    """The probe's observation of every agent at every step: OBSERVATION_PATTERN repeated to `width`."""
    return np.resize(np.array(OBSERVATION_PATTERN, np.float32), width)


class Probe(Task):
    """Rewards equal to the actions' values; episodes, lifetimes and intros counted in decisions and
    academy steps (see the module docstring for the closed form)."""

    OPTIONS = ("behaviors", "agents", "obs", "discrete", "mask_first", "episode_decisions", "spawn_after",
               "lifetime", "turns", "couple")
    PER_BEHAVIOR = ("agents", "obs", "discrete", "mask_first", "episode_decisions", "spawn_after", "lifetime")

    def __init__(self, options: dict, rng: np.random.Generator):
        names = NAMES[:integer(options, "behaviors", 1, 1, 2)]
        self.turns = integer(options, "turns", 0, 0, 1)
        if self.turns and len(names) != 2:
            raise OptionError("turns 1 needs two behaviors: add behaviors 2")
        self.couple = integer(options, "couple", 0, 0, 1)
        self.counts = per_behavior(options, "agents", 4, names, 1, 4096)
        if self.couple and (len(names) != 2 or self.counts[0] != self.counts[1]):
            raise OptionError("couple 1 pairs the agents of two behaviors row by row: add behaviors 2 and give "
                              "both the same agents")
        widths = per_behavior(options, "obs", 4, names, 1, 4096)
        self.discrete = per_behavior(options, "discrete", 0, names, 0, 1000)
        mask_first = per_behavior(options, "mask_first", 0, names, 0, 999)
        for name, k, f in zip(names, self.discrete, mask_first):
            if f and not k:
                raise OptionError(f"mask_first needs discrete actions for {name}: add discrete K (K > {f})")
            if f >= max(k, 1):
                raise OptionError(f"mask_first must leave an action allowed for {name}: below discrete ({k}), got {f}")
        self.episode_decisions = per_behavior(options, "episode_decisions", 0, names, 0, 10**7)
        self.lifetime = per_behavior(options, "lifetime", 0, names, 0, 10**7)
        self._spawn_after = dict(zip(names, per_behavior(options, "spawn_after", 0, names, 0, 10**6)))
        self.behaviors = tuple(Behavior(name, w, continuous=0 if k else 1, branches=(k,) if k else ())
                               for name, w, k in zip(names, widths, self.discrete))
        self._observations = {b.name: np.tile(observation(b.observations), (n, 1))
                              for b, n in zip(self.behaviors, self.counts)}
        self._masks = {name: np.tile(np.arange(k) < f, (n, 1)) if f else None
                       for name, n, k, f in zip(names, self.counts, self.discrete, mask_first)}
        self.decisions = {name: np.zeros(n, np.int64) for name, n in zip(names, self.counts)}   # this episode
        self.lived = {name: np.zeros(n, np.int64) for name, n in zip(names, self.counts)}       # this agent

    def rows(self, behavior: str) -> int:
        return len(self.decisions[behavior])

    def observe(self, behavior: str) -> np.ndarray:
        return self._observations[behavior]

    def masks(self, behavior: str) -> np.ndarray | None:
        return self._masks[behavior]

    def spawn_after(self, behavior: str) -> int:
        return self._spawn_after[behavior]

    def timing(self) -> dict | None:
        if not self.turns:
            return None
        return {NAMES[0]: (2, 0, False), NAMES[1]: (2, 1, False)}

    def step(self, actions: dict, acting: dict, deciding: dict) -> dict[str, StepResult]:
        results = {}
        executed = []
        for b, behavior in enumerate(self.behaviors):
            continuous, discrete = actions[behavior.name]
            value = discrete[:, 0].astype(np.float32) if self.discrete[b] else continuous[:, 0]
            executed.append(np.where(acting[behavior.name], value, np.float32(0.0)).astype(np.float32))
        for b, behavior in enumerate(self.behaviors):
            name = behavior.name
            reward = executed[b] + executed[1 - b] if self.couple else executed[b]
            decided = deciding[name]
            self.decisions[name][decided] += 1
            self.lived[name][decided] += 1
            n = len(reward)
            done = decided & (self.decisions[name] == self.episode_decisions[b]) if self.episode_decisions[b] \
                else np.zeros(n, bool)
            destroyed = decided & (self.lived[name] == self.lifetime[b]) if self.lifetime[b] else None
            results[name] = StepResult(reward, np.zeros(n, np.float32), done, np.zeros(n, bool), destroyed)
        return results

    def restart(self, rows: dict[str, np.ndarray]) -> None:
        for name, ended in rows.items():
            self.decisions[name][ended] = 0

    def spawned(self, rows: dict[str, np.ndarray]) -> None:
        for name, new in rows.items():
            self.decisions[name][new] = 0
            self.lived[name][new] = 0

    GAUGE = 64   # decisions a full gauge stands for, without an episode length
    DECISIONS_COLOR, LIVED_COLOR, OBSERVATION_COLOR = (90, 200, 110), (90, 140, 220), (230, 230, 230)

    def render(self, behavior: str, row: int) -> np.ndarray:
        """Gauges of the agent's decisions in this episode (of episode_decisions, else of GAUGE)
        and in its life, above its observation's values as bars up (positive) or down from a
        middle line."""
        canvas = render.Canvas()
        b = [x.name for x in self.behaviors].index(behavior)
        episode = self.episode_decisions[b] or self.GAUGE
        canvas.bar(self.decisions[behavior][row] / episode, 24, 40, self.DECISIONS_COLOR)
        canvas.bar((self.lived[behavior][row] % self.GAUGE) / self.GAUGE, 48, 64, self.LIVED_COLOR)
        values = self._observations[behavior][row]
        width = (render.SIZE - 16) / len(values)
        for k, value in enumerate(values.tolist()):
            canvas.rect(8 + k * width + 1, 160, 8 + (k + 1) * width - 1, 160 - 80 * value, self.OBSERVATION_COLOR)
        return canvas.image
