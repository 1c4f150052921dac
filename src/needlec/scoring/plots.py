"""Plots with deterministic bytes: the length x depth heatmap and the accuracy-by-length curve.

matplotlib's object API only (no pyplot state); SVG ids come from a fixed hash salt and no date
or software version is written, so the same summary always gives the same files.
"""

from __future__ import annotations

import io
from typing import Any

SALT = "needlec"


def _figure(width: float, height: float) -> Any:
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), dpi=100)


def heatmap_figure(title: str, heat: dict[str, Any]) -> Any:
    """A red-amber-green heatmap of mean scores (points): length on x, depth on y, cell labels."""
    from matplotlib.colors import LinearSegmentedColormap

    lengths, depths, cells = heat["lengths"], heat["depths"], heat["cells"]
    fig = _figure(max(4.0, 0.9 * len(lengths) + 2), max(3.0, 0.4 * len(depths) + 1.5))
    ax = fig.add_subplot()
    cmap = LinearSegmentedColormap.from_list("rag", ["#c0392b", "#f39c12", "#27ae60"])
    grid = [[float("nan") if v is None else v for v in row] for row in cells]
    image = ax.imshow(grid, cmap=cmap, vmin=0, vmax=100, aspect="auto", interpolation="nearest")
    ax.set_xticks(range(len(lengths)), [f"{v:,}" for v in lengths], rotation=45, ha="right")
    ax.set_yticks(range(len(depths)), [f"{v:g}%" for v in depths])
    ax.set_xlabel("context length (tokens)")
    ax.set_ylabel("needle depth")
    ax.set_title(title)
    for y, row in enumerate(cells):
        for x, value in enumerate(row):
            if value is not None:
                ax.text(x, y, f"{value:.0f}", ha="center", va="center", fontsize=7, color="black")
    fig.colorbar(image, ax=ax, label="score (points)")
    fig.tight_layout()
    return fig


def length_figure(title: str, by_length: list[dict[str, Any]]) -> Any:
    """Mean score by context length with its 95% interval."""
    fig = _figure(5.0, 3.2)
    ax = fig.add_subplot()
    xs = [row["context_length"] for row in by_length]
    ys = [row["mean"] for row in by_length]
    lo = [row["ci95"][0] for row in by_length]
    hi = [row["ci95"][1] for row in by_length]
    ax.fill_between(xs, lo, hi, alpha=0.25, color="#2c7fb8", linewidth=0)
    ax.plot(xs, ys, marker="o", color="#2c7fb8")
    if len(set(xs)) > 1 and min(xs) > 0:
        ax.set_xscale("log", base=2)
    ax.set_ylim(0, 100)
    ax.set_xlabel("context length (tokens)")
    ax.set_ylabel("score (points)")
    ax.set_title(title)
    fig.tight_layout()
    return fig


def render(fig: Any, fmt: str) -> bytes:
    """The figure as SVG or PNG bytes, identical on every run with the same inputs."""
    import matplotlib

    buf = io.BytesIO()
    with matplotlib.rc_context({"svg.hashsalt": SALT, "svg.fonttype": "path", "path.simplify": True}):
        if fmt == "svg":
            fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
        else:
            fig.savefig(buf, format="png", metadata={"Software": None})
    return buf.getvalue()
