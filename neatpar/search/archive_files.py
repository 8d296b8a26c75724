"""What a MAP-Elites archive leaves in a run folder, as bytes for the run to write: archive.json
(every filled cell with its descriptor, fitness and genome in the run's genome-file form) and
archive.png, a heat map of the elites' fitness (none when matplotlib, the `plot` extra, is not
installed)."""
from __future__ import annotations

import io
import json
from typing import Any, Callable

import numpy as np

from .map_elites import EliteArchive

FORMAT = "neatpar-archive"


def archive_record(archive: EliteArchive, genome_to_dict: Callable[[Any], dict], qd_offset: float = 0.0) -> dict:
    """The archive as a JSON-ready dict; `genome_to_dict` writes one genome (the genome files' form)."""
    grid = archive.grid
    cells = []
    for cell in archive.filled():
        elite = archive.cells[cell]
        cells.append({"cell": cell, "index": [int(i) for i in np.unravel_index(cell, grid.bins)],
                      "descriptor": [float(v) for v in elite.descriptor], "fitness": elite.fitness,
                      "generation": elite.generation, "genome_key": elite.genome.key,
                      "genome": genome_to_dict(elite.genome)})
    return {"format": FORMAT, "version": 1, "descriptor_bounds": [list(b) for b in grid.bounds],
            "descriptor_bins": list(grid.bins), "cells_total": grid.cells, "filled": len(cells),
            "coverage": archive.coverage, "qd_offset": qd_offset, "qd_score": archive.qd_score(qd_offset),
            "cells": cells}


def archive_json(archive: EliteArchive, genome_to_dict: Callable[[Any], dict], qd_offset: float = 0.0) -> bytes:
    """archive.json's content."""
    return json.dumps(archive_record(archive, genome_to_dict, qd_offset), indent=1).encode()


def fitness_grid(archive: EliteArchive) -> np.ndarray:
    """The elites' fitness over the first two descriptor dimensions ((bins0, bins1), NaN where
    empty; further dimensions folded in by their maximum; one dimension gives one row)."""
    bins = archive.grid.bins
    values = np.full(bins, np.nan)
    for cell, elite in archive.cells.items():
        values[np.unravel_index(cell, bins)] = elite.fitness
    if len(bins) == 1:
        return values[:, None]
    if len(bins) > 2 and np.isfinite(values).any():
        folded = np.where(np.isnan(values), -np.inf, values).max(axis=tuple(range(2, len(bins))))
        return np.where(np.isneginf(folded), np.nan, folded)
    return values if len(bins) == 2 else np.full(bins[:2], np.nan)


def archive_png(archive: EliteArchive) -> bytes | None:
    """archive.png's content: the elites' fitness per cell (first two dimensions; x the first),
    empty cells blank; None without matplotlib."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    grid = archive.grid
    values = fitness_grid(archive)
    (x0, x1) = grid.bounds[0]
    (y0, y1) = grid.bounds[1] if len(grid.bounds) > 1 else (0.0, 1.0)
    fig, ax = plt.subplots(figsize=(5.5, 4.5))
    image = ax.imshow(np.ma.masked_invalid(values.T), origin="lower", extent=(x0, x1, y0, y1), aspect="auto",
                      interpolation="nearest", cmap="viridis")
    fig.colorbar(image, ax=ax, label="elite fitness")
    ax.set_xlabel("descriptor 0")
    ax.set_ylabel("descriptor 1" if len(grid.bounds) > 1 else "")
    folded = " (max over the other dimensions)" if len(grid.bins) > 2 else ""
    ax.set_title(f"{len(archive.cells)} of {grid.cells} cells filled{folded}")
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=100, bbox_inches="tight")
    plt.close(fig)
    return buffer.getvalue()
