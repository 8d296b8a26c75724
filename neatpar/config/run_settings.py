"""What a run was started with: its config file's text and the command-line flags that changed its
[neatpar] keys. `neatpar evolve` stores this record in the run folder (run.json) and in every
checkpoint, so that `--resume CHECKPOINT` alone continues the run with exactly its own settings.

On resume, what the user types again is compared with the record: a value equal to the record's
changes nothing; a change that leaves the generations' results as they are (how many generations,
when the run stops, where the networks and env hosts run) is applied with a one-line note; a change
that would make the resumed generations differ from an uninterrupted run's (another seed, envs,
agents, or any other key of the config) is refused in one line that says how to proceed.
"""
from __future__ import annotations

import configparser
import os
from dataclasses import dataclass
from typing import Any, Mapping, NamedTuple

import neat

from ..errors import ConfigError, one_line
from .files import load
from .settings_model import Settings, Source, resumable

# neat-python's keys whose change leaves every generation's result as it is (when the run stops);
# a [neatpar] key says so in its declaration (config/settings_model.py: `resumable`).
RESUMABLE_NEAT_KEYS = ("fitness_threshold", "no_fitness_termination")


def may_change_on_resume(section: str, key: str) -> bool:
    """Whether a resumed run may give `[section] key` another value: only keys that change how long
    the run goes on, when checkpoints are written, where the networks and env hosts run and how
    long to wait for them."""
    if section == "neatpar":
        return resumable(key)
    return section == "NEAT" and key in RESUMABLE_NEAT_KEYS


class ConfigChange(NamedTuple):
    """A key two config texts set differently (None: not set in that text)."""
    section: str
    key: str
    old: str | None
    new: str | None


@dataclass(frozen=True)
class RunSettings:
    """A run's config file (its absolute path when the run started, and its text) and its flags:
    [neatpar] key -> the flag's text as typed, in the order given. An asymmetric self-play run also
    keeps the text of each neat config its neat_configs key names (behavior -> text), so that a
    resume plays on with the populations' own configs as they were."""
    config_path: str
    config_text: str
    flags: tuple[tuple[str, str], ...] = ()
    population_texts: tuple[tuple[str, str], ...] = ()

    @classmethod
    def from_file(cls, path: str, flags: Mapping[str, str]) -> "RunSettings":
        """The record of a new run: `path`'s text as it is now, and the flags given."""
        if not os.path.isfile(path):
            raise ConfigError(f"config file {path!r} not found: pass the path of a neat-python config "
                              f"with a [neatpar] section (see configs/)")
        try:
            with open(path) as f:
                text = f.read()
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"config file {path} cannot be read ({exc}): pass a neat-python config file") from None
        return cls(os.path.abspath(path), text, tuple((k, str(v)) for k, v in flags.items()))

    def with_population_texts(self, settings: Settings) -> "RunSettings":
        """This record with the texts of the files `settings.neat_configs` names, as they are now."""
        texts = []
        for behavior, path in settings.neat_configs:
            if not os.path.isfile(path):
                raise ConfigError(f"neat config {path!r} not found: fix the path (relative to the config file)")
            try:
                with open(path) as f:
                    texts.append((behavior, f.read()))
            except (OSError, UnicodeDecodeError) as exc:
                raise ConfigError(f"neat config {path!r} of {behavior!r} (neat_configs) cannot be read ({exc}): fix "
                                  f"the path (relative to the config file)") from None
        return RunSettings(self.config_path, self.config_text, self.flags, tuple(texts))

    def load(self) -> tuple[neat.Config, Settings]:
        """The run's neat config and settings: the stored text (relative paths resolved against the
        config file's folder), changed by the flags."""
        config, settings = load(self.config_path, self.config_text)
        return config, settings.with_changes(Source.FLAG, **dict(self.flags))

    def to_dict(self) -> dict[str, Any]:
        return {"config_path": self.config_path, "config_text": self.config_text, "flags": dict(self.flags),
                "population_texts": dict(self.population_texts)}

    @classmethod
    def from_dict(cls, record: Mapping[str, Any]) -> "RunSettings":
        return cls(str(record["config_path"]), str(record["config_text"]),
                   tuple((str(k), str(v)) for k, v in dict(record["flags"]).items()),
                   tuple((str(k), str(v)) for k, v in dict(record.get("population_texts", {})).items()))


def resumed(stored: RunSettings, config_path: str | None, flags: Mapping[str, str],
            where: str) -> tuple[RunSettings, list[str]]:
    """The settings a resumed run continues with, and the notes to print about what changed:
    `stored` (the checkpoint's record, from `where`), a config file given again and flags given
    again. A change that would make the run differ from an uninterrupted one is a ConfigError."""
    record, notes = stored, []
    if config_path is not None:
        record, notes = _config_given_again(stored, config_path, where)
    merged = RunSettings(record.config_path, record.config_text, tuple({**dict(record.flags), **flags}.items()),
                         record.population_texts)
    return merged, notes + _flags_given_again(record, merged, flags, where)


def _config_given_again(stored: RunSettings, config_path: str, where: str) -> tuple[RunSettings, list[str]]:
    """The stored record with the config file given again: refused if it changes a key the
    results depend on, else taken (with a note when it changes anything)."""
    text = RunSettings.from_file(config_path, {}).config_text
    changed = config_changes(stored.config_text, text)
    harmful = [c for c in changed if not may_change_on_resume(c.section, c.key)]
    if harmful:
        first = harmful[0]
        raise ConfigError(
            f"--config {config_path} changes [{first.section}] {first.key} ({_shown(first.old)} -> "
            f"{_shown(first.new)}) of the config the run started with ({stored.config_path}, stored in {where}): "
            f"the resumed generations would differ from an uninterrupted run; leave out --config to continue "
            f"with the run's own, or start a new run")
    notes = [f"--config {config_path} changes {', '.join(f'[{c.section}] {c.key}' for c in changed)}; the "
             f"generations' results stay as they would have been"] if changed else []
    return RunSettings(os.path.abspath(config_path), text, stored.flags, stored.population_texts), notes


def _flags_given_again(record: RunSettings, merged: RunSettings, flags: Mapping[str, str], where: str) -> list[str]:
    """Notes on the flags typed again that change a harmless setting (none for --generations, which
    the first line shows); a ConfigError for one that would change the results."""
    _, before = record.load()
    _, after = merged.load()
    notes = []
    for name in flags:
        old, new = getattr(before, name), getattr(after, name)
        if old == new:
            continue
        flag = "--" + name.replace("_", "-")
        if not may_change_on_resume("neatpar", name):
            raise ConfigError(f"{flag} {flags[name]} differs from the run's {name} = {_shown(old)} (stored in "
                              f"{where}): the resumed generations would differ from an uninterrupted run; leave "
                              f"out {flag} to continue the run, or start a new run with {flag} {flags[name]}")
        if name != "generations":
            notes.append(f"{flag} {flags[name]} replaces the run's {name} = {_shown(old)}; the generations' results "
                         f"stay as they would have been")
    return notes


def config_changes(old: str, new: str) -> list[ConfigChange]:
    """Every key two config texts set differently, in the order of the sections and keys;
    comments and spacing do not count."""
    before, after = _values(old), _values(new)
    return [ConfigChange(section, key, before.get((section, key)), after.get((section, key)))
            for section, key in dict.fromkeys([*before, *after])
            if before.get((section, key)) != after.get((section, key))]


def _values(text: str) -> dict[tuple[str, str], str]:
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(text)
    except configparser.Error as exc:
        raise ConfigError(f"a config cannot be parsed: {one_line(exc)}") from None
    return {(section, key): value.strip() for section in parser.sections()
            for key, value in parser.items(section, raw=True)}


def _shown(value: Any) -> str:
    return "not set" if value is None else str(value)
