"""Static SVG plots for benchmark pages: readable without JavaScript, byte-stable across runs.

Figures are drawn with matplotlib's object API (no pyplot, no global backend); text is stored as
paths, element ids come from a fixed hash salt and the SVG carries no date.
"""

from __future__ import annotations

import io
from collections import Counter
from typing import Any

import matplotlib
from matplotlib.figure import Figure

from needlec.site.collect import Benchmark
from needlec.site.markdown import short_number

STYLE: Any = {  # an rcParams mapping (matplotlib types its keys as literals)
    "svg.hashsalt": "needlec",
    "svg.fonttype": "path",
    "font.family": "DejaVu Sans",
    "font.size": 9,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "path.simplify": False,
}
PALETTE = ["#3f51b5", "#ff9800", "#009688", "#e91e63", "#795548", "#607d8b", "#8bc34a", "#9c27b0"]


def _svg(figure: Figure) -> bytes:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="svg", metadata={"Date": None}, bbox_inches="tight")
    return buffer.getvalue()


def stacks(bench: Benchmark) -> list[tuple[str, dict[int, int]]]:
    """(label, items per target length) of each bar segment: one per config, or, when there are
    more configs than colours, one per value of the first variant axis (its configs summed), so
    the plot stays readable and cheap to draw for a large variant matrix."""
    per_config = [
        (grid.name, grid.axes, {n: grid.items // max(1, len(grid.lengths)) for n in grid.lengths})
        for grid in bench.grids
    ]
    if len(per_config) <= len(PALETTE) or not all(axes for _, axes, _ in per_config):
        return [(name, counts) for name, _, counts in per_config]
    groups: dict[str, tuple[int, dict[int, int]]] = {}
    for _, axes, counts in per_config:
        axis, value = axes[0]
        members, total = groups.setdefault(f"{axis}={value}", (0, {}))
        for n, items in counts.items():
            total[n] = total.get(n, 0) + items
        groups[f"{axis}={value}"] = (members + 1, total)
    return [(f"{label} ({members} configs)", total) for label, (members, total) in groups.items()]


def lengths_svg(bench: Benchmark) -> bytes:
    """Items per target context length in the full grid, stacked by config (or config group)."""
    lengths = bench.all_lengths
    with matplotlib.rc_context(STYLE):
        figure = Figure(figsize=(7.0, 3.2))
        axes = figure.add_subplot()
        positions = list(range(len(lengths)))
        bottom = [0] * len(lengths)
        segments = stacks(bench)
        for i, (label, counts) in enumerate(segments):
            heights = [counts.get(n, 0) for n in lengths]
            axes.bar(positions, heights, bottom=bottom, color=PALETTE[i % len(PALETTE)], label=label, width=0.7)
            bottom = [b + h for b, h in zip(bottom, heights, strict=True)]
        axes.set_xticks(positions, [short_number(n) for n in lengths])
        axes.set_xlabel("target context length (tokens)")
        axes.set_ylabel("items")
        axes.set_title(f"{bench.total_items:,} items over {len(lengths)} lengths (full grid)")
        if len(segments) > 1:
            axes.legend(title="config", frameon=False, fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
        return _svg(figure)


def depths_svg(bench: Benchmark) -> bytes:
    """Left: needles per achieved depth; right: achieved against target depth, per config."""
    with matplotlib.rc_context(STYLE):
        figure = Figure(figsize=(7.0, 3.2))
        left, right = figure.subplots(1, 2)
        bins = [i * 10.0 for i in range(11)]
        names = [name for name, pairs in bench.depths.items() if pairs]
        left.hist(
            [[a for _, a in bench.depths[n]] for n in names] or [[]],
            bins=bins,
            stacked=True,
            color=[PALETTE[i % len(PALETTE)] for i in range(max(1, len(names)))],
            label=names or None,
        )
        left.set_xlabel("achieved needle depth (%)")
        left.set_ylabel("needles")
        left.set_xlim(0, 100)
        left.set_title("needle depths")
        right.plot([0, 100], [0, 100], color="#9e9e9e", linewidth=0.8, linestyle="--")
        for i, name in enumerate(names):
            counts = Counter(bench.depths[name])
            points = sorted(counts)
            right.scatter(
                [t for t, _ in points],
                [a for _, a in points],
                s=[8 + 2 * counts[p] for p in points],
                color=PALETTE[i % len(PALETTE)],
                alpha=0.7,
                label=name,
                linewidths=0,
            )
        right.set_xlabel("target depth (%)")
        right.set_ylabel("achieved depth (%)")
        right.set_xlim(-3, 103)
        right.set_ylim(-3, 103)
        right.set_title("achieved vs target")
        if len(names) > 1:
            right.legend(title="config", frameon=False, fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
        figure.tight_layout()
        return _svg(figure)
