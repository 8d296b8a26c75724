"""Stepping one generation: per step, data moves one way, the reports of every behavior
(observations) -> one batched call of the population kernel -> actions; episodes scored on the way."""
from __future__ import annotations

from typing import Any, Callable, Protocol

import numpy as np

from ..config.behaviors import BehaviorRole
from ..config.settings_model import Settings
from ..environment import Batch, Environment, Layout
from ..errors import EnvironmentMismatch, NeatparError
from ..generation_stats import EpisodeEnd, GenerationStats, ScoredEpisodes
from ..search.descriptors import DescriptorAccumulator, DescriptorSpec
from .agent_table import AgentTable, Phase
from .arrivals import BEHAVIOR_WAIT_STEPS, Arrivals
from .generation_plan import GenerationPlan

STALL_STEPS = 1000           # environment steps without progress before a generation stops


class Runner(Protocol):
    """What a generation reads of the runner that plays it (runner.py's EpisodeRunner)."""
    environment: Environment
    settings: Settings
    roles: dict[str, BehaviorRole]
    arrivals: Arrivals
    inference: Any               # inference.py: activate(observations, genomes, rows, reset) -> actions
    descriptor: DescriptorSpec | None   # [neatpar] descriptor, parsed
    progress: Callable[[GenerationStats], None] | None
    on_decisions: Callable[[str, np.ndarray, np.ndarray], None] | None

    def check_layout(self, behavior: str, layout: Layout) -> None: ...

    def warn_once(self, key: str, message: str, *args) -> None: ...


class Generation:
    """One generation's play on the runner's environment. Each configured behavior has a role: its
    agents are driven by the genomes under evaluation (`population`), by the best genome found so
    far (`champion`, frozen for the generation), by past champions of a self-play league (`league`:
    league.py plays a generation as several Matches, one per opponent) or by a genome loaded from a
    file.

    A genome's episode is one of the game's episodes, from the agent's first decision in it:
    - An agent of a population behavior whose episode starts takes the next waiting genome (with a
      clean recurrent or CTRNN state); with no genome waiting it still acts (driven by the first
      genome), its rewards ignored.
    - Its return is the sum of the rewards and group rewards that follow its actions. The episode
      ends when the game ends it (a terminal report), or when the agent has made `max_steps`
      decisions: then the return is final, and the agent keeps playing its game episode unscored
      (same genome) until the game ends it; only then does it take the next genome. So no genome
      ever inherits another's half-played episode.
    - When genomes are waiting but every agent of the population behaviors is playing such an
      unscored rest, the environment is reset (every agent starts a new episode): a game whose
      episodes are long or never end still finishes each generation.
    The generation ends when every genome has `episodes_per_genome` episodes.

    Behaviors appear when the game first reports them (with their first agent's first decision,
    whenever that is). A configured behavior that has not reported within BEHAVIOR_WAIT_STEPS
    environment steps after a (re)start is an error naming the present ones; a behavior the config
    does not name is warned about once and gets the environment's neutral actions (which respect
    the agents' action masks, as every action sent does). A generation that makes no progress (no
    decision of a scored agent, no finished episode) for STALL_STEPS environment steps stops with
    an error instead of hanging."""

    def __init__(self, runner: Runner, plan: GenerationPlan, returns: list[list[float]], stats: GenerationStats):
        self.runner, self.plan, self.returns, self.stats = runner, plan, returns, stats
        self.env = runner.environment
        self.settings = runner.settings
        # Genomes waiting for an episode, round by round (returns may already hold some episodes).
        self.queue = [g for round_ in range(plan.episodes) for g in range(plan.count) if len(returns[g]) <= round_]
        self.next = 0
        self.remaining = len(self.queue)  # episodes still to finish
        self.population = [b for b in runner.roles if b not in plan.fixed]
        self.agents = AgentTable()
        self.steps_since_start = 0
        self.steps_since_progress = 0
        self.descriptors: dict[str, DescriptorAccumulator] = {}   # population behavior -> its agents' rows

    def done(self) -> bool:
        """Every genome has its episodes."""
        return self.remaining == 0

    def finished(self) -> bool:
        """Done, and every configured behavior has reported."""
        return self.remaining == 0 and self.runner.arrivals.complete()

    def play(self) -> None:
        """Step until every genome has its episodes and every configured behavior has reported
        at least once (a generation that finishes early waits for a late behavior, within
        BEHAVIOR_WAIT_STEPS, so that a behavior that never comes is always an error)."""
        while not self.finished():
            self._check_behaviors_arrived()
            if self.steps_since_progress >= STALL_STEPS and not self.done():
                raise NeatparError(self._stall_message())
            batches = self.env.poll()
            deciding = [(b, batch) for b, batch in batches.items() if self._driven(b)]
            progress = False
            for behavior, batch in deciding:
                progress |= self._end_episodes(behavior, batch)
            if self.finished():
                break
            rows_of = {}
            for behavior, batch in deciding:
                rows_of[behavior], scored_decisions = self._decide(behavior, batch)
                progress |= scored_decisions
            self._act(deciding, rows_of)
            self._warn_unlisted()
            if self.finished():
                break
            self.steps_since_progress = 0 if progress else self.steps_since_progress + 1
            if self._everyone_in_overtime():
                self.env.reset(None)
                self.agents.clear()
                self.stats.resets += 1
            else:
                self.env.step()
            self.stats.env_steps += 1
            self.steps_since_start += 1
            if self.runner.progress is not None:
                self.runner.progress(self.stats)

    # ------------------------------------------------------------ one step

    def _driven(self, behavior: str) -> bool:
        """True for a configured behavior (checked at its first report); unlisted ones are left to
        the environment's neutral actions, with a warning."""
        runner, arrivals = self.runner, self.runner.arrivals
        if behavior not in runner.roles:
            arrivals.unlisted.add(behavior)
            return False
        if behavior not in arrivals.checked:
            layout = self.env.layout(behavior)
            runner.check_layout(behavior, layout)
            arrivals.checked.add(behavior)
            self.stats.layouts[behavior] = layout
        return True

    def _end_episodes(self, behavior: str, batch: Batch) -> bool:
        """Terminal reports: scored episodes end with their last reward; the agents' rows are freed."""
        if not len(batch.terminal_ids):
            return False
        agents = self.agents
        rows = agents.lookup(behavior, batch.terminal_ids)
        known = rows >= 0
        rows, rewards, interrupted = rows[known], batch.terminal_rewards[known], batch.interrupted[known]
        scored = agents.phase[rows] == Phase.SCORED
        finals = batch.terminal_observations
        finals = [None] * int(scored.sum()) if finals is None else finals[known][scored]
        for row, reward, cut, final in zip(rows[scored].tolist(), rewards[scored].tolist(),
                                           interrupted[scored].tolist(), finals):
            self._record(behavior, row, agents.ret[row] + reward, EpisodeEnd(reward, bool(cut)), final)
        agents.release(behavior, batch.terminal_ids[known], rows)
        return bool(scored.any())

    def _decide(self, behavior: str, batch: Batch) -> tuple[np.ndarray, bool]:
        """Decision reports: rewards to scored episodes, max_steps cuts, genomes for agents whose
        episode starts. Returns the agents' rows and whether a scored agent decided."""
        agents, max_steps = self.agents, self.settings.max_steps
        rows = agents.take(behavior, batch.decision_ids)
        if not len(rows):
            return rows, False
        scored = agents.phase[rows] == Phase.SCORED
        scored_rows, rewards = rows[scored], batch.decision_rewards[scored]
        agents.ret[scored_rows] += rewards
        at_limit = agents.decisions[scored_rows] >= max_steps
        cut = scored_rows[at_limit]
        finals = batch.observations[scored][at_limit]   # the observation the cut comes with is its last
        for row, reward, final in zip(cut.tolist(), rewards[at_limit].tolist(), finals):
            self._record(behavior, row, agents.ret[row], EpisodeEnd(reward, True), final)
            agents.phase[row] = Phase.OVERTIME
        if len(cut):
            self.runner.warn_once(
                "overtime", "an agent of %r was still in its game episode after max_steps = %d decisions: its "
                "genome's episode ends there and the agent plays the rest of the game episode unscored before it "
                "takes the next genome; set max_steps to the game's episode length (in decisions) to waste no "
                "steps", behavior, max_steps)
        starting = rows[agents.phase[rows] == Phase.FREE]
        if len(starting):
            self._assign(behavior, starting)
        scored = agents.phase[rows] == Phase.SCORED
        playing = rows[scored]
        agents.decisions[playing] += 1
        tracker = self._descriptors(behavior)
        if tracker is not None and len(playing):
            tracker.decide(playing, batch.observations[scored])
        self.stats.scored_steps += len(playing)
        if self.runner.on_decisions is not None and len(playing):
            self.runner.on_decisions(behavior, batch.decision_ids[scored], agents.genome[playing])
        return rows, bool(len(playing))

    def _assign(self, behavior: str, rows: np.ndarray) -> None:
        """Agents whose episode starts take a genome: the behavior's fixed one, or the next waiting."""
        agents = self.agents
        agents.ret[rows] = 0.0
        agents.decisions[rows] = 0
        agents.fresh[rows] = True
        fixed = self.plan.fixed.get(behavior)
        if fixed is not None:
            agents.genome[rows], agents.phase[rows] = fixed, Phase.FIXED
            return
        take = min(len(rows), len(self.queue) - self.next)
        agents.genome[rows[:take]] = self.queue[self.next:self.next + take]
        agents.phase[rows[:take]] = Phase.SCORED
        tracker = self._descriptors(behavior)
        if tracker is not None:
            tracker.clear(rows[:take])
        self.next += take
        agents.genome[rows[take:]], agents.phase[rows[take:]] = 0, Phase.IDLE

    def _descriptors(self, behavior: str) -> DescriptorAccumulator | None:
        """The descriptor tracker of a population behavior's agent rows (None without [neatpar]
        descriptor); made at its first use, for the behavior's observation width."""
        spec = self.runner.descriptor
        if spec is None or behavior in self.plan.fixed:
            return None
        tracker = self.descriptors.get(behavior)
        if tracker is None:
            try:
                bound = spec.bind(self.env.layout(behavior).inputs)
            except NeatparError as error:
                raise type(error)(f"behavior {behavior!r}: {error}") from None
            tracker = self.descriptors[behavior] = DescriptorAccumulator(bound, 0)
        tracker.grow(len(self.agents.phase))
        return tracker

    def _record(self, behavior: str, row: int, value: float, end: EpisodeEnd,
                final: np.ndarray | None = None) -> None:
        """A scored episode ends: its return and ending (and its descriptor, `final` the last
        observation when the report carries one) go to its genome."""
        genome = int(self.agents.genome[row])
        tracker = self._descriptors(behavior)
        if tracker is not None:
            finals = None if final is None else np.asarray(final)[None]
            self.stats.descriptors[genome].append(tracker.end(np.array([row]), finals)[0])
        self.returns[genome].append(float(value))
        self.stats.endings[genome].append(end)
        self.stats.episodes += 1
        episodes = self.stats.scored.setdefault(behavior, ScoredEpisodes())
        episodes.returns.append(float(value))
        episodes.lengths.append(int(self.agents.decisions[row]))
        self.remaining -= 1

    def _act(self, deciding: list, rows_of: dict) -> None:
        """One batched kernel call for every deciding agent; outputs back to each behavior."""
        parts = [(behavior, batch, rows_of[behavior]) for behavior, batch in deciding if len(rows_of[behavior])]
        if not parts:
            return
        agents = self.agents
        rows = np.concatenate([r for _, _, r in parts])
        if self.plan.inputs:   # behaviors of different widths: each padded to the kernel's
            obs = np.concatenate([_padded(b.observations, self.plan.inputs) for _, b, _ in parts])
        else:
            obs = parts[0][1].observations if len(parts) == 1 else np.concatenate([b.observations for _, b, _ in parts])
        reset = agents.fresh[rows]
        agents.fresh[rows] = False
        outputs = self.runner.inference.activate(obs, agents.genome[rows], rows, reset)
        start = 0
        for behavior, _, behavior_rows in parts:
            self.env.act(behavior, outputs[start:start + len(behavior_rows)])
            start += len(behavior_rows)
        self.stats.agent_steps += len(rows)

    # ------------------------------------------------------------ guards

    def _everyone_in_overtime(self) -> bool:
        """Genomes wait, and every live agent of the population behaviors plays an unscored rest."""
        if self.next >= len(self.queue):
            return False
        rows = self.agents.live(self.population)
        return bool(len(rows)) and bool((self.agents.phase[rows] == Phase.OVERTIME).all())

    def _warn_unlisted(self) -> None:
        """Once every configured behavior has reported (else the error that lists the present ones
        says it all), a warning for each behavior the config does not name."""
        runner = self.runner
        if runner.arrivals.unlisted and runner.arrivals.complete():
            for behavior in runner.arrivals.take_unlisted():
                runner.warn_once(f"unlisted {behavior}", "behavior %r is in the environment but not in [neatpar] "
                                 "behaviors: its agents get neutral actions (zeros; for a discrete branch, the first "
                                 "action their mask allows)", behavior)

    def _check_behaviors_arrived(self) -> None:
        if self.steps_since_start < BEHAVIOR_WAIT_STEPS:
            return
        missing = self.runner.arrivals.missing()
        if missing:
            present = sorted(set(self.env.poll()))
            raise EnvironmentMismatch(
                f"behavior {missing[0]!r} is not in the environment: no agent of it asked for a decision in "
                f"{self.steps_since_start} environment steps; it has {', '.join(repr(p) for p in present) or 'none'}: "
                f"fix [neatpar] behaviors")

    def _stall_message(self) -> str:
        waiting = len(self.queue) - self.next
        rows = self.agents.live(self.population)
        playing = int((self.agents.phase[rows] == Phase.SCORED).sum()) if len(rows) else 0
        return (f"no progress in {STALL_STEPS} environment steps: {waiting} genome episodes are waiting and "
                f"{playing} agents of the population behaviors are in a scored episode, but none of them asked "
                f"for a decision or ended an episode; check that the game's agents keep requesting decisions "
                f"(DecisionRequester) and end their episodes")


def _padded(observations: np.ndarray, width: int) -> np.ndarray:
    """Observations with zero columns added up to `width`."""
    if observations.shape[1] == width:
        return observations
    padded = np.zeros((len(observations), width), observations.dtype)
    padded[:, :observations.shape[1]] = observations
    return padded

