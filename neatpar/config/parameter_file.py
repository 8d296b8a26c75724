"""ML-Agents' `environment_parameters:` YAML, read as mlagents-learn reads it (trainers/settings.py).

A file holds either the mapping itself or a whole trainer config (its other keys are ignored, with
one line naming them). Each parameter is a constant, a sampler (`uniform` min_value/max_value,
`gaussian` mean/st_dev, `multirangeuniform` intervals, each with an optional `seed`) or a
`curriculum` of lessons (`name`, `value`, and on every lesson but the last a `completion_criteria`).
A plain parameter becomes a curriculum of one lesson named after it, as in ML-Agents.

Every mistake is a one-line ConfigError naming the file, the parameter and the lesson, raised when
the settings are read: before any simulator starts.
"""
from __future__ import annotations

import enum
import logging
import math
from dataclasses import dataclass, replace
from typing import Any, Mapping, Union

import yaml

from ..errors import ConfigError

log = logging.getLogger("neatpar")

NO_SEED = -1   # ML-Agents' default: the seed comes from the run's seed (resolve_seeds)
TRAINER_KEYS = ("behaviors", "env_settings", "engine_settings", "checkpoint_settings", "torch_settings",
                "default_settings", "debug")


@dataclass(frozen=True)
class Constant:
    """A float sent as it is (EnvironmentParametersChannel.set_float_parameter)."""
    value: float
    seed: int = NO_SEED   # unused by the game; counted by ML-Agents' seed rule all the same


@dataclass(frozen=True)
class Uniform:
    """A new draw from [min_value, max_value) each time the game reads the parameter."""
    min_value: float
    max_value: float
    seed: int = NO_SEED


@dataclass(frozen=True)
class Gaussian:
    """A new normal draw of mean and standard deviation st_dev each time the game reads it."""
    mean: float
    st_dev: float
    seed: int = NO_SEED


@dataclass(frozen=True)
class MultiRangeUniform:
    """A uniform draw from one of the intervals, picked in proportion to its length."""
    intervals: tuple[tuple[float, float], ...]
    seed: int = NO_SEED


Value = Union[Constant, Uniform, Gaussian, MultiRangeUniform]
SEEDS = 2**31   # a sampler's seed is a C# int: seeds moved past it wrap around


def moved_draws(values: Mapping[str, Any], offset: int) -> dict[str, Any]:
    """`values` (name -> Value or number) with each sampler's seed moved by `offset` (0: as they
    are). The game starts a sampler's draws again from its seed at each message, so episodes that
    must not draw what training draws (a check of the winner on fresh episodes) get their seeds
    moved: other draws, the same in every repeat of the run."""
    return {name: replace(value, seed=(value.seed + offset) % SEEDS)
            if isinstance(value, (Uniform, Gaussian, MultiRangeUniform)) and offset else value
            for name, value in values.items()}


class Measure(enum.Enum):
    """What a completion criterion's threshold is compared with."""
    REWARD = "reward"       # the run's reward signal (run/curriculum.py says which)
    PROGRESS = "progress"   # the fraction of the run's generations done


@dataclass(frozen=True)
class CompletionCriteria:
    """When a lesson is done (ML-Agents' CompletionCriteriaSettings, same fields and defaults)."""
    behavior: str
    measure: Measure = Measure.REWARD
    threshold: float = 0.0
    min_lesson_length: int = 0
    signal_smoothing: bool = True
    require_reset: bool = False


@dataclass(frozen=True)
class Lesson:
    """One lesson: its name, the parameter's value while it lasts, and when it is done (None on the last)."""
    name: str
    value: Value
    completion_criteria: CompletionCriteria | None = None


@dataclass(frozen=True)
class Parameter:
    """One environment parameter and its lessons (one lesson for a constant or a sampler)."""
    name: str
    lessons: tuple[Lesson, ...]

    @property
    def is_curriculum(self) -> bool:
        return len(self.lessons) > 1


@dataclass(frozen=True)
class ParameterFile:
    """The environment parameters of a YAML file, in the file's order."""
    path: str
    parameters: tuple[Parameter, ...]

    @property
    def curricula(self) -> tuple[Parameter, ...]:
        """The parameters with more than one lesson: those whose lesson is recorded."""
        return tuple(p for p in self.parameters if p.is_curriculum)

    def resolve_seeds(self, run_seed: int) -> "ParameterFile":
        """Every value without a seed gets run_seed + k, k counting such values in file order
        (parameters, then their lessons), as ML-Agents' EnvironmentParameterManager._set_sampler_seeds
        does: a seeded run draws the same values again."""
        offset = 0
        parameters = []
        for parameter in self.parameters:
            lessons = []
            for lesson in parameter.lessons:
                if lesson.value.seed == NO_SEED:
                    lesson = replace(lesson, value=replace(lesson.value, seed=run_seed + offset))
                    offset += 1
                lessons.append(lesson)
            parameters.append(replace(parameter, lessons=tuple(lessons)))
        return replace(self, parameters=tuple(parameters))


# ---------------------------------------------------------------- reading

class _UniqueKeyLoader(yaml.SafeLoader):
    """YAML's safe loader that refuses a key given twice in one mapping (PyYAML keeps the last)."""

    def construct_mapping(self, node, deep=False):
        seen = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if key in seen:
                raise ConfigError(f"{self.name}: {key!r} is named twice (line {key_node.start_mark.line + 1})")
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def read_parameter_file(path: str) -> ParameterFile:
    """The environment parameters of an ML-Agents YAML file; a ConfigError for any mistake."""
    try:
        with open(path, encoding="utf-8") as stream:
            loader = _UniqueKeyLoader(stream)
            loader.name = path
            try:
                document = loader.get_single_data()
            finally:
                loader.dispose()
    except OSError as error:
        raise ConfigError(f"{path}: cannot be read ({error.strerror})") from None
    except yaml.YAMLError as error:
        raise ConfigError(f"{path}: not YAML: {' '.join(str(error).split())}") from None
    if not isinstance(document, Mapping):
        raise ConfigError(f"{path}: holds no environment_parameters mapping")
    if "environment_parameters" in document:
        others = [str(k) for k in document if k != "environment_parameters"]
        if others:
            log.info("%s: a trainer config; neatpar reads its environment_parameters and ignores %s",
                     path, ", ".join(others))
        document = document["environment_parameters"]
        if not isinstance(document, Mapping) or not document:
            raise ConfigError(f"{path}: environment_parameters is not a mapping of parameters")
    elif any(key in document for key in TRAINER_KEYS):
        raise ConfigError(f"{path}: a trainer config without environment_parameters")
    return ParameterFile(path, tuple(_parameter(path, str(name), body) for name, body in document.items()))


def _parameter(path: str, name: str, body: Any) -> Parameter:
    where = f"{path}: parameter {name!r}"
    if isinstance(body, Mapping) and "curriculum" in body:
        extra = set(body) - {"curriculum"}
        if extra:
            raise ConfigError(f"{where} has {', '.join(sorted(map(str, extra)))} beside its curriculum")
        lessons = body["curriculum"]
        if not isinstance(lessons, list) or not lessons:
            raise ConfigError(f"{where}: curriculum is not a list of lessons")
        read = tuple(_lesson(where, i, lesson, i == len(lessons) - 1) for i, lesson in enumerate(lessons))
        names = [lesson.name for lesson in read]
        twice = next((n for n in names if names.count(n) > 1), None)
        if twice is not None:
            raise ConfigError(f"{where}: lesson {twice!r} is named twice")
        return Parameter(name, read)
    return Parameter(name, (Lesson(name, _value(where, body)),))


LESSON_KEYS = ("name", "value", "completion_criteria")


def _lesson(where: str, index: int, body: Any, last: bool) -> Lesson:
    if not isinstance(body, Mapping):
        raise ConfigError(f"{where}: lesson {index} is not a mapping of {', '.join(LESSON_KEYS)}")
    name = body.get("name")
    here = f"{where} lesson {name!r}" if name is not None else f"{where} lesson {index}"
    _known(here, body, LESSON_KEYS)
    if name is None:
        raise ConfigError(f"{here} has no name")
    if "value" not in body:
        raise ConfigError(f"{here} has no value")
    criteria = body.get("completion_criteria")
    if last and criteria is not None:
        raise ConfigError(f"{here} is the last lesson: it is never done, so it takes no completion_criteria")
    if not last and criteria is None:
        raise ConfigError(f"{here} has no completion_criteria: every lesson but the last needs one")
    return Lesson(str(name), _value(here, body["value"]), None if last else _criteria(here, criteria))


CRITERIA_KEYS = ("behavior", "measure", "threshold", "min_lesson_length", "signal_smoothing", "require_reset")


def _criteria(where: str, body: Any) -> CompletionCriteria:
    here = f"{where} completion_criteria"
    if not isinstance(body, Mapping):
        raise ConfigError(f"{here} is not a mapping of {', '.join(CRITERIA_KEYS)}")
    _known(here, body, CRITERIA_KEYS)
    if "behavior" not in body:
        raise ConfigError(f"{here} names no behavior")
    measure = body.get("measure", "reward")
    if measure not in [m.value for m in Measure]:
        raise ConfigError(f"{here}: measure {measure!r} is not reward or progress")
    threshold = _float(here, "threshold", body.get("threshold", 0.0))
    if measure == "progress" and not 0.0 <= threshold <= 1.0:
        raise ConfigError(f"{here}: threshold {threshold:g} of measure progress is not from 0 to 1")
    length = body.get("min_lesson_length", 0)
    if not isinstance(length, int) or isinstance(length, bool) or length < 0:
        raise ConfigError(f"{here}: min_lesson_length {length!r} is not a whole number of 0 or more")
    flags = {}
    for key, default in (("signal_smoothing", True), ("require_reset", False)):
        flags[key] = body.get(key, default)
        if not isinstance(flags[key], bool):
            raise ConfigError(f"{here}: {key} {flags[key]!r} is not true or false")
    return CompletionCriteria(str(body["behavior"]), Measure(measure), threshold, length, **flags)


SAMPLER_PARAMETERS = {"constant": ("value",), "uniform": ("min_value", "max_value"), "gaussian": ("mean", "st_dev"),
                      "multirangeuniform": ("intervals",)}


def _value(where: str, body: Any) -> Value:
    """A constant (a number) or a sampler ({sampler_type, sampler_parameters})."""
    if isinstance(body, (int, float)) and not isinstance(body, bool):
        return Constant(_float(where, "value", body))
    if not isinstance(body, Mapping):
        raise ConfigError(f"{where}: {body!r} is neither a number nor a sampler (sampler_type, sampler_parameters)")
    _known(where, body, ("sampler_type", "sampler_parameters"))
    kind = body.get("sampler_type")
    if kind is None:
        raise ConfigError(f"{where}: a sampler needs a sampler_type ({', '.join(SAMPLER_PARAMETERS)})")
    if kind not in SAMPLER_PARAMETERS:
        raise ConfigError(f"{where}: unknown sampler_type {kind!r}: use {', '.join(SAMPLER_PARAMETERS)}")
    given = body.get("sampler_parameters")
    if not isinstance(given, Mapping):
        raise ConfigError(f"{where}: the {kind} sampler needs sampler_parameters "
                          f"({', '.join(SAMPLER_PARAMETERS[kind])}, optional seed)")
    here = f"{where} {kind} sampler"
    _known(here, given, SAMPLER_PARAMETERS[kind] + ("seed",))
    missing = [key for key in SAMPLER_PARAMETERS[kind] if key not in given]
    if missing:
        raise ConfigError(f"{here} has no {', '.join(missing)}")
    seed = given.get("seed", NO_SEED)
    if not isinstance(seed, int) or isinstance(seed, bool) or not -2**31 <= seed < 2**31:
        raise ConfigError(f"{here}: seed {seed!r} is not a 32-bit whole number")
    if kind == "constant":
        return Constant(_float(here, "value", given["value"]), seed)
    if kind == "uniform":
        low, high = _float(here, "min_value", given["min_value"]), _float(here, "max_value", given["max_value"])
        if low > high:
            raise ConfigError(f"{here}: min_value {low:g} is greater than max_value {high:g}")
        return Uniform(low, high, seed)
    if kind == "gaussian":
        st_dev = _float(here, "st_dev", given["st_dev"])
        if st_dev < 0:
            raise ConfigError(f"{here}: st_dev {st_dev:g} is negative")
        return Gaussian(_float(here, "mean", given["mean"]), st_dev, seed)
    return MultiRangeUniform(_intervals(here, given["intervals"]), seed)


def _intervals(where: str, body: Any) -> tuple[tuple[float, float], ...]:
    if not isinstance(body, list) or not body:
        raise ConfigError(f"{where}: intervals is not a list of [min, max] pairs")
    pairs = []
    for item in body:
        if not isinstance(item, list) or len(item) != 2:
            raise ConfigError(f"{where}: interval {item!r} is not a [min, max] pair")
        low, high = _float(where, "interval", item[0]), _float(where, "interval", item[1])
        if low > high:
            raise ConfigError(f"{where}: interval [{low:g}, {high:g}] has its minimum above its maximum")
        pairs.append((low, high))
    if sum(high - low for low, high in pairs) <= 0:
        raise ConfigError(f"{where}: the intervals have no length to draw from")
    return tuple(pairs)


def _float(where: str, key: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ConfigError(f"{where}: {key} {value!r} is not a finite number")
    return float(value)


def _known(where: str, body: Mapping, keys: tuple[str, ...]) -> None:
    unknown = [str(k) for k in body if k not in keys]
    if unknown:
        raise ConfigError(f"{where}: unknown key {unknown[0]!r} (known: {', '.join(keys)})")
