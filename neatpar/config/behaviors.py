"""Who drives each behavior's agents ([neatpar] behaviors): the Role of each behavior, read from
'BehaviorName: role' pairs, and the files of league behaviors' own neat configs
([neatpar] neat_configs)."""
from __future__ import annotations

import enum
import os
from dataclasses import dataclass
from typing import Any, Mapping

from .readers import Where, accepting, did_you_mean


class Role(str, enum.Enum):
    """Who drives a behavior's agents (see BehaviorRole). A string enum that prints and formats as
    its value, as enum.StrEnum (Python 3.11) does, on every Python."""
    __str__ = str.__str__
    __format__ = str.__format__

    POPULATION = "population"
    CHAMPION = "champion"
    LEAGUE = "league"
    FILE = "file"


ROLES = (Role.POPULATION, Role.CHAMPION, Role.LEAGUE)   # the roles a config names; others are genome files


@dataclass(frozen=True)
class BehaviorRole:
    """Who drives a behavior's agents: the genomes under evaluation, the best genome so far, past
    champions drawn from a league (episodes/league.py), or a genome saved in a file (`genome_file`)."""
    behavior: str
    role: Role
    genome_file: str | None = None


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
    roles = tuple(_role(behavior, role, name, value, where) for behavior, role in pairs)
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


def _role(behavior: str, role: str, name: str, value: Any, where: Where) -> BehaviorRole:
    """A behavior's role: a role's name, or else a genome file relative to the config file. A
    bare word close to a role's name that names no file is a misspelt role, an error that says so
    (as a file it would only be found missing when the run starts, or leave no population)."""
    if role in ROLES:
        return BehaviorRole(behavior, Role(role))
    path = os.path.normpath(os.path.join(where.base, role))
    suggestion = did_you_mean(role, ROLES) if role.isalpha() else ""
    if suggestion and not os.path.exists(path):
        raise where.fail(name, value, f"has {role!r}, which is not a role{suggestion} nor a genome file ({path} "
                                      f"does not exist); roles are population, champion, league or a saved genome file")
    return BehaviorRole(behavior, Role.FILE, path)
