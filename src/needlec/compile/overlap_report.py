"""`needlec overlap`: lexical overlap of questions with their needles and contexts, per config.

For a compiled folder the statistics come from its manifest. For a spec, items are built in
memory at each config's smallest length (every case and haystack, at 50% depth) and measured.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from needlec.compile.overlap import METRICS, OverlapStats, both, stemmed_precision
from needlec.compile.pipeline import Prepared, default_cache_dir
from needlec.compile.plan import ItemKey, Plan
from needlec.compile.size import haystack_ids
from needlec.dataset.manifest import read_manifest


def measure_plan(plan: Plan, cache_dir: Path | None = None) -> dict[str, dict[str, Any]]:
    """Overlap statistics per config from a sample of freshly built items."""
    from needlec.compile.items import build_drawn

    prepared = Prepared(plan, cache_dir or default_cache_dir())
    report: dict[str, dict[str, Any]] = {}
    for config in plan.configs:
        spec = config.spec
        length = min(spec.grid.length_points())
        depths = config.depth_points()
        depth = min(depths, key=lambda d: abs(d - 50.0))
        kind = prepared.kind(config)
        haystacks = {h.id: h for h in prepared.haystacks(spec)}
        tokenizer = spec.tokenizers[0].label
        needle, context = OverlapStats(), OverlapStats()
        for haystack in haystack_ids(spec):
            view = prepared.view(spec, haystacks[haystack], tokenizer, length)
            for case in kind.cases():
                key = ItemKey(config.name, tokenizer, length, depth, case, haystack, 0, config.redraw)
                item, _, draw = build_drawn(plan.spec.name, config, key, view, kind)
                evidence = list(draw.needles)  # the targets' texts, as the kind made them
                needle.add({**item.overlap, **stemmed_precision(item.question, evidence)})
                context.add(both(item.question, item.context()))
        report[config.name] = {"needle": needle.as_dict(), "context": {**context.as_dict(), "length": length}}
    return report


def read_dataset(folder: Path) -> dict[str, dict[str, Any]]:
    manifest = read_manifest(folder)
    return {name: info.get("overlap", {}) for name, info in manifest["configs"].items()}


def _cell(stats: dict[str, Any], metric: str) -> str:
    """A mean as shown, or `-` when it was not measured (no context sample, or a dataset compiled
    before stemmed figures were recorded)."""
    value = stats.get("mean", {}).get(metric)
    return "-" if value is None else f"{value:.3f}"


def render_table(report: dict[str, dict[str, Any]]) -> str:
    """Mean ROUGE precision of the question against the needle and against the whole context,
    each unstemmed and stemmed (`rouge1~s` is ROUGE-1 after Porter stemming)."""
    columns = [(m, label) for m in METRICS for m, label in ((m, m), (f"{m}_stemmed", f"{m}~s"))]
    head = ["config", "items"] + [f"{label}/needle" for _, label in columns]
    head += [f"{label}/context" for _, label in columns]
    rows = [head]
    for name, stats in report.items():
        needle = stats.get("needle", {})
        context = stats.get("context", {})
        rows.append(
            [name, str(needle.get("items", 0))]
            + [_cell(needle, m) for m, _ in columns]
            + [_cell(context, m) for m, _ in columns]
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    lines = [
        "  ".join(cell.ljust(widths[i]) if i == 0 else cell.rjust(widths[i]) for i, cell in enumerate(row))
        for row in rows
    ]
    note = (
        "mean ROUGE precision of the question: against the needle text (the evidence) and against "
        "the whole context (sampled at each config's smallest length); `~s`: after Porter stemming, "
        "so words sharing a stem (eat, eating) count as a match"
    )
    return "\n".join([note, *lines])
