"""Draw an es-hyperneat run's discovered substrate (substrate.json's winner) as a PNG.

Usage: python docs/draw_es_substrate.py RUN/substrate.json OUT.png
"""
import json
import sys

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main(path: str, out: str) -> None:
    data = json.load(open(path))
    inputs, outputs = data["inputs"], data["outputs"]
    hidden, links = data["winner"]["hidden"], data["winner"]["links"]
    points = inputs + outputs + hidden
    largest = max((abs(w) for _, _, w in links), default=1.0)
    fig, ax = plt.subplots(figsize=(6, 6))
    for a, b, w in links:
        (x1, y1), (x2, y2) = points[a], points[b]
        ax.annotate("", (x2, y2), (x1, y1), arrowprops=dict(arrowstyle="->", lw=0.5 + 2.5 * abs(w) / largest,
                                                            color="darkgreen" if w > 0 else "firebrick", alpha=0.7))
    for nodes, colour, label in ((inputs, "gray", "inputs"), (outputs, "royalblue", "outputs"),
                                 (hidden, "orange", "hidden (found)")):
        if nodes:
            ax.scatter([p[0] for p in nodes], [p[1] for p in nodes], s=80, c=colour, zorder=3, label=label)
    ax.set(xlim=(-1.1, 1.1), ylim=(-1.1, 1.1), aspect="equal", xlabel="x", ylabel="y",
           title=f"{len(hidden)} hidden nodes, {len(links)} links")
    ax.legend(loc="center right", fontsize=8)
    fig.savefig(out, dpi=90, bbox_inches="tight")


if __name__ == "__main__":
    main(*sys.argv[1:3])
