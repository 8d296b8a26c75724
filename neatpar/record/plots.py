"""A run's plots: fitness.png (best, mean and a band of one standard deviation around the mean,
per generation) and species.png (species sizes per generation, stacked), from its stats rows;
none when matplotlib is not installed."""
from __future__ import annotations

import io
import os

from .atomic import write_atomic
from .stats_row import StatsRow


def plot(rows: list[StatsRow], folder: str) -> list[str]:
    """fitness.png and species.png in `folder` (atomically written); none without matplotlib."""
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
        paths.append(os.path.join(folder, name))
        write_atomic(paths[-1], buffer.getvalue())
    return paths


def fitness_figure(rows: list[StatsRow]):
    """Best and mean fitness per generation, the mean within a band of one standard deviation."""
    import matplotlib.pyplot as plt
    import numpy as np

    fig, ax = plt.subplots(figsize=(7, 4))
    gens = [r.generation for r in rows]
    mean = np.array([r.mean_fitness for r in rows], float)
    std = np.array([r.stdev_fitness for r in rows], float)
    ax.plot(gens, [r.best_fitness for r in rows], label="best")
    ax.plot(gens, mean, label="mean")
    ax.fill_between(gens, mean - std, mean + std, alpha=0.2, label="mean ± std")
    ax.set_xlabel("generation")
    ax.set_ylabel("fitness")
    ax.legend()
    _generation_axis(ax)
    return fig


def species_figure(rows: list[StatsRow]):
    """Each species' size per generation, stacked (neat-python's visualize.plot_species): one
    band per species, from its first generation to its last (0 where it does not exist)."""
    import matplotlib.pyplot as plt

    gens = [r.generation for r in rows]
    sizes = [{int(k): v for k, v in r.species_sizes.items()} for r in rows]
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
