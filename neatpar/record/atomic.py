"""Writing files so that a reader sees the old file or the whole new one, never a part; and
checking, before the work that makes a file, that it can be written where it is asked for."""
from __future__ import annotations

import os

from ..errors import ConfigError


def write_atomic(path: str, data: bytes) -> None:
    """Write `data` to `path` so that readers see the old file or the whole new one, never part."""
    folder = os.path.dirname(os.path.abspath(path))
    tmp = os.path.join(folder, f".{os.path.basename(path)}.tmp-{os.getpid()}")
    try:
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def check_output_file(path: str, flag: str, example: str, what: str) -> None:
    """A file `flag` names (e.g. --out, or the word for it) must be a file in a folder that exists
    and is writable, else one line naming the fix; `example` is a file name to suggest, `what` the
    kind of file."""
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        suggested = os.path.join(path, example)
        raise ConfigError(f"{flag} {path} is a folder: name the file to write, e.g. "
                          f"{f'{flag} {suggested}' if flag.startswith('-') else suggested}")
    if not os.path.isdir(folder):
        raise ConfigError(f"{flag} {path}: the folder {folder} does not exist: create it, or write the {what} "
                          f"elsewhere")
    if not os.access(folder, os.W_OK):
        raise ConfigError(f"{flag} {path}: the folder {folder} is not writable: write the {what} elsewhere")
