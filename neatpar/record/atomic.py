"""Writing files so that a reader sees the old file or the whole new one, never a part."""
from __future__ import annotations

import os


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
