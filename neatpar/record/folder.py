"""The run folder of `neatpar evolve`: the run's settings (run.json), checkpoints (checkpoint.py),
plots, the winner and the simulator logs (per-generation stats: stats_file.py; TensorBoard's event
files: tensorboard.py). Every file but those appended a generation at a time is written
atomically (a reader sees the old or the whole new one).
"""
from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import tempfile
from typing import NamedTuple

import filelock

from ..config.run_settings import RunSettings
from ..errors import ConfigError, FolderTaken
from ..nn.substrate import Substrate
from ..nn.substrate_file import read_substrate, write_substrate
from ..environment import Layout, Sensor
from .atomic import write_atomic
from .checkpoint import checkpoint_path
from .genomes import save_genome_json, save_genome_pickle
from .plots import plot
from .stats_row import StatsRow

BEHAVIORS_FILE = "behaviors.json"
SUBSTRATE_FILE = "substrate.json"   # a hyperneat run's substrate (nn/substrate_file.py)
LEAGUE_FILE = "league.json"
RUN_FILE = "run.json"  # the run's settings (config/run_settings.py), also in every checkpoint
LOCK_FILE = ".neatpar-lock"  # locked by the run that holds the folder; its contents mean nothing


class MovedLogs(NamedTuple):
    """Where a discarded run's simulator logs were, and where they are now."""
    were: str
    now: str


class RunFolder:
    """A run's output folder, held by one `neatpar evolve` process for as long as the run lasts.

    Claimed before any simulator starts: the folder's lock file is locked (filelock's lock of a
    descriptor: flock, or LockFileEx on Windows; the lock ends with the process, however it ends),
    then a new run creates run.json exclusively (a folder that already holds a run or other files
    is refused), a resumed one rewrites it. The lock file stays in the folder.
    Two runs started at the same moment on one folder: one holds it, the other is refused.
    With `run` None, a folder for one population's outputs inside a claimed run's folder
    (asymmetric self-play): made and checked writable, with no run.json and no checkpoints."""

    def __init__(self, path: str, run: RunSettings | None, resume: bool = False):
        self.path = os.path.abspath(path)
        self.created = _missing_folders(self.path)  # removed again by discard(), innermost first
        self._lock: int | None = None
        self._made_lock_file = False  # this claim created the lock file (removed again if refused)
        try:
            os.makedirs(self.path, exist_ok=True)
            if run is not None:
                self._made_lock_file = not os.path.exists(self.lock_file)
                self._lock = _lock_folder(self.path)
        except OSError as exc:
            self.created = []  # another run may own what this one found missing
            raise ConfigError(f"run folder {self.path} is not writable ({exc.strerror}): choose another "
                              f"with --out") from None
        try:
            self._claim(run, resume)
        except BaseException:
            self._refuse()
            raise

    @classmethod
    def first_free(cls, path: str, run: RunSettings, tries: int = 100) -> RunFolder:
        """A new run's folder at `path`, or else at `path-2`, `path-3`, ...: for a name the user did
        not choose (runs started in the same second get the same default name)."""
        for number in range(1, tries + 1):
            try:
                return cls(path if number == 1 else f"{path}-{number}", run)
            except FolderTaken:
                if number == tries:
                    raise

    def _claim(self, run: RunSettings | None, resume: bool) -> None:
        """run.json written (exclusively for a new run), checkpoints/ made, writing checked."""
        try:
            if run is not None:
                record = json.dumps(run.to_dict(), indent=1).encode()
                if resume:
                    write_atomic(self.run_file, record)
                elif set(os.listdir(self.path)) - {LOCK_FILE} or not _create_exclusive(self.run_file, record):
                    self.created = []
                    raise FolderTaken(f"run folder {self.path} already holds a run: choose a new --out, or "
                                      f"continue that run with --resume {self.checkpoint_path('N')}")
                os.makedirs(os.path.join(self.path, "checkpoints"), exist_ok=True)
            probe = os.path.join(self.path, f".write-test-{os.getpid()}")
            with open(probe, "w") as f:
                f.write("ok")
            os.remove(probe)
        except OSError as exc:
            raise ConfigError(f"run folder {self.path} is not writable ({exc.strerror}): choose another "
                              f"with --out") from None

    @property
    def run_file(self) -> str:
        return os.path.join(self.path, RUN_FILE)

    @property
    def lock_file(self) -> str:
        return os.path.join(self.path, LOCK_FILE)

    @property
    def logs(self) -> str:
        return os.path.join(self.path, "sim-logs")

    def release(self) -> None:
        """End this process's hold on the folder (idempotent)."""
        lock, self._lock = self._lock, None
        if lock is not None:
            os.close(lock)

    def _refuse(self) -> None:
        """A claim refused: the lock file gone again if this claim made it (a folder that is not a
        run's keeps only what it had), and the hold ended."""
        if self._lock is not None and self._made_lock_file:
            self._remove_lock_file()
        self.release()

    def _remove_lock_file(self) -> bool:
        """Remove the lock file, while the folder is held where the system allows (no other claim
        can take the old file then), else just after (Windows removes no file that is open); True
        when it is gone, False when another claim holds it now."""
        for _ in range(2):
            try:
                os.remove(self.lock_file)
                return True
            except FileNotFoundError:
                return True
            except OSError:
                self.release()
        return False

    def discard(self, keep_logs: bool = False) -> MovedLogs | None:
        """Remove the folder, and the empty parents made for it, if this run created it (start-up
        failed: nothing half-written stays, not even an empty runs/). With `keep_logs` (the error
        names them), the simulators' logs are kept, moved to a folder of their own in the system's
        temporary folder: returns where they were and where they are now, None when there were
        none or they went with the folder."""
        if not self.created:
            return None
        moved = None
        if keep_logs and os.path.isdir(self.logs) and os.listdir(self.logs):
            kept = tempfile.mkdtemp(prefix=f"neatpar-sim-logs-{os.path.basename(self.path)}-")
            for name in os.listdir(self.logs):
                shutil.move(os.path.join(self.logs, name), os.path.join(kept, name))
            moved = MovedLogs(self.logs, kept)
        for name in set(os.listdir(self.path)) - {LOCK_FILE}:  # emptied while the folder is held
            inside = os.path.join(self.path, name)
            if os.path.isdir(inside) and not os.path.islink(inside):
                shutil.rmtree(inside, ignore_errors=True)
            else:
                with contextlib.suppress(OSError):
                    os.remove(inside)
        if not self._remove_lock_file():   # another run claimed the folder meanwhile: it is that run's
            return moved
        self.release()
        try:
            os.rmdir(self.path)
        except OSError:   # another run made files in it meanwhile
            return moved
        for parent in self.created[1:]:
            try:
                os.rmdir(parent)
            except OSError:  # not empty: something else lives there now
                break
        return moved

    def checkpoint_path(self, generation: int | str) -> str:
        return checkpoint_path(self.path, generation)

    # ------------------------------------------------------------ stats, plots, winner

    def plot(self, rows: list[StatsRow]) -> list[str]:
        """fitness.png and species.png (plots.py) from every generation's row (stats_file.py reads
        them back from stats.csv and species.csv)."""
        return plot(rows, self.path)

    def has_behaviors(self) -> bool:
        return os.path.isfile(os.path.join(self.path, BEHAVIORS_FILE))

    def save_behaviors(self, layouts: dict[str, Layout], roles: dict[str, str]) -> str:
        """behaviors.json: each reported behavior's layout (sensor sizes in order, continuous
        actions, branch sizes, and each sensor's shape, whether it is visual and channels first)
        and role, as the game reported them at the start of the run."""
        record = {name: {"role": roles.get(name, "unlisted"), "observation_sizes": list(layout.observation_sizes),
                         "continuous": layout.continuous, "branches": list(layout.branches),
                         "sensors": [{"shape": list(s.shape), "visual": s.visual, "channels_first": s.channels_first}
                                     for s in layout.sensors]}
                  for name, layout in sorted(layouts.items())}
        path = os.path.join(self.path, BEHAVIORS_FILE)
        write_atomic(path, json.dumps(record, indent=1).encode())
        return path

    def save_substrate(self, substrate: Substrate) -> str:
        """substrate.json: a hyperneat run's substrate (each layer's node coordinates, the
        activation, the query), from which and winner.json alone the winner's network is rebuilt."""
        path = os.path.join(self.path, SUBSTRATE_FILE)
        write_substrate(substrate, path)
        return path

    def save_league(self, record: dict) -> str:
        """league.json: a self-play run's leagues as they ended (members, ratings, the winner)."""
        path = os.path.join(self.path, LEAGUE_FILE)
        write_atomic(path, json.dumps(record, indent=1).encode())
        return path

    def save_winner(self, genome, config, fresh: dict | None = None) -> list[str]:
        """winner.pickle, winner.json (with the winner's score on fresh episodes, `fresh`) and its drawing."""
        save_genome_pickle(genome, os.path.join(self.path, "winner.pickle"))
        save_genome_json(genome, config, os.path.join(self.path, "winner.json"), fresh)
        return [os.path.join(self.path, "winner.pickle"), os.path.join(self.path, "winner.json")] + \
            self.draw(genome, config)

    def draw(self, genome, config) -> list[str]:
        """winner.dot always; winner.png where Graphviz's `dot` program is installed."""
        import graphviz
        gc = config.genome_config
        graph = graphviz.Digraph("winner", graph_attr={"rankdir": "LR"}, node_attr={"fontsize": "9"})
        for i, key in enumerate(gc.input_keys):
            graph.node(str(key), f"in {i}", shape="box", style="filled", fillcolor="lightgray")
        for i, key in enumerate(gc.output_keys):
            graph.node(str(key), f"out {i}\\n{genome.nodes[key].activation}", style="filled", fillcolor="lightblue")
        for key, node in genome.nodes.items():
            if key not in gc.output_keys:
                graph.node(str(key), f"{key}\\n{node.activation}", shape="circle")
        for (i, o), conn in genome.connections.items():
            graph.edge(str(i), str(o), label=f"{conn.weight:.2f}", style="solid" if conn.enabled else "dotted",
                       color="darkgreen" if conn.weight > 0 else "firebrick")
        dot_path = os.path.join(self.path, "winner.dot")
        write_atomic(dot_path, graph.source.encode())
        out = [dot_path]
        if shutil.which("dot"):
            png = subprocess.run(["dot", "-Tpng"], input=graph.source.encode(), capture_output=True, timeout=60)
            if png.returncode == 0:
                write_atomic(os.path.join(self.path, "winner.png"), png.stdout)
                out.append(os.path.join(self.path, "winner.png"))
        return out


def load_behaviors(folder: str) -> dict[str, Layout] | None:
    """The layouts a run folder recorded (behaviors.json), None when it has no record."""
    path = os.path.join(folder, BEHAVIORS_FILE)
    if not os.path.isfile(path):
        return None
    try:
        with open(path) as f:
            record = json.load(f)
        return {name: Layout(tuple(int(s) for s in entry["observation_sizes"]), int(entry["continuous"]),
                             tuple(int(b) for b in entry["branches"]),
                             tuple(Sensor(tuple(int(d) for d in s["shape"]), bool(s["visual"]),
                                          bool(s["channels_first"])) for s in entry.get("sensors", ())))
                for name, entry in record.items()}
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ConfigError(f"{path} is not a behaviors record neatpar wrote ({type(exc).__name__}): delete it to "
                          f"read the layouts from the environment") from None


def load_substrate(folder: str) -> Substrate | None:
    """The substrate a hyperneat run folder recorded (substrate.json), None when it has none."""
    path = os.path.join(folder, SUBSTRATE_FILE)
    return read_substrate(path) if os.path.isfile(path) else None


def _missing_folders(path: str) -> list[str]:
    """`path` and those of its parents that do not exist yet, innermost first."""
    missing = []
    while path and not os.path.exists(path):
        missing.append(path)
        parent = os.path.dirname(path)
        if parent == path:
            break
        path = parent
    return missing


def _lock_folder(path: str) -> int:
    """An exclusive lock on the folder's lock file, held through a descriptor children do not
    inherit, or a ConfigError when another process holds it."""
    fd = os.open(os.path.join(path, LOCK_FILE), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        locked = filelock.lock_descriptor(fd, blocking=False)
    except BaseException:
        os.close(fd)
        raise
    if not locked:
        os.close(fd)
        raise FolderTaken(f"run folder {path} is in use by another neatpar run: choose another --out, or wait for "
                          f"that run to end")
    return fd


def _create_exclusive(path: str, data: bytes) -> bool:
    """Create `path` with `data` unless it exists (False then); a reader sees no part of it."""
    tmp = f"{path}.tmp-{os.getpid()}"
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    try:
        os.link(tmp, path)  # fails if `path` exists: one process creates it
        return True
    except FileExistsError:
        return False
    finally:
        os.remove(tmp)
