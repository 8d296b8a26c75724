"""Which behaviors have reported to a runner, and how long a configured one may take to: a behavior
that never comes is an error naming the present ones, not a hang."""
from __future__ import annotations

from typing import Iterable

BEHAVIOR_WAIT_STEPS = 1000   # environment steps a configured behavior may take to first report


class Arrivals:
    """Which behaviors have reported to a runner: the configured ones whose first report was
    checked (their layout fits the genomes), and the reported ones the config does not name
    (warned about once every configured one has come)."""

    def __init__(self, configured: Iterable[str]):
        self.configured = list(configured)
        self.checked: set[str] = set()
        self.unlisted: set[str] = set()

    def complete(self) -> bool:
        """Every configured behavior has reported."""
        return len(self.checked) == len(self.configured)

    def missing(self) -> list[str]:
        """The configured behaviors that have not reported yet, in the config's order."""
        return [b for b in self.configured if b not in self.checked]

    def take_unlisted(self) -> list[str]:
        """The unlisted behaviors seen since the last call, sorted."""
        found, self.unlisted = sorted(self.unlisted), set()
        return found
