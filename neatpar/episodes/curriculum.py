"""The lessons of a run's environment parameters (config/parameter_file.py) and when they advance,
as ML-Agents' EnvironmentParameterManager advances them, at generation boundaries.

Each parameter is in one lesson; a lesson with completion criteria is LEARNING, the last lesson
FINAL (a parameter without a curriculum is FINAL from the start). After each generation every
LEARNING parameter's criteria are checked, in the file's order, and a parameter whose criteria are
met moves to its next lesson (TRANSITIONS):

- measure `progress`: the fraction of the run's generations done (generations evaluated /
  `generations`) must exceed the threshold (ML-Agents: steps / max_steps).
- measure `reward`: the generation's champion's mean episode return (the genome of the best
  fitness this generation, the mean of the returns of its episodes: the policy the run would
  hand over now, as ML-Agents' reward buffer holds the returns of its current policy), smoothed
  as ML-Agents smooths it when `signal_smoothing` (0.25 x the previous smoothed value + 0.75 x the
  new one, from 0), must exceed the threshold.
- `min_lesson_length` counts generations: none is checked before that many generations have been
  played since the last lesson change of any parameter (ML-Agents counts episodes in the reward
  buffer it clears at every lesson change).
- `require_reset`: every generation starts with every agent's new episode, so a lesson change
  always takes effect at the next generation's reset, as ML-Agents' reset does.

The values sent at each generation's reset are every parameter's current lesson's (`values`), as
ML-Agents' EnvManager.reset sends get_current_samplers: every simulator gets them (every env host
with its part of the generation), and a sampler starts its draws again from its seed (moved on for
rounds other than a generation's first, runner.py: config/parameter_file.moved_draws).
"""
from __future__ import annotations

import dataclasses
import enum
import math
from dataclasses import dataclass, field

from ..config.parameter_file import Measure, Parameter, ParameterFile, Value
from ..errors import ConfigError


class LessonStatus(enum.Enum):
    """Where a parameter stands in its curriculum."""
    LEARNING = "learning"   # a lesson with completion criteria
    FINAL = "final"         # its last lesson: it stays there


class Event(enum.Enum):
    """What a generation's check found for one parameter."""
    NOT_MET = "not met"
    MET = "met"


class Step(enum.Enum):
    """What a parameter does after a generation's check."""
    STAY = "stay"         # in its lesson
    ADVANCE = "advance"   # to its next lesson (whose status is FINAL if it is the last)


# (status, event) -> step
TRANSITIONS = {
    (LessonStatus.LEARNING, Event.NOT_MET): Step.STAY,
    (LessonStatus.LEARNING, Event.MET): Step.ADVANCE,
    (LessonStatus.FINAL, Event.NOT_MET): Step.STAY,   # a final lesson is never checked
}


@dataclass(frozen=True)
class LessonChange:
    """A parameter moved from one lesson to the next after `generation`."""
    parameter: str
    generation: int
    lesson: int          # the new lesson's index
    name: str            # the new lesson's name
    measured: float      # what met the threshold (the smoothed reward, or the progress)

    def line(self) -> str:
        """The progress line that announces it."""
        return (f"lesson: {self.parameter} -> {self.name!r} (lesson {self.lesson}) after generation "
                f"{self.generation}, measured {self.measured:.4g}")


@dataclass
class CurriculumState:
    """What a checkpoint keeps: each parameter's lesson and smoothed reward, the generations
    played since the last lesson change, and whether the next generation is the first of new
    lessons (`begins`: the run's champion and winner of the old ones no longer count)."""
    lessons: dict[str, int] = field(default_factory=dict)
    smoothed: dict[str, float] = field(default_factory=dict)
    since_change: int = 0
    begins: bool = False


class Curriculum:
    """The lessons of a run's parameter file, its seeds resolved from the run's seed."""

    def __init__(self, parameters: ParameterFile | None, run_seed: int | None, behaviors: list[str]):
        self.file = parameters.resolve_seeds(run_seed or 0) if parameters is not None else None
        self.parameters: tuple[Parameter, ...] = self.file.parameters if self.file is not None else ()
        self.state = CurriculumState({p.name: 0 for p in self.parameters}, {p.name: 0.0 for p in self.parameters})
        self.played: dict[str, int] = {}        # the curricula's lessons of the generation last evaluated
        self.changes: list[LessonChange] = []   # the lesson changes after it
        for parameter in self.parameters:
            for lesson in parameter.lessons:
                criteria = lesson.completion_criteria
                if criteria is not None and not _behavior_in(criteria.behavior, behaviors):
                    raise ConfigError(f"{self.file.path}: parameter {parameter.name!r} lesson {lesson.name!r} "
                                      f"completion_criteria: behavior {criteria.behavior!r} is not a population "
                                      f"behavior of the run ({', '.join(behaviors)})")

    def __bool__(self) -> bool:
        return bool(self.parameters)

    def lessons(self) -> dict[str, int]:
        """The curricula's current lesson indices, by parameter (parameters of one lesson left out)."""
        return {p.name: self.state.lessons[p.name] for p in self.parameters if p.is_curriculum}

    def status(self, parameter: Parameter) -> LessonStatus:
        lesson = parameter.lessons[self.state.lessons[parameter.name]]
        return LessonStatus.FINAL if lesson.completion_criteria is None else LessonStatus.LEARNING

    def values(self) -> dict[str, Value] | None:
        """Every parameter's current lesson's value, in the file's order (None: no file)."""
        if not self.parameters:
            return None
        return {p.name: p.lessons[self.state.lessons[p.name]].value for p in self.parameters}

    def end_generation(self, generation: int, generations: int, champion_return: float | None) -> list[LessonChange]:
        """Check every LEARNING parameter after `generation` (counted from 0) of a run of
        `generations`, whose champion's mean episode return was `champion_return` (None: none);
        the lesson changes, which the next generation plays."""
        self.played = self.lessons()
        self.changes = []
        if not self.parameters:
            return self.changes
        self.state.since_change += 1
        progress = (generation + 1) / generations if generations else 0.0
        for parameter in self.parameters:
            status = self.status(parameter)
            index = self.state.lessons[parameter.name]
            event, measured = (Event.NOT_MET, math.nan) if status is LessonStatus.FINAL else \
                self._check(parameter, index, progress, champion_return)
            if TRANSITIONS[(status, event)] is Step.ADVANCE:
                self.state.lessons[parameter.name] = index + 1
                self.changes.append(LessonChange(parameter.name, generation, index + 1,
                                                 parameter.lessons[index + 1].name, measured))
        if self.changes:
            self.state.since_change = 0
        self.state.begins = bool(self.changes)
        return self.changes

    def take_beginning(self) -> bool:
        """Whether the generation about to be played is the first of new lessons (once per change):
        a fitness scored in other lessons is not comparable with this one's."""
        begins, self.state.begins = self.state.begins, False
        return begins

    def _check(self, parameter: Parameter, index: int, progress: float,
               champion_return: float | None) -> tuple[Event, float]:
        """CompletionCriteriaSettings.need_increment, with generations for episodes."""
        criteria = parameter.lessons[index].completion_criteria
        if self.state.since_change < criteria.min_lesson_length:
            return Event.NOT_MET, math.nan
        if criteria.measure is Measure.PROGRESS:
            return (Event.MET if progress > criteria.threshold else Event.NOT_MET), progress
        if champion_return is None or math.isnan(champion_return):
            return Event.NOT_MET, math.nan
        measure = champion_return
        if criteria.signal_smoothing:
            measure = 0.25 * self.state.smoothed[parameter.name] + 0.75 * measure
            self.state.smoothed[parameter.name] = measure
        return (Event.MET if measure > criteria.threshold else Event.NOT_MET), measure

    def record(self) -> dict | None:
        """The state as a checkpoint keeps it: a plain dict (None without a parameter file)."""
        return dataclasses.asdict(self.state) if self.parameters else None

    def restore(self, state: CurriculumState | dict | None) -> None:
        """Continue from a checkpoint's state (None: a checkpoint without one, lesson 0 everywhere)."""
        if state is None or not self.parameters:
            return
        if isinstance(state, dict):
            state = CurriculumState(**state)
        for parameter in self.parameters:
            lesson = state.lessons.get(parameter.name, 0)
            if not 0 <= lesson < len(parameter.lessons):
                raise ConfigError(f"the checkpoint has parameter {parameter.name!r} in lesson {lesson}, but "
                                  f"{self.file.path} gives it {len(parameter.lessons)}")
        self.state = CurriculumState({p.name: state.lessons.get(p.name, 0) for p in self.parameters},
                                     {p.name: state.smoothed.get(p.name, 0.0) for p in self.parameters},
                                     state.since_change, getattr(state, "begins", False))

    def summary(self) -> str:
        """The curricula's lessons as a run ends: `wall: 'high' (2 of 0-2)`."""
        return ", ".join(f"{p.name}: {p.lessons[self.state.lessons[p.name]].name!r} "
                         f"(lesson {self.state.lessons[p.name]} of 0-{len(p.lessons) - 1})"
                         for p in self.parameters if p.is_curriculum)


def _behavior_in(behavior: str, behaviors: list[str]) -> bool:
    """ML-Agents names a behavior without its `?team=N`; neatpar's names carry it: either matches."""
    return any(behavior in (name, name.partition("?")[0]) for name in behaviors)
