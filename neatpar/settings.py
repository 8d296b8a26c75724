"""neatpar's settings: one model for the `[neatpar]` section, keyword arguments and CLI flags.

Every setting is declared once, as a field of `Settings` with its default, its reader and its
help text. A reader takes text (config file, command line) or a Python value (keyword argument)
and returns the checked value, or raises a one-line ConfigError that names the setting the way
the user wrote it (`[neatpar] max_steps`, `max_steps`, `--max-steps`). Rules between settings are
checked in `Settings.__post_init__`, so every way of making or changing settings (the config file,
`Settings(...)`, `dataclasses.replace`, `Settings.with_changes`) goes through the same checks.
neat-python ignores the `[neatpar]` section, so one file configures both.
"""
from __future__ import annotations

import ast
import configparser
import contextlib
import dataclasses
import difflib
import enum
import math
import os
import shlex
import tempfile
from dataclasses import dataclass, field
from typing import Any, Callable, Literal, Mapping, get_args

import neat

from . import evolution
from .envs.gym import DEFAULT_COPIES, PREFIX as GYM_PREFIX, behavior_name
from .errors import ConfigError, one_line

Fitness = Literal["mean", "min", "max", "median", "sum"]
Network = Literal["feedforward", "recurrent", "ctrnn"]
Inference = Literal["inprocess", "pool", "auto"]
Backend = Literal["local", "ray"]
NeatStep = Literal["neatpar", "neat-python"]
FITNESS_AGGREGATES = get_args(Fitness)
NETWORKS = get_args(Network)
INFERENCE = get_args(Inference)
BACKENDS = get_args(Backend)
NEAT_STEPS = get_args(NeatStep)
MAX_CTRNN_STEPS = 1000  # Euler steps per decision (the ONNX model unrolls them)


class Role(enum.StrEnum):
    """Who drives a behavior's agents (see BehaviorRole)."""
    POPULATION = "population"
    CHAMPION = "champion"
    LEAGUE = "league"
    FILE = "file"


ROLES = (Role.POPULATION, Role.CHAMPION, Role.LEAGUE)   # the roles a config names; others are genome files


class EnvKind(enum.Enum):
    """What kind of environment `env` names."""
    BUILD = "build"            # a Unity build's path
    EDITOR = "editor"          # the Unity Editor
    GYMNASIUM = "gymnasium"    # a Gymnasium environment


@dataclass(frozen=True)
class EnvTarget:
    """The environment a settings' `env` names, parsed once: its kind, and the build's path or the
    Gymnasium environment ('ID', 'module:Id' or 'module:Class'); None for the Editor."""
    kind: EnvKind
    name: str | None

    @classmethod
    def of(cls, env: str | None) -> "EnvTarget":
        """`env` as the reader `environment` leaves it (GYM_PREFIX + target, a path, or None)."""
        if env is None:
            return cls(EnvKind.EDITOR, None)
        if env.startswith(GYM_PREFIX):
            return cls(EnvKind.GYMNASIUM, env[len(GYM_PREFIX):])
        return cls(EnvKind.BUILD, env)


class Source(enum.Enum):
    """Where a value came from; decides how an error names the setting."""
    FILE = "file"
    KEYWORD = "keyword"
    FLAG = "flag"

    def label(self, name: str) -> str:
        if self is Source.FILE:
            return f"[neatpar] {name}"
        if self is Source.FLAG:
            return "--" + name.replace("_", "-")
        return name

    def shown(self, name: str, value: Any) -> str:
        """The setting as the user wrote it: `[neatpar] key = text`, `key=value`, `--key text`."""
        text = value if isinstance(value, str) and self is not Source.KEYWORD else repr(value)
        if self is Source.FILE:
            return f"[neatpar] {name} = {text}"
        if self is Source.FLAG:
            return f"--{name.replace('_', '-')} {text}"
        return f"{name}={text}"


@dataclass(frozen=True)
class Where:
    """How to name a setting in errors, and the folder relative paths are resolved against."""
    source: Source = Source.KEYWORD
    base: str = "."

    def fail(self, name: str, value: Any, why: str) -> ConfigError:
        """'<the setting as written> <why>', e.g. `[neatpar] max_steps = 0 is out of range: ...`."""
        return ConfigError(f"{self.source.shown(name, value)} {why}")


Reader = Callable[[str, Any, Where], Any]
# Each reader also says in words what it accepts (`reader.accepts`), for the generated reference.


def accepting(text: str) -> Callable[[Reader], Reader]:
    """Decorate a reader with what it accepts, in words."""
    def mark(reader: Reader) -> Reader:
        reader.accepts = text
        return reader
    return mark


@dataclass(frozen=True)
class BehaviorRole:
    """Who drives a behavior's agents: the genomes under evaluation, the best genome so far, past
    champions drawn from a league (run/league.py), or a genome saved in a file (`genome_file`)."""
    behavior: str
    role: Role
    genome_file: str | None = None


# ---------------------------------------------------------------- readers (text or Python values)

def _typed(name: str, value: Any, where: Where, parse: Callable, kinds: tuple, what: str):
    """`value` as text parsed by `parse`, or as a Python value of `kinds` (never a bool)."""
    result = value
    if isinstance(value, str):
        try:
            result = parse(value.strip())
        except ValueError:
            raise where.fail(name, value, f"is not {what}") from None
    if isinstance(result, bool) or not isinstance(result, kinds):
        raise where.fail(name, value, f"is not {what}")
    return result


def integer(low: int, high: int | None = None) -> Reader:
    def read(name: str, value: Any, where: Where) -> int:
        number = _typed(name, value, where, int, (int,), "an integer")
        if number < low or (high is not None and number > high):
            bound = f"from {low} to {high}" if high is not None else f"at least {low}"
            raise where.fail(name, value, f"is out of range: use an integer {bound}")
        return number
    read.accepts = f"an integer from {low} to {high}" if high is not None else f"an integer, at least {low}"
    return read


def number(positive: bool = True) -> Reader:
    def read(name: str, value: Any, where: Where) -> float:
        result = _typed(name, value, where, float, (int, float), "a number")
        if positive and not result > 0:
            raise where.fail(name, value, "must be greater than 0")
        return float(result)
    read.accepts = "a number greater than 0" if positive else "a number"
    return read


def choice(options: tuple[str, ...]) -> Reader:
    def read(name: str, value: Any, where: Where) -> str:
        text = value.strip().lower() if isinstance(value, str) else value
        if text not in options:
            raise where.fail(name, value, f"is not one of {', '.join(options)}")
        return text
    read.options = options  # shown by the CLI's help
    read.accepts = "one of " + ", ".join(options)
    return read


@accepting("a number from 0 to 1")
def fraction(name: str, value: Any, where: Where) -> float:
    """A number from 0 to 1 (a probability)."""
    result = number(positive=False)(name, value, where)
    if not 0.0 <= result <= 1.0:
        raise where.fail(name, value, "is out of range: use a number from 0 to 1")
    return result


@accepting("true or false (also yes/no, on/off, 1/0)")
def boolean(name: str, value: Any, where: Where) -> bool:
    if isinstance(value, bool):
        return value
    text = value.strip().lower() if isinstance(value, str) else None
    if text in ("true", "yes", "1", "on"):
        return True
    if text in ("false", "no", "0", "off"):
        return False
    raise where.fail(name, value, "is not true or false")


def optional(reader: Reader) -> Reader:
    """`reader`, or None for None or an empty/'none' text."""
    def read(name: str, value: Any, where: Where):
        if value is None or (isinstance(value, str) and value.strip().lower() in ("", "none")):
            return None
        return reader(name, value, where)
    read.accepts = f"{reader.accepts}, or none"
    return read


@accepting("command-line arguments, split as a POSIX shell splits them (from Python also a list of strings)")
def arguments(name: str, value: Any, where: Where) -> tuple[str, ...]:
    if isinstance(value, str):
        try:
            return tuple(shlex.split(value))
        except ValueError as exc:
            raise where.fail(name, value, f"cannot be split into arguments ({exc})") from None
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise where.fail(name, value, "is not arguments: give one string or a list of strings")


@accepting("gymnasium:ID, gymnasium:module:Id or gymnasium:module:Class; a build path relative to the config "
           "file; or editor (from Python also a Gymnasium Env class)")
def environment(name: str, value: Any, where: Where) -> str | None:
    """A Gymnasium environment ('gymnasium:ID', 'gymnasium:module:Class', or an Env class given from
    Python), a build path (made absolute against the config file's folder), or None for the Editor."""
    if value is None:
        return None
    if isinstance(value, type):  # an Env class of the user's own, named by where it is defined
        return f"{GYM_PREFIX}{value.__module__}:{value.__qualname__}"
    if not isinstance(value, (str, os.PathLike)) or not str(value).strip():
        raise where.fail(name, value, "is not a build: give its path (relative to the config file) or 'editor' "
                                      "(or gymnasium:ID for a Gymnasium environment)")
    text = str(value).strip()
    if text.lower().startswith(GYM_PREFIX):
        target = text[len(GYM_PREFIX):].strip()
        if not target or not behavior_name(target):
            raise where.fail(name, value, "names no Gymnasium environment: give a registered id, e.g. "
                                          "gymnasium:CartPole-v1, or module:Class of your own Env class")
        return GYM_PREFIX + target
    if text.lower() == "editor":
        return None
    return os.path.normpath(os.path.join(where.base, text))


@accepting("name = value pairs of Python literals, separated by commas or lines (from Python also a mapping)")
def keyword_arguments(name: str, value: Any, where: Where) -> tuple[tuple[str, Any], ...]:
    """`name = value` pairs of Python literals ('continuous = True, gravity = -9.5'), a mapping, or
    a sequence of pairs. true, false and none may be written in lower case."""
    if isinstance(value, str):
        lines = [line.strip().rstrip(",") for line in value.splitlines()]
        text = ", ".join(line for line in lines if line)
        try:
            call = ast.parse(f"f({text})", mode="eval").body
        except SyntaxError as error:
            raise where.fail(name, value, f"is not 'name = value' pairs ({error.msg}), e.g. continuous = True, "
                                          f"gravity = -9.5") from None
        if call.args or any(k.arg is None for k in call.keywords):
            raise where.fail(name, value, "is not 'name = value' pairs, e.g. continuous = True, gravity = -9.5")
        pairs = [(k.arg, _literal(name, value, k, where)) for k in call.keywords]
    elif isinstance(value, Mapping):
        pairs = list(value.items())
    elif isinstance(value, (list, tuple)) and all(isinstance(p, (list, tuple)) and len(p) == 2 for p in value):
        pairs = [tuple(p) for p in value]
    else:
        raise where.fail(name, value, "is not keyword arguments: give 'name = value' pairs or a mapping")
    bad = [key for key, _ in pairs if not isinstance(key, str) or not key.isidentifier()]
    if bad:
        raise where.fail(name, value, f"has {bad[0]!r}, which is not a keyword argument name")
    return tuple((key, v) for key, v in pairs)


def _literal(name: str, value: str, keyword: ast.keyword, where: Where) -> Any:
    node = keyword.value
    if isinstance(node, ast.Name) and node.id.lower() in ("true", "false", "none"):
        return {"true": True, "false": False, "none": None}[node.id.lower()]
    try:
        return ast.literal_eval(node)
    except ValueError:
        raise where.fail(name, value, f"has {keyword.arg} = {ast.unparse(node)}, which is not a Python literal: "
                                      f"quote text, e.g. {keyword.arg} = 'text'") from None


@accepting("name = number pairs, separated by commas or lines (from Python also a mapping)")
def parameters(name: str, value: Any, where: Where) -> tuple[tuple[str, float], ...]:
    """`name = number` pairs: text 'a = 1, b = 2', a mapping, or a sequence of pairs."""
    if isinstance(value, str):
        pairs = []
        for item in (part.strip() for part in value.replace("\n", ",").split(",")):
            if not item:
                continue
            key, sep, text = item.partition("=")
            if not sep or not key.strip():
                raise where.fail(name, value, f"has {item!r}, which is not 'name = number'")
            pairs.append((key.strip(), text))
    elif isinstance(value, Mapping):
        pairs = list(value.items())
    elif isinstance(value, (list, tuple)) and all(isinstance(p, (list, tuple)) and len(p) == 2 for p in value):
        pairs = [tuple(p) for p in value]
    else:
        raise where.fail(name, value, "is not 'name = number' pairs")
    return tuple((str(key), number(positive=False)(f"{name} {key}", v, where)) for key, v in pairs)


@accepting("BehaviorName: role pairs, separated by commas or lines; a role is population, champion, league "
           "or a genome file relative to the config file (from Python also a mapping)")
def behavior_roles(name: str, value: Any, where: Where) -> tuple[BehaviorRole, ...]:
    """'Name: role, ...' text, a {name: role} mapping, or BehaviorRole records."""
    if isinstance(value, str):
        items = [part.strip() for part in value.replace("\n", ",").split(",") if part.strip()]
        pairs = []
        for item in items:
            behavior, sep, role = item.rpartition(":")
            if not sep or not behavior.strip() or not role.strip():
                raise where.fail(name, value, f"has {item!r}, which is not 'BehaviorName: role'; roles are "
                                              f"population, champion, league or a saved genome file")
            pairs.append((behavior.strip(), role.strip()))
    elif isinstance(value, Mapping):
        pairs = [(str(k), str(v)) for k, v in value.items()]
    elif isinstance(value, (list, tuple)) and all(isinstance(r, BehaviorRole) for r in value):
        pairs = [(r.behavior, r.genome_file if r.role == Role.FILE else r.role) for r in value]   # str roles too
    else:
        raise where.fail(name, value, "is not 'BehaviorName: role' pairs, e.g. 'Ball3D?team=0: population'")
    roles = tuple(_role(behavior, role, where) for behavior, role in pairs)
    if not roles:
        raise where.fail(name, value, "names no behavior: name at least one, e.g. 'Ball3D?team=0: population'")
    leagues = sum(r.role is Role.LEAGUE for r in roles)
    if not any(r.role is Role.POPULATION for r in roles) and leagues < 2:
        raise where.fail(name, value, "gives no behavior the role 'population', so no genome would ever be "
                                      "evaluated (two behaviors with the role 'league' evolve a population each)")
    names = [r.behavior for r in roles]
    if len(set(names)) != len(names):
        raise where.fail(name, value, f"names a behavior twice: {names}")
    return roles


@accepting("BehaviorName: file pairs, separated by commas or lines; files relative to the config file "
           "(from Python also a mapping)")
def behavior_files(name: str, value: Any, where: Where) -> tuple[tuple[str, str], ...]:
    """'BehaviorName: file' pairs (paths relative to the config file), or a {name: file} mapping."""
    if isinstance(value, Mapping):
        items = list(value.items())
    elif isinstance(value, str):
        items = [part.strip().rpartition(":")[::2] for part in value.replace("\n", ",").split(",") if part.strip()]
    elif isinstance(value, (list, tuple)) and all(isinstance(p, (list, tuple)) and len(p) == 2 for p in value):
        items = list(value)
    else:
        raise where.fail(name, value, "is not 'BehaviorName: file' pairs")
    bad = [f"{b}:{f}" for b, f in items if not str(b).strip() or not str(f).strip()]
    if bad:
        raise where.fail(name, value, f"has {bad[0]!r}, which is not 'BehaviorName: file'")
    return tuple((str(b).strip(), os.path.normpath(os.path.join(where.base, str(f).strip()))) for b, f in items)


@accepting(behavior_roles.accepts)
def roles_or_none(name: str, value: Any, where: Where) -> tuple[BehaviorRole, ...] | None:
    """behavior_roles, or None when not given (a Gymnasium environment then brings its own behavior)."""
    return None if value is None else behavior_roles(name, value, where)


def _role(behavior: str, role: str, where: Where) -> BehaviorRole:
    if role in ROLES:
        return BehaviorRole(behavior, Role(role))
    path = os.path.normpath(os.path.join(where.base, role))
    return BehaviorRole(behavior, Role.FILE, path)


@accepting("HOST:PORT of a Ray cluster's head")
def address(name: str, value: Any, where: Where) -> str | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if not isinstance(value, str):
        raise where.fail(name, value, "is not a Ray cluster address: give HOST:PORT")
    return value.strip()


def setting(default: Any, reader: Reader, help: str, flag: bool = False, shown_default: Any = None) -> Any:
    """A settings field: its default, how to read it, and its help (also the CLI flag's, if any);
    `shown_default` is what help texts name when the default (None) means a value chosen later."""
    metadata = {"reader": reader, "help": help, "flag": flag,
                "shown_default": default if shown_default is None else shown_default}
    if default is dataclasses.MISSING:
        return field(metadata=metadata)
    return field(default=default, metadata=metadata)


REQUIRED = dataclasses.MISSING
BEHAVIORS_HELP = "each behavior's role: population, champion, league or a genome file"


# ---------------------------------------------------------------- the model

@dataclass(frozen=True)
class Settings:
    """The settings of a run, checked. Paths are absolute."""

    env: str | None = setting(REQUIRED, environment, "gymnasium:ID (a Gymnasium environment), a build path "
                                                     "(relative to the config file), or 'editor'")
    behaviors: tuple[BehaviorRole, ...] | None = setting(
        None, roles_or_none, BEHAVIORS_HELP, shown_default="required for a Unity build")  # a Gymnasium env has its own
    env_args: tuple[str, ...] = setting((), arguments, "extra command-line arguments for the build")
    env_kwargs: tuple[tuple[str, Any], ...] = setting((), keyword_arguments, "keyword arguments for "
                                                      "gymnasium.make, 'name = value' pairs of Python literals")
    agents: int | None = setting(None, optional(integer(1, 65536)), "copies of a Gymnasium environment played at "
                                                                    "once per process", flag=True,
                                 shown_default=DEFAULT_COPIES)
    max_steps: int = setting(1000, integer(1), "decisions of a population agent after which the runner "
                                               "ends the genome's episode")
    episodes_per_genome: int = setting(1, integer(1), "episodes each genome plays per generation")
    generations: int = setting(50, integer(1), "total generations of a run", flag=True)
    seed: int | None = setting(None, optional(integer(0, 2**31 - 1)), "seed of the run (the same seed repeats "
                                                                      "the run)", flag=True)
    network: Network = setting("feedforward", choice(NETWORKS), "feedforward, recurrent or ctrnn "
                                                                "(continuous-time) networks")
    ctrnn_decision_time: float = setting(0.1, number(), "seconds of game time one decision advances a CTRNN (in "
                                                        "Unity: Fixed Timestep x DecisionRequester period)")
    ctrnn_time_step: float = setting(0.02, number(), "a CTRNN's Euler step in seconds (the last step of a "
                                                     "decision may be shorter)")
    fitness: Fitness = setting("mean", choice(FITNESS_AGGREGATES), "aggregate of a genome's episode returns")
    time_scale: float = setting(20.0, number(), "the engine's time scale")
    no_graphics: bool = setting(True, boolean, "run the build headless")
    timeout: float = setting(60.0, number(), "seconds to wait for the build to answer")
    checkpoint_interval: int = setting(5, integer(1), "checkpoint every K generations")
    worker_id: int = setting(0, integer(0, 60000), "first worker id tried for the build's port")
    env_parameters: tuple[tuple[str, float], ...] = setting((), parameters, "'name = number' pairs sent on the "
                                                                            "EnvironmentParameters side channel")
    inference: Inference = setting("inprocess", choice(INFERENCE), "where the networks run: in this process, "
                                   "on a spawn pool, or whichever measures faster", flag=True)
    workers: int = setting(2, integer(1, 256), "pool workers for inference = pool or auto", flag=True)
    envs: int = setting(1, integer(1, 1024), "simulators, each owned by its own env host (1 = one simulator "
                                             "in this process)", flag=True)
    backend: Backend = setting("local", choice(BACKENDS), "where env hosts run: local processes or Ray actors",
                               flag=True)
    address: str | None = setting(None, address, "Ray cluster address HOST:PORT for backend = ray; without one, "
                                                 "a local Ray instance", flag=True)
    neat_step: NeatStep = setting("neatpar", choice(NEAT_STEPS), "classes that make each next generation: "
                                  "neatpar's (the populations neat-python's make, faster) or neat-python's own")
    # Self-play (run/league.py); ML-Agents' self_play keys in generations.
    league_window: int = setting(10, integer(1, 1000), "past champions a league keeps (ML-Agents' window)")
    league_snapshot: int = setting(1, integer(1), "generations between snapshots of a population's strongest "
                                                  "genome into its league (ML-Agents' save_steps)")
    league_latest_ratio: float = setting(0.5, fraction, "probability that an opponent is the league's latest "
                                                        "member, else one drawn uniformly from the league "
                                                        "(ML-Agents' play_against_latest_model_ratio)")
    league_rating_games: int = setting(2, integer(1, 1000), "games the strongest genome of a generation plays "
                                       "against each league member for its rating (both sides in symmetric games)")
    league_final_games: int = setting(0, integer(0, 10000), "games of every pair of league members in a final "
                                      "round-robin that chooses the winner (0: none, the best-rated member wins)")
    league_swap_sides: bool = setting(False, boolean, "a genome plays each league opponent from both sides "
                                                      "(episodes alternate sides)")
    team_change: int = setting(10, integer(1), "with two league behaviors: generations one population evolves "
                                               "before the other's turn (ML-Agents' team_change)")
    neat_configs: tuple[tuple[str, str], ...] = setting(
        (), behavior_files, "'BehaviorName: file' pairs: the neat-python config of a league behavior's own "
                            "population when two league behaviors evolve (default: this config file)")

    def __post_init__(self):
        # Direct construction and dataclasses.replace() are read like keyword arguments (reading
        # is idempotent, so values already read from a file pass unchanged).
        where = Where(Source.KEYWORD, ".")
        for f in dataclasses.fields(self):
            object.__setattr__(self, f.name, f.metadata["reader"](f.name, getattr(self, f.name), where))
        self._check_rules()

    def _check_rules(self) -> None:
        """Rules between settings."""
        if self.gym is None:
            self._check_unity_rules()
        else:
            self._check_gym_rules()
        if self.hosted and self.env is None:
            raise ConfigError("env = editor connects to the one Unity Editor: env hosts (envs > 1 or backend = ray) "
                              "each launch a build; set env to a build path or envs = 1")
        if self.hosted and self.inference == "pool":
            raise ConfigError("inference = pool with env hosts: each host runs its networks in its own process; "
                              "set inference = inprocess (or envs = 1)")
        steps = math.ceil(self.ctrnn_decision_time / self.ctrnn_time_step)
        if self.network == "ctrnn" and steps > MAX_CTRNN_STEPS:
            raise ConfigError(f"ctrnn_decision_time = {self.ctrnn_decision_time} in steps of ctrnn_time_step = "
                              f"{self.ctrnn_time_step} is {steps} Euler steps per decision, more than "
                              f"{MAX_CTRNN_STEPS}: use a larger ctrnn_time_step")
        if self.address is not None and self.backend != "ray":
            raise ConfigError(f"address = {self.address} names a Ray cluster: use it with backend = ray "
                              f"(--backend ray)")
        self._check_league_rules()

    def _check_league_rules(self) -> None:
        roles = [r.role for r in self.behaviors]
        leagues, populations = roles.count(Role.LEAGUE), roles.count(Role.POPULATION)
        if not populations and leagues > 2:
            raise ConfigError(f"behaviors has {leagues} behaviors with the role 'league' and none with 'population': "
                              f"two league behaviors evolve a population each and take turns; give the others "
                              f"another role")
        evolving = [r.behavior for r in self.behaviors if r.role is Role.LEAGUE and not populations]
        for behavior, _ in self.neat_configs:
            if behavior not in evolving:
                raise ConfigError(f"neat_configs names {behavior!r}, but only the two league behaviors of an asymmetric "
                                  f"game (no population role) evolve populations of their own: "
                                  f"{', '.join(evolving) or 'this config has none'}")
        if self.neat_configs and self.network == "ctrnn":
            raise ConfigError("neat_configs with network = ctrnn: an asymmetric game's populations of their own neat "
                              "configs run as feedforward or recurrent networks; set network = feedforward or "
                              "recurrent, or leave out neat_configs")
        if self.league_swap_sides:
            if (populations, leagues) != (1, 1):
                raise ConfigError("league_swap_sides = true swaps the sides of one population behavior and one "
                                  "league behavior: give behaviors exactly one of each (or set league_swap_sides = "
                                  "false)")
            if self.episodes_per_genome % 2:
                raise ConfigError(f"league_swap_sides = true plays each opponent from both sides, but "
                                  f"episodes_per_genome = {self.episodes_per_genome} is odd: set it to an even number "
                                  f"(2 plays one opponent, 4 two)")

    def _check_unity_rules(self) -> None:
        if self.behaviors is None:
            raise ConfigError(f"behaviors is missing: {BEHAVIORS_HELP}")
        if self.env_kwargs:
            raise ConfigError(f"env_kwargs are keyword arguments for gymnasium.make, but env = {self.env} is a Unity "
                              f"build: pass its options with env_args, or set env = gymnasium:ID")
        if self.agents is not None:
            raise ConfigError(f"agents = {self.agents} sets the copies of a Gymnasium environment; a Unity build "
                              f"has the agents its scene makes (the simulator builds take env_args = --agents N)")

    def _check_gym_rules(self) -> None:
        for name in ("env_args", "env_parameters"):
            if getattr(self, name):
                raise ConfigError(f"{name} are for Unity builds; env = {self.env} is a Gymnasium environment: pass "
                                  f"its options as env_kwargs")
        name = behavior_name(self.gym)
        own = (BehaviorRole(name, Role.POPULATION),)
        if self.behaviors is None:
            object.__setattr__(self, "behaviors", own)
        elif self.behaviors != own:
            shown = ", ".join(f"{r.behavior}: {r.genome_file or r.role}" for r in self.behaviors)
            raise ConfigError(f"behaviors = {shown} does not fit env = {self.env}: a Gymnasium environment has one "
                              f"behavior, {name!r}, whose copies are the population; leave behaviors out")

    @property
    def target(self) -> EnvTarget:
        """The environment `env` names (EnvTarget)."""
        return EnvTarget.of(self.env)

    @property
    def gym(self) -> str | None:
        """The Gymnasium environment (a registered id, 'module:Id' or 'module:Class'), or None for Unity."""
        target = self.target
        return target.name if target.kind is EnvKind.GYMNASIUM else None

    def with_role(self, role: Role) -> tuple[str, ...]:
        """The behaviors of `role`, in the config's order."""
        return tuple(r.behavior for r in self.behaviors if r.role is role)

    @property
    def population_behaviors(self) -> tuple[str, ...]:
        """The behaviors the genomes under evaluation drive, in the config's order."""
        return self.with_role(Role.POPULATION)

    @property
    def asymmetric(self) -> bool:
        """Two league behaviors and no population one: each league behavior evolves a population of
        its own (asymmetric self-play, run/league.py)."""
        return len(self.with_role(Role.LEAGUE)) == 2 and not self.population_behaviors

    @property
    def hosted(self) -> bool:
        """True when env hosts (processes or Ray actors) own the simulators."""
        return self.envs > 1 or self.backend == "ray"

    @classmethod
    def create(cls, values: Mapping[str, Any], source: Source = Source.KEYWORD, base: str = ".") -> "Settings":
        """Settings from text or Python values; unknown names and missing required ones are errors."""
        read = _read(values, source, base)
        missing = [f for f in dataclasses.fields(cls) if f.name not in read and (
            f.default is dataclasses.MISSING or (f.name == "behaviors" and not _is_gym(read.get("env"))))]
        if missing:
            raise ConfigError(f"{source.label(missing[0].name)} is missing: {missing[0].metadata['help']}")
        return cls(**read)

    def with_changes(self, source: Source = Source.KEYWORD, base: str = ".", **changes: Any) -> "Settings":
        """A copy with `changes` read and checked as `create` reads values. A new Gymnasium env
        brings its own behavior unless `behaviors` changes too."""
        read = _read(changes, source, base)
        if "env" in read and "behaviors" not in read and _is_gym(read["env"]):
            read["behaviors"] = None
        return dataclasses.replace(self, **read)

    def check_neat_config(self, neat_config: Any, source: str = "the neat config") -> None:
        """Rules between these settings and the neat-python config they run with."""
        if self.network == "feedforward" and not neat_config.genome_config.feed_forward:
            raise ConfigError(f"{source}: [DefaultGenome] feed_forward = false evolves recurrent genomes; set "
                              f"[neatpar] network = recurrent (or ctrnn)")
        lowest = getattr(neat_config.genome_config, "time_constant_min_value", None)
        if self.network == "ctrnn" and lowest is not None and not lowest > 0:
            raise ConfigError(f"{source}: [DefaultGenome] time_constant_min_value = {lowest} lets a node's time "
                              f"constant reach {lowest}; a CTRNN divides by it: set it above 0 (e.g. 0.01)")


def _read(values: Mapping[str, Any], source: Source, base: str) -> dict:
    """Each value read by its setting's reader; an unknown name is an error that suggests the close one."""
    where = Where(source, os.path.abspath(base))
    known = {f.name: f for f in dataclasses.fields(Settings)}
    unknown = sorted(set(values) - set(known))
    if unknown:
        raise ConfigError(f"{source.label(unknown[0])} is not a setting{_did_you_mean(unknown[0], known)}; "
                          f"the settings are {', '.join(known)}")
    return {name: known[name].metadata["reader"](name, value, where) for name, value in values.items()}


def _is_gym(env: str | None) -> bool:
    return EnvTarget.of(env).kind is EnvKind.GYMNASIUM


def flags() -> list[dataclasses.Field]:
    """The settings that are also command-line flags of `neatpar evolve`."""
    return [f for f in dataclasses.fields(Settings) if f.metadata["flag"]]


def _did_you_mean(name: str, known) -> str:
    close = difflib.get_close_matches(name, list(known), n=1)
    return f" (did you mean {close[0]}?)" if close else ""


def neat_step_classes(neat_step: NeatStep) -> tuple[type, type, type]:
    """(genome, reproduction, species set) classes for `neat_step`; both read the config file's
    [DefaultGenome], [DefaultReproduction] and [DefaultSpeciesSet] sections."""
    if neat_step == "neatpar":
        return evolution.Genome, evolution.Reproduction, evolution.SpeciesSet
    return neat.DefaultGenome, neat.DefaultReproduction, neat.DefaultSpeciesSet


def read_neat_config(settings: Settings, path: str, text: str | None = None) -> neat.Config:
    """A neat-python config file for these settings, checked; errors name the fix. With `text`,
    that is the file's content (a resumed run's stored config): `path` then only names it."""
    if text is None and not os.path.isfile(path):
        raise ConfigError(f"neat config {path!r} not found: fix the path (relative to the config file)")
    with _as_file(path, text) as readable:
        try:
            config = neat.Config(*neat_step_classes(settings.neat_step), neat.DefaultStagnation, readable)
        except Exception as exc:  # neat-python's own messages, made one line
            raise ConfigError(f"neat-python rejects {path}: {one_line(exc)}") from None
    settings.check_neat_config(config, path)
    return config


def population_configs(settings: Settings, neat_config: neat.Config,
                       texts: Mapping[str, str] | None = None) -> dict[str, neat.Config]:
    """The neat config of each league behavior's own population in an asymmetric game: its file
    from neat_configs (read from `texts`, behavior -> the file's content, where given: a resumed
    run's stored copy), else `neat_config` (the run's own)."""
    files, texts = dict(settings.neat_configs), texts or {}
    return {r.behavior: read_neat_config(settings, files[r.behavior], texts.get(r.behavior))
            if r.behavior in files else neat_config for r in settings.behaviors if r.role is Role.LEAGUE}


def load(path: str, text: str | None = None) -> tuple[neat.Config, Settings]:
    """A neat-python config file with a [neatpar] section, checked; errors name the fix. With
    `text`, that is the file's content (a resumed run's stored config): `path` then only names it
    and anchors its relative paths."""
    if text is None and not os.path.isfile(path):
        raise ConfigError(f"config file {path!r} not found: pass the path of a neat-python config "
                          f"with a [neatpar] section (see configs/)")
    parser = configparser.ConfigParser()
    try:
        if text is None:
            parser.read(path)
        else:
            parser.read_string(text, source=path)
    except configparser.Error as exc:
        raise ConfigError(f"config file {path} cannot be parsed: {one_line(exc)}") from None
    if not parser.has_section("neatpar"):
        raise ConfigError(f"config file {path} has no [neatpar] section: add one with at least env (a build path, "
                          f"with behaviors; or gymnasium:ID; see configs/ball.cfg and configs/cartpole.cfg)")
    settings = Settings.create(dict(parser.items("neatpar")), Source.FILE, os.path.dirname(os.path.abspath(path)))
    return read_neat_config(settings, path, text), settings


@contextlib.contextmanager
def _as_file(path: str, text: str | None):
    """A file neat-python can read: `path` itself, or a private copy of `text`."""
    if text is None:
        yield path
        return
    with tempfile.TemporaryDirectory(prefix="neatpar-config-") as folder:
        copy = os.path.join(folder, os.path.basename(path))
        with open(copy, "w") as f:
            f.write(text)
        yield copy
