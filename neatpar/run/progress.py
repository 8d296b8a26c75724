"""Live progress of a generation on a terminal: a tqdm bar of the episodes finished out of those to
play, with the scored agent-steps per second, cleared when the generation ends so that only its
summary line stays. Nothing is drawn when the stream is not a terminal.

The episode runner (or, with env hosts, the host scheduler) calls `update` with the generation's
stats so far: once per simulator step in process, about every quarter second from env hosts.
"""
from __future__ import annotations

import sys
import time
from typing import TextIO

from tqdm import tqdm

from ..generation_stats import GenerationStats

REDRAW_SECONDS = 0.2  # the bar is redrawn at most this often, however often it is updated


class GenerationBar:
    """One generation's bar at a time: start, updates, close."""

    def __init__(self, stream: TextIO | None = None, enabled: bool | None = None):
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = _is_terminal(self.stream) if enabled is None else enabled
        self._bar: tqdm | None = None
        self._started = self._next_draw = 0.0

    def start(self, generation: int, episodes: int) -> None:
        """A bar for `generation`, which plays `episodes` scored episodes."""
        self.close()
        if not self.enabled:
            return
        self._bar = tqdm(total=episodes, desc=f"gen {generation:4d}", leave=False, file=self.stream,
                         dynamic_ncols=True, bar_format="{desc} |{bar}| {n_fmt}/{total_fmt} episodes "
                         "[{elapsed}<{remaining}{postfix}]")
        self._started = time.perf_counter()
        self._next_draw = self._started + REDRAW_SECONDS

    def update(self, stats: GenerationStats) -> None:
        """The generation's episodes and scored decisions so far (the runners' progress callback)."""
        bar = self._bar
        if bar is None:
            return
        now = time.perf_counter()
        if now < self._next_draw:
            return
        self._next_draw = now + REDRAW_SECONDS
        bar.n = stats.episodes
        bar.set_postfix_str(f"{stats.scored_steps / (now - self._started):,.0f} agent-steps/s", refresh=False)
        bar.refresh()

    def close(self) -> None:
        """Clear the bar from the terminal (the summary line takes its place)."""
        bar, self._bar = self._bar, None
        if bar is not None:
            bar.close()


def _is_terminal(stream) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False
