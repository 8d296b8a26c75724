"""The value readers of the settings: each takes text (a config file, the command line) or a
Python value (a keyword argument) and returns the checked value, or raises a one-line ConfigError
that names the setting the way the user wrote it (`[neatpar] max_steps`, `max_steps`,
`--max-steps`). Each reader also says in words what it accepts (`reader.accepts`), which the
generated reference shows."""
from __future__ import annotations

import ast
import difflib
import enum
import os
import re
import shlex
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping

from ..errors import ConfigError
from .parameter_file import ParameterFile, read_parameter_file


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


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """` (did you mean X?)` with the known name closest to a mistyped one, or nothing if none is
    close: a typo's error suggests its fix."""
    close = difflib.get_close_matches(name, [str(k) for k in known], n=1)
    return f" (did you mean {close[0]}?)" if close else ""


Reader = Callable[[str, Any, Where], Any]
# Each reader also says in words what it accepts (`reader.accepts`), for the generated reference.


def accepting(text: str) -> Callable[[Reader], Reader]:
    """Decorate a reader with what it accepts, in words."""
    def mark(reader: Reader) -> Reader:
        reader.accepts = text
        return reader
    return mark


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


@accepting("name = number pairs, separated by commas or lines (from Python also a mapping), or the path of "
           "an ML-Agents YAML file of environment_parameters (.yaml or .yml, relative to the config file)")
def parameters(name: str, value: Any, where: Where) -> tuple[tuple[str, float], ...] | ParameterFile:
    """`name = number` pairs: text 'a = 1, b = 2', a mapping, or a sequence of pairs; or the path of
    an ML-Agents YAML file (.yaml or .yml, relative to the config file) of environment_parameters."""
    if isinstance(value, ParameterFile):
        return value
    if isinstance(value, str) and value.strip().lower().endswith((".yaml", ".yml")) and "=" not in value:
        path = os.path.normpath(os.path.join(where.base, value.strip()))
        if not os.path.isfile(path):
            raise where.fail(name, value, f"names no file ({path} not found): give the path relative to the "
                                          f"config file")
        return read_parameter_file(path)
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


@accepting("HOST:PORT of a Ray cluster's head")
def address(name: str, value: Any, where: Where) -> str | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if not isinstance(value, str):
        raise where.fail(name, value, "is not a Ray cluster address: give HOST:PORT")
    return value.strip()


@accepting("comma-separated layers, each a line of n nodes ('16') or a grid of rows x columns ('8x8'); "
           "empty for none")
def layer_sizes(name: str, value: Any, where: Where) -> str:
    """Hidden layers like `8x8, 16`, normalized ('8x8, 16'); '' for none."""
    if not isinstance(value, str):
        raise where.fail(name, value, "is not text: write layers like '8x8, 16'")
    parts = [p.strip().lower().replace(" ", "") for p in value.split(",")]
    if parts == [""]:
        return ""
    if not all(re.fullmatch(r"[1-9][0-9]*(x[1-9][0-9]*)?", p) for p in parts):
        raise where.fail(name, value, "is not a list of layers: write a line as its node count ('16') and a grid as "
                                      "rows x columns ('8x8'), comma-separated ('8x8, 16')")
    return ", ".join(parts)


@accepting("the path of an existing file (relative to the config file), or none")
def existing_file(name: str, value: Any, where: Where) -> str | None:
    """An absolute path of a file that exists, or None."""
    if value is None or (isinstance(value, str) and value.strip().lower() in ("", "none")):
        return None
    if not isinstance(value, str):
        raise where.fail(name, value, "is not a file path")
    path = os.path.normpath(os.path.join(where.base, value.strip()))
    if not os.path.isfile(path):
        raise where.fail(name, value, f"names no file ({path} not found): give the path relative to the config file")
    return path


@accepting("HEIGHTxWIDTH in pixels (e.g. 24x24)")
def image_size(name: str, value: Any, where: Where) -> tuple[int, int]:
    """'24x24' -> (24, 24); a pair of positive integers from Python too."""
    if isinstance(value, (tuple, list)) and len(value) == 2 and all(isinstance(v, int) and v > 0 for v in value):
        return int(value[0]), int(value[1])
    match = re.fullmatch(r"\s*([1-9][0-9]*)\s*[xX]\s*([1-9][0-9]*)\s*", value) if isinstance(value, str) else None
    if match is None:
        raise where.fail(name, value, "is not an image size: write HEIGHTxWIDTH, e.g. 24x24")
    return int(match.group(1)), int(match.group(2))
