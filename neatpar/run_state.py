"""What an evaluator carries from one generation to the next, and a checkpoint keeps: the
champion, the generations evaluated so far, the leagues' state, the search's state."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass
class RunState:
    """An evaluator's state between generations. `champion` is the best genome so far (a frozen
    copy), `generation` the run's generations evaluated so far (both populations' in an
    asymmetric game), `selfplay` the leagues and their generator (episodes/league.py: SelfPlay.state),
    None without league roles, `search` the search strategy's (search/strategy.py: Search.state;
    None in checkpoints of an earlier neatpar, whose runs searched on fitness), `validation` the
    winner chosen on fresh episodes (episodes/validation.py: ValidationState; None in checkpoints
    of an earlier neatpar)."""
    champion: Any = None
    generation: int = 0
    selfplay: dict | None = None
    search: dict | None = None
    validation: Any = None
    curriculum: Any = None   # the environment parameters' lessons (episodes/curriculum.py: Curriculum.record)
