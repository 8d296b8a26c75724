"""The run folder of `neatpar evolve`: checkpoints, per-generation stats, plots, the winner and
the simulator logs. Every file is written atomically (a reader sees the old or the whole new one).

Checkpoints keep neat-python's Checkpointer format (a gzip pickle of generation, config,
population, species set and random state), so `neat.Checkpointer.restore_checkpoint` reads them;
neatpar's own state (champion, stats history) follows as a second pickle in the same file.
They are pickled without side effects on the live config (see neatpar.parallel.serialize).
"""
from __future__ import annotations

import csv
import gzip
import io
import os
import pickle
import shutil
import subprocess

from .errors import ConfigError
from .files import write_atomic
from .genome_io import save_genome_json, save_genome_pickle
from .parallel.serialize import dumps

STATS_FIELDS = ("generation", "best_fitness", "mean_fitness", "stdev_fitness", "species", "episodes",
                "scored_steps", "scored_steps_per_s", "agent_steps", "seconds")


class RunFolder:
    """A run's output folder; created (and checked writable) before any simulator starts."""

    def __init__(self, path: str):
        self.path = os.path.abspath(path)
        self.created = _missing_folders(self.path)  # removed again by discard(), innermost first
        try:
            os.makedirs(os.path.join(self.path, "checkpoints"), exist_ok=True)
            probe = os.path.join(self.path, f".write-test-{os.getpid()}")
            with open(probe, "w") as f:
                f.write("ok")
            os.remove(probe)
        except OSError as exc:
            raise ConfigError(f"run folder {self.path} is not writable ({exc.strerror}): choose another "
                              f"with --out") from None

    @property
    def logs(self) -> str:
        return os.path.join(self.path, "sim-logs")

    def discard(self) -> None:
        """Remove the folder, and the empty parents made for it, if this run created it (start-up
        failed: nothing half-written stays, not even an empty runs/)."""
        if not self.created:
            return
        shutil.rmtree(self.path, ignore_errors=True)
        for parent in self.created[1:]:
            try:
                os.rmdir(parent)
            except OSError:  # not empty: something else lives there now
                break

    # ------------------------------------------------------------ checkpoints

    def checkpoint_path(self, generation: int) -> str:
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
        text = io.StringIO()
        writer = csv.DictWriter(text, fieldnames=STATS_FIELDS)
        writer.writeheader()
        writer.writerows(rows)
        write_atomic(os.path.join(self.path, "stats.csv"), text.getvalue().encode())

    def plot(self, rows: list[dict]) -> str | None:
        """fitness.png (best and mean per generation); None when matplotlib is not installed."""
        try:
            import matplotlib
            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError:
            return None
        fig, ax = plt.subplots(figsize=(7, 4))
        gens = [r["generation"] for r in rows]
        ax.plot(gens, [r["best_fitness"] for r in rows], label="best")
        ax.plot(gens, [r["mean_fitness"] for r in rows], label="mean")
        ax.set_xlabel("generation")
        ax.set_ylabel("fitness")
        ax.legend()
        ax.grid(alpha=0.3)
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png", dpi=100, bbox_inches="tight")
        plt.close(fig)
        path = os.path.join(self.path, "fitness.png")
        write_atomic(path, buffer.getvalue())
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


def checkpoint_state(generation, config, population, species_set, rndstate, extras: dict) -> bytes:
    """The pickled content of a checkpoint: neat-python's 5-tuple, then neatpar's extras."""
    return dumps((generation, config, population, species_set, rndstate)) + dumps(extras)


def load_checkpoint(path: str) -> tuple:
    """(generation, config, population, species_set, rndstate, extras) from a checkpoint file.

    Unpickling runs code: load only checkpoints from your own run folders."""
    if not os.path.isfile(path):
        raise ConfigError(f"checkpoint {path} not found")
    try:
        with gzip.open(path, "rb") as f:
            data = f.read()
        stream = io.BytesIO(data)
        generation, config, population, species_set, rndstate = pickle.load(stream)
        extras = pickle.load(stream) if stream.tell() < len(data) else {}
    except (OSError, EOFError, pickle.UnpicklingError, ValueError, TypeError, AttributeError) as exc:
        raise ConfigError(f"checkpoint {path} is corrupt or truncated ({type(exc).__name__}): resume from "
                          f"an earlier one in the same folder") from None
    return generation, config, population, species_set, rndstate, extras
