"""The environment a settings' `env` names: a Unity build's path, the Unity Editor, or a Gymnasium
environment written `gymnasium:TARGET`; read once (`environment`) and parsed once (`EnvTarget`).
A Gymnasium environment's copies are one behavior, named by `gym_behavior_name`: the settings
take it as the run's behavior and envs/gym.py reports the copies under it."""
from __future__ import annotations

import enum
import os
from dataclasses import dataclass
from typing import Any

from .readers import Where, accepting

GYM_PREFIX = "gymnasium:"   # how a settings' env names a Gymnasium environment


def gym_behavior_name(target: str) -> str:
    """The behavior a Gymnasium environment's copies report as: its id or class name, i.e. what
    follows the last ':' of `target` ('CartPole-v1', 'package.module:MyEnv' -> 'MyEnv')."""
    return target.rpartition(":")[2]


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
        if not target or not gym_behavior_name(target):
            raise where.fail(name, value, "names no Gymnasium environment: give a registered id, e.g. "
                                          "gymnasium:CartPole-v1, or module:Class of your own Env class")
        return GYM_PREFIX + target
    if text.lower() == "editor":
        return None
    return os.path.normpath(os.path.join(where.base, text))
