"""Module-level state that spawn makes differ per worker: values drawn at import from the global
random generators without seeding them.

A spawn worker re-runs the top level of the main script (and imports its modules again), so a
value drawn there from `random` or numpy's global generator differs in every worker and from the
main process, silently. A worker snapshots both generators before it re-imports the main script
and checks them afterwards: a generator whose new state can be reached from the old one by
drawing alone (its Mersenne Twister key is the old one, or the old one twisted a few times) was
drawn from without being seeded. Seeding replaces the key, so a seeded program is never flagged.
"""
from __future__ import annotations

import random
import sys
from typing import Any, NamedTuple

_WORDS = 624        # 32-bit words in a Mersenne Twister state
MAX_TWISTS = 256    # draws of up to 256 * 624 words (80,000 random() calls) are recognised


class Snapshot(NamedTuple):
    """The global generators' states at one moment (numpy's None when numpy is not loaded)."""
    random: Any
    numpy: Any


def snapshot() -> Snapshot:
    """The states of `random`'s and (if numpy is loaded) numpy's global generators. numpy 2 loads
    numpy.random on first use only: loaded here, so that a first draw later is seen as one."""
    np_random = sys.modules.get("numpy.random")
    if np_random is None and "numpy" in sys.modules:
        import numpy.random as np_random
    return Snapshot(random.getstate(), np_random.get_state() if np_random is not None else None)


def unseeded_draws(before: Snapshot) -> tuple[str, ...]:
    """The global generators drawn from since `before` without being seeded."""
    now = snapshot()
    drawn = []
    if _random_drawn(before.random, now.random):
        drawn.append("random")
    if before.numpy is not None and now.numpy is not None and _numpy_drawn(before.numpy, now.numpy):
        drawn.append("numpy.random")
    return tuple(drawn)


def _random_drawn(before: tuple, after: tuple) -> bool:
    key, position = before[1][:_WORDS], before[1][_WORDS]
    target = after[1][:_WORDS]
    if after == before:
        return False
    if target == key:
        return after[1][_WORDS] >= position
    generator = random.Random()
    generator.setstate(before)
    if position < _WORDS:
        generator.getrandbits(32 * (_WORDS - position))  # to the end of the current block
    for _ in range(MAX_TWISTS):
        generator.getrandbits(32 * _WORDS)  # one twist, then its whole block
        if generator.getstate()[1][:_WORDS] == target:
            return True
    return False


def _numpy_drawn(before: tuple, after: tuple) -> bool:
    import numpy as np
    key, position, target = before[1], int(before[2]), after[1]
    if np.array_equal(target, key):
        return int(after[2]) > position or after[3:] != before[3:]
    generator = np.random.MT19937()
    generator.state = {"bit_generator": "MT19937", "state": {"key": key, "pos": position}}
    if position < _WORDS:
        generator.random_raw(_WORDS - position)
    for _ in range(MAX_TWISTS):
        generator.random_raw(_WORDS)
        if np.array_equal(generator.state["state"]["key"], target):
            return True
    return False


def warning_text(drawn: tuple[str, ...]) -> str:
    """The one-line warning for generators drawn from, unseeded, while a worker re-imported the script."""
    names = " and ".join(f"{name}'s global generator" for name in drawn)
    return (f"a spawn worker drew from {names} without seeding it while it re-imported your main script, "
            f"so values drawn at import (module-level state) differ in every worker and from this process: "
            f"seed the generator first, or compute such values under `if __name__ == \"__main__\":` and "
            f"give them to the workers with initializer/initargs")
