"""A short look at an environment before play: how many population agents it runs at once (env hosts
size a generation's parts by it) and every reported behavior's layout (the run's geometry, export)."""
from __future__ import annotations

from dataclasses import dataclass

from ..config.behaviors import Role
from ..config.settings_model import Settings
from ..environment import Environment
from .arrivals import BEHAVIOR_WAIT_STEPS

SURVEY_STEPS = 20   # a Unity DecisionRequester's period is at most 20 academy steps


@dataclass(frozen=True)
class Survey:
    """What a short look at an environment found."""
    agents: int                  # agents of the population behaviors at once
    layouts: dict                # behavior -> Layout, of the behaviors that reported


def survey(environment: Environment, settings: Settings) -> Survey:
    """Reset, then step with neutral actions for SURVEY_STEPS steps (longer while a configured
    behavior has not reported, up to BEHAVIOR_WAIT_STEPS), counting the population behaviors'
    agents that asked for a decision and are still there, and reading every reported behavior's
    layout. Env hosts size the parts of a generation by the count; `neatpar export` without a run
    folder's record takes the layouts."""
    population = set(settings.population_behaviors)
    if not population:   # asymmetric self-play: the populations take turns on the league behaviors
        population = {settings.with_role(Role.LEAGUE)[0]}
    configured = {r.behavior for r in settings.behaviors}
    environment.reset(None)
    live: set[tuple[str, int]] = set()
    reported: set[str] = set()
    for step in range(BEHAVIOR_WAIT_STEPS):
        batches = environment.poll()
        reported.update(batches)
        for behavior in population & set(batches):
            batch = batches[behavior]
            live.difference_update((behavior, int(i)) for i in batch.terminal_ids)
            live.update((behavior, int(i)) for i in batch.decision_ids)
        if step + 1 >= SURVEY_STEPS and configured <= reported:
            break
        environment.step()
    return Survey(len(live), {b: environment.layout(b) for b in sorted(reported)})
