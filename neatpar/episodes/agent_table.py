"""The agent table: each agent's row (its phase, genome, return, decisions; also its recurrent-state
row in the kernel), so that a generation's bookkeeping is whole-array numpy work."""
from __future__ import annotations

import enum

import numpy as np


class Phase(enum.IntEnum):
    """Where an agent is, as the runner sees it."""
    FREE = 0       # its next decision starts an episode: it takes a genome then
    SCORED = 1     # playing a population genome's episode
    OVERTIME = 2   # past max_steps: playing the rest of its game episode, unscored
    FIXED = 3      # driven by a champion or file genome, unscored
    IDLE = 4       # no genome was left for it: acting, unscored


class AgentTable:
    """Per-agent state in numpy rows (a row is also the agent's recurrent-state row in the kernel).
    Rows are taken by an agent's first decision and given back when its episode ends."""

    def __init__(self):
        self.rows: dict[str, dict[int, int]] = {}   # behavior -> agent id -> row
        self.free: list[int] = []
        self.phase = np.zeros(0, np.int8)
        self.genome = np.zeros(0, np.int64)
        self.ret = np.zeros(0, np.float64)
        self.decisions = np.zeros(0, np.int64)
        self.fresh = np.zeros(0, bool)             # its recurrent state must be cleared before it acts

    def clear(self) -> None:
        """Every row free (the environment was reset: every agent starts a new episode)."""
        self.rows.clear()
        self.free = list(range(len(self.phase)))[::-1]
        self.phase[:] = Phase.FREE

    def _grow(self, need: int) -> None:
        old = len(self.phase)
        size = max(16, 2 * old, old + need)
        for name in ("phase", "genome", "ret", "decisions", "fresh"):
            array = getattr(self, name)
            grown = np.zeros(size, array.dtype)
            grown[:old] = array
            setattr(self, name, grown)
        self.free.extend(range(size - 1, old - 1, -1))

    def lookup(self, behavior: str, ids: np.ndarray) -> np.ndarray:
        """Rows of known agents, -1 for unknown ones."""
        known = self.rows.get(behavior, {})
        return np.fromiter((known.get(i, -1) for i in ids.tolist()), np.int64, len(ids))

    def take(self, behavior: str, ids: np.ndarray) -> np.ndarray:
        """Rows of `ids`, taking a FREE row for each agent seen for the first time."""
        known = self.rows.setdefault(behavior, {})
        rows = self.lookup(behavior, ids)
        new = np.flatnonzero(rows < 0)
        if len(new):
            if len(new) > len(self.free):
                self._grow(len(new) - len(self.free))
            for position in new.tolist():
                row = self.free.pop()
                known[int(ids[position])] = row
                rows[position] = row
            self.phase[rows[new]] = Phase.FREE
        return rows

    def release(self, behavior: str, ids: np.ndarray, rows: np.ndarray) -> None:
        """The agents `ids` (at `rows`) are gone: their rows are FREE for the next agents."""
        known = self.rows.get(behavior, {})
        for agent in ids.tolist():
            known.pop(agent, None)
        self.phase[rows] = Phase.FREE
        self.free.extend(rows.tolist())

    def live(self, behaviors) -> np.ndarray:
        """Rows of the live agents of `behaviors`."""
        rows = [row for b in behaviors for row in self.rows.get(b, {}).values()]
        return np.asarray(rows, np.int64)

