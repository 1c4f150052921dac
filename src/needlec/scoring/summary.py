"""The summary: overall and per-config aggregates, plus the family-specific scores."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from needlec.scoring import aggregates as agg
from needlec.scoring.aggregates import Scored
from needlec.scoring.stats import summarize

SUMMARY_SCHEMA = 1
SHOW = 20


def config_summary(rows: Sequence[Scored]) -> dict[str, Any]:
    """Every aggregate of one config's rows (means in points)."""
    first = rows[0].item
    scoring = first.get("scoring") or {}
    out: dict[str, Any] = {
        "family": first.get("family"),
        "task": first.get("task"),
        "metric": scoring.get("metric"),
        "metric_version": scoring.get("version"),
        **summarize([r.score for r in rows]),
        "by_length": agg.by_field(rows, "context_length"),
        "by_depth": agg.by_field(rows, "depth_percent"),
        "heatmap": agg.heatmap(rows),
        "position": agg.position_bands(rows),
        "degradation_slope": agg.degradation_slope(agg.middle_band_curve(rows, (20.0, 80.0))),
        "effective_length": agg.effective_lengths(rows),
    }
    languages = agg.language_matrix(rows)
    if languages is not None:
        out["languages"] = languages
    existence = agg.balanced_accuracy(rows)
    if existence is not None:
        out["existence"] = existence
    circ = agg.circular(rows)
    if circ is not None:
        out["circular"] = circ
    return out


def build_summary(
    rows: Sequence[Scored], *, missing: Sequence[str] = (), unknown: Sequence[str] = (), repeated: Sequence[str] = ()
) -> dict[str, Any]:
    """The whole summary as JSON-ready data; deterministic for the same rows."""
    configs = agg.group_by(rows, lambda r: str(r.item.get("config")))
    benchmarks = sorted({str(r.item.get("benchmark")) for r in rows})
    summary: dict[str, Any] = {
        "schema": SUMMARY_SCHEMA,
        "benchmarks": benchmarks,
        "responses": {
            "scored_items": len(rows),
            "missing": len(missing),
            "missing_first": list(missing[:SHOW]),
            "unknown": len(unknown),
            "unknown_first": list(unknown[:SHOW]),
            "several_responses": len(repeated),
        },
        "overall": summarize([r.score for r in rows]),
        "configs": {name: config_summary(configs[name]) for name in sorted(configs)},
    }
    families: dict[str, Any] = {}
    nb = agg.needlebench_overall(rows)
    if nb is not None:
        families["needlebench"] = nb
    atc = agg.atc_score(rows)
    if atc is not None:
        families["atc"] = atc
    ml = agg.mlneedle_effective(rows)
    if ml is not None:
        families["mlneedle"] = ml
    if families:
        summary["families"] = families
    return summary
