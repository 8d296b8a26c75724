"""The run folder of `neatpar evolve`: the run's settings (run.json), checkpoints, per-generation
stats, plots, the winner and the simulator logs (TensorBoard's event files: tensorboard.py). Every
file but the event files is written atomically (a reader sees the old or the whole new one).

stats.csv has one row per generation. Its columns never move: STATS_FIELDS first, then, in the
order they first appear, per-behavior columns `FIELD:BEHAVIOR` (mean_return and
mean_episode_length of each population behavior, when the population drives several) and one
column `game:KEY` per key the game recorded about itself (Stats side channel); a column that
first appears in a later generation is empty in the rows before it. A self-play run's rows begin
those with `elo` and `league_size` (run/league.py).

Checkpoints keep neat-python's Checkpointer format (a gzip pickle of generation, config,
population, species set and random state), so `neat.Checkpointer.restore_checkpoint` reads them;
neatpar's own state (champion, stats history, the run's settings) follows as a second pickle in
the same file.
They are pickled without side effects on the live config (see neatpar.parallel.serialize).
"""
from __future__ import annotations

import csv
import fcntl
import gzip
import io
import json
import os
import pickle
import shutil
import subprocess
import tempfile

from .envs.base import Layout
from .errors import ConfigError
from .files import write_atomic
from .genome_io import save_genome_json, save_genome_pickle
from .parallel.serialize import dumps
from .run_settings import RunSettings

BEHAVIORS_FILE = "behaviors.json"
LEAGUE_FILE = "league.json"
RUN_FILE = "run.json"  # the run's settings (run_settings.py), also in every checkpoint
STATS_FIELDS = ("generation", "best_fitness", "mean_fitness", "stdev_fitness", "species", "episodes",
                "scored_steps", "scored_steps_per_s", "agent_steps", "seconds",
                "mean_return", "mean_episode_length", "mean_nodes", "mean_connections")
BEHAVIOR_SEPARATOR = ":"   # FIELD:BEHAVIOR, a population behavior's own value
GAME_PREFIX = "game:"      # game:KEY, what the game recorded about itself
SPECIES_SIZES = "species_sizes"  # a row's {species id: members}, for species.png (not a column)


class RunFolder:
    """A run's output folder, held by one `neatpar evolve` process for as long as the run lasts.

    Claimed before any simulator starts: the folder is locked (flock on the folder itself: the
    lock ends with the process, however it ends), then a new run creates run.json exclusively
    (a folder that already holds a run or other files is refused), a resumed one rewrites it.
    Two runs started at the same moment on one folder: one holds it, the other is refused.
    With `run` None, a folder for one population's outputs inside a claimed run's folder
    (asymmetric self-play): made and checked writable, with no run.json and no checkpoints."""

    def __init__(self, path: str, run: RunSettings | None, resume: bool = False):
        self.path = os.path.abspath(path)
        self.created = _missing_folders(self.path)  # removed again by discard(), innermost first
        self._lock: int | None = None
        try:
            os.makedirs(self.path, exist_ok=True)
            if run is not None:
                self._lock = _lock_folder(self.path)
        except OSError as exc:
            self.created = []  # another run may own what this one found missing
            raise ConfigError(f"run folder {self.path} is not writable ({exc.strerror}): choose another "
                              f"with --out") from None
        try:
            self._claim(run, resume)
        except BaseException:
            self.release()
            raise

    def _claim(self, run: RunSettings | None, resume: bool) -> None:
        """run.json written (exclusively for a new run), checkpoints/ made, writing checked."""
        try:
            if run is not None:
                record = json.dumps(run.to_dict(), indent=1).encode()
                if resume:
                    write_atomic(self.run_file, record)
                elif os.listdir(self.path) or not _create_exclusive(self.run_file, record):
                    self.created = []
                    raise ConfigError(f"run folder {self.path} already holds a run: choose a new --out, or "
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
    def logs(self) -> str:
        return os.path.join(self.path, "sim-logs")

    def release(self) -> None:
        """End this process's hold on the folder (idempotent)."""
        lock, self._lock = self._lock, None
        if lock is not None:
            os.close(lock)

    def discard(self) -> tuple[str, str] | None:
        """Remove the folder, and the empty parents made for it, if this run created it (start-up
        failed: nothing half-written stays, not even an empty runs/). The simulators' logs are
        kept, moved to a folder of their own in the system's temporary folder: returns (where they
        were, where they are now), None when there were none."""
        if not self.created:
            return None
        moved = None
        if os.path.isdir(self.logs) and os.listdir(self.logs):
            kept = tempfile.mkdtemp(prefix=f"neatpar-sim-logs-{os.path.basename(self.path)}-")
            for name in os.listdir(self.logs):
                shutil.move(os.path.join(self.logs, name), os.path.join(kept, name))
            moved = (self.logs, kept)
        shutil.rmtree(self.path, ignore_errors=True)
        for parent in self.created[1:]:
            try:
                os.rmdir(parent)
            except OSError:  # not empty: something else lives there now
                break
        return moved

    # ------------------------------------------------------------ checkpoints

    def checkpoint_path(self, generation: int | str) -> str:
        return os.path.join(self.path, "checkpoints", f"checkpoint-{generation}.gz")

    def save_checkpoint(self, generation, config, population, species_set, rndstate, extras: dict) -> str:
        return self.save_checkpoint_bytes(generation, checkpoint_state(generation, config, population,
                                                                       species_set, rndstate, extras))

    def save_checkpoint_bytes(self, generation: int, state: bytes) -> str:
        """Write a checkpoint from checkpoint_state() bytes (taken earlier, e.g. at the start of a
        generation that was then interrupted)."""
        buffer = io.BytesIO()
        with gzip.GzipFile(fileobj=buffer, mode="wb", compresslevel=5, mtime=0) as f:
            f.write(state)
        path = self.checkpoint_path(generation)
        write_atomic(path, buffer.getvalue())
        return path

    # ------------------------------------------------------------ stats, plots, winner

    def write_stats(self, rows: list[dict]) -> None:
        """stats.csv from every generation's row (see the module docstring for the columns)."""
        text = io.StringIO()
        writer = csv.DictWriter(text, fieldnames=stats_columns(rows), restval="", extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
        write_atomic(os.path.join(self.path, "stats.csv"), text.getvalue().encode())

    def plot(self, rows: list[dict]) -> list[str]:
        """fitness.png (best, mean and a band of one standard deviation around the mean, per
        generation) and species.png (species sizes per generation, stacked); none when
        matplotlib is not installed."""
        try:
            import matplotlib
            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError:
            return []
        paths = []
        for name, figure in (("fitness.png", fitness_figure(rows)), ("species.png", species_figure(rows))):
            buffer = io.BytesIO()
            figure.savefig(buffer, format="png", dpi=100, bbox_inches="tight")
            plt.close(figure)
            paths.append(os.path.join(self.path, name))
            write_atomic(paths[-1], buffer.getvalue())
        return paths

    def has_behaviors(self) -> bool:
        return os.path.isfile(os.path.join(self.path, BEHAVIORS_FILE))

    def save_behaviors(self, layouts: dict[str, Layout], roles: dict[str, str]) -> str:
        """behaviors.json: each reported behavior's layout (sensor sizes in order, continuous
        actions, branch sizes) and role, as the game reported them at the start of the run."""
        record = {name: {"role": roles.get(name, "unlisted"), "observation_sizes": list(layout.observation_sizes),
                         "continuous": layout.continuous, "branches": list(layout.branches)}
                  for name, layout in sorted(layouts.items())}
        path = os.path.join(self.path, BEHAVIORS_FILE)
        write_atomic(path, json.dumps(record, indent=1).encode())
        return path

    def save_league(self, record: dict) -> str:
        """league.json: a self-play run's leagues as they ended (members, ratings, the winner)."""
        path = os.path.join(self.path, LEAGUE_FILE)
        write_atomic(path, json.dumps(record, indent=1).encode())
        return path

    def save_winner(self, genome, config) -> list[str]:
        save_genome_pickle(genome, os.path.join(self.path, "winner.pickle"))
        save_genome_json(genome, config, os.path.join(self.path, "winner.json"))
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


def stats_columns(rows: list[dict]) -> list[str]:
    """stats.csv's columns: STATS_FIELDS, then the other columns in the order they first appear."""
    columns = dict.fromkeys(STATS_FIELDS)
    for row in rows:
        columns.update((key, None) for key in row if key != SPECIES_SIZES and key not in columns)
    return list(columns)


def fitness_figure(rows: list[dict]):
    """Best and mean fitness per generation, the mean within a band of one standard deviation."""
    import matplotlib.pyplot as plt
    import numpy as np

    fig, ax = plt.subplots(figsize=(7, 4))
    gens = [r["generation"] for r in rows]
    mean = np.array([r["mean_fitness"] for r in rows], float)
    std = np.array([r["stdev_fitness"] for r in rows], float)
    ax.plot(gens, [r["best_fitness"] for r in rows], label="best")
    ax.plot(gens, mean, label="mean")
    ax.fill_between(gens, mean - std, mean + std, alpha=0.2, label="mean ± std")
    ax.set_xlabel("generation")
    ax.set_ylabel("fitness")
    ax.legend()
    _generation_axis(ax)
    return fig


def species_figure(rows: list[dict]):
    """Each species' size per generation, stacked (neat-python's visualize.plot_species): one
    band per species, from its first generation to its last (0 where it does not exist)."""
    import matplotlib.pyplot as plt

    gens = [r["generation"] for r in rows]
    sizes = [{int(k): v for k, v in r.get(SPECIES_SIZES, {}).items()} for r in rows]
    species = sorted(set().union(*sizes)) if sizes else []
    fig, ax = plt.subplots(figsize=(7, 4))
    if species:
        ax.stackplot(gens, [[s.get(k, 0) for s in sizes] for k in species])
    ax.set_title("Speciation")
    ax.set_xlabel("generation")
    ax.set_ylabel("size per species")
    _generation_axis(ax)
    return fig


def _generation_axis(ax) -> None:
    """Whole generations on the x axis, and a light grid."""
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.grid(alpha=0.3)


def load_behaviors(folder: str) -> dict[str, Layout] | None:
    """The layouts a run folder recorded (behaviors.json), None when it has no record."""
    path = os.path.join(folder, BEHAVIORS_FILE)
    if not os.path.isfile(path):
        return None
    try:
        with open(path) as f:
            record = json.load(f)
        return {name: Layout(tuple(int(s) for s in entry["observation_sizes"]), int(entry["continuous"]),
                             tuple(int(b) for b in entry["branches"])) for name, entry in record.items()}
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ConfigError(f"{path} is not a behaviors record neatpar wrote ({type(exc).__name__}): delete it to "
                          f"read the layouts from the environment") from None


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
    """An exclusive lock on the folder itself (a descriptor children do not inherit), or a
    ConfigError when another process holds it."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise ConfigError(f"run folder {path} is in use by another neatpar run: choose another --out, or wait for "
                          f"that run to end") from None
    except BaseException:
        os.close(fd)
        raise
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


def checkpoint_state(generation, config, population, species_set, rndstate, extras: dict) -> bytes:
    """The pickled content of a checkpoint: neat-python's 5-tuple, then neatpar's extras."""
    return dumps((generation, config, population, species_set, rndstate)) + dumps(extras)


def restore_population(saved_config, config, population: dict, species_set, generation: int, best_genome=None):
    """A neat.Population that continues a checkpoint's (saved with `saved_config`) under `config`,
    with the saved run's evolving counters (node keys, innovation numbers), as
    neat.Checkpointer.restore_checkpoint keeps the innovation tracker."""
    import neat
    old, new = saved_config.genome_config, config.genome_config
    if getattr(old, "node_indexer", None) is not None:
        new.node_indexer = old.node_indexer
    restored = neat.Population(config, (population, species_set, generation))
    tracker = getattr(old, "innovation_tracker", None)
    if tracker is not None:
        restored.reproduction.innovation_tracker = tracker
        new.innovation_tracker = tracker
    if best_genome is not None:
        restored.best_genome = best_genome
    return restored


def load_checkpoint(path: str) -> tuple:
    """(generation, config, population, species_set, rndstate, extras) from a checkpoint file.

    Unpickling runs code: load only checkpoints from your own run folders."""
    if not os.path.isfile(path):
        raise ConfigError(f"checkpoint {path} not found")
    with open(path, "rb") as f:
        magic = f.read(2)
    if magic != b"\x1f\x8b":  # not gzip: a winner.json, a .pickle genome, a config...
        raise ConfigError(f"{path} is not a checkpoint: resume from a run folder's checkpoints/checkpoint-N.gz")
    try:
        with gzip.open(path, "rb") as f:
            data = f.read()
        stream = io.BytesIO(data)
        state = pickle.load(stream)
        extras = pickle.load(stream) if stream.tell() < len(data) else {}
    except (OSError, EOFError, pickle.UnpicklingError, ValueError, TypeError, AttributeError) as exc:
        raise ConfigError(f"checkpoint {path} is corrupt or truncated ({type(exc).__name__}): resume from "
                          f"an earlier one in the same folder") from None
    if not (isinstance(state, tuple) and len(state) == 5 and isinstance(extras, dict)):
        raise ConfigError(f"{path} is not a checkpoint (it holds a {type(state).__name__}): resume from a run "
                          f"folder's checkpoints/checkpoint-N.gz")
    generation, config, population, species_set, rndstate = state
    return generation, config, population, species_set, rndstate, extras
