"""The summary: overall and per-config aggregates, plus the family-specific scores.

Which aggregates a config reports, its headline effective-length rule and the baseline of relative
rules come from the spec's `reports:` (recorded per config in the manifest); without it every
aggregate that applies is reported, with each rule's default parameters and no baseline.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from needlec.scoring import aggregates as agg
from needlec.scoring.aggregates import Scored
from needlec.scoring.families.base import FamilyResult
from needlec.scoring.stats import points, summarize
from needlec.spec.reports import RULE_DEFAULTS, ReportsSpec

SUMMARY_SCHEMA = 1
SHOW = 20


def _parameter(reports: ReportsSpec | None, rule: str) -> float:
    """A rule's parameter: the spec's threshold when it is the headline rule, else the default."""
    if reports is not None and reports.effective_length.rule == rule:
        return reports.effective_length.value()
    if rule not in RULE_DEFAULTS:
        raise ValueError(f"unknown effective-length rule {rule!r}")
    return RULE_DEFAULTS[rule]


def config_summary(
    rows: Sequence[Scored],
    reports: ReportsSpec | None = None,
    baseline: float | None = None,
    baseline_length: int | None = None,
) -> dict[str, Any]:
    """The aggregates of one config's rows (means in points) that `reports` asks for (all by default)."""
    first = rows[0].item
    scoring = first.get("scoring") or {}

    def shows(name: str) -> bool:
        return reports is None or reports.shows(name)

    out: dict[str, Any] = {
        "family": first.get("family"),
        "task": first.get("task"),
        "metric": scoring.get("metric"),
        "metric_version": scoring.get("version"),
        **summarize([r.score for r in rows]),
    }
    if shows("by_length"):
        out["by_length"] = agg.by_field(rows, "context_length")
    if shows("by_depth"):
        out["by_depth"] = agg.by_field(rows, "depth_percent")
    if shows("heatmap"):
        out["heatmap"] = agg.heatmap(rows)
    if shows("position"):
        out["position"] = agg.position_bands(rows)
    if shows("degradation_slope"):
        out["degradation_slope"] = agg.degradation_slope(agg.middle_band_curve(rows, (20.0, 80.0)))
    if shows("effective_length"):
        lengths = agg.effective_lengths(
            rows,
            ruler_threshold=_parameter(reports, "ruler"),
            lesson_tau=_parameter(reports, "lesson"),
            nolima_ratio=_parameter(reports, "nolima"),
            mlneedle_ratio=_parameter(reports, "mlneedle"),
            baseline=baseline,
            baseline_length=baseline_length,
        )
        if reports is not None and reports.effective_length.rule != "none":
            rule = reports.effective_length.rule
            chosen = lengths.get(rule) or {}
            lengths["headline"] = {
                "rule": rule,
                "threshold": reports.effective_length.value(),
                "effective_length": chosen.get("effective_length"),
                "first_failing_length": chosen.get("first_failing_length"),
            }
        out["effective_length"] = lengths
    languages = agg.language_matrix(rows) if shows("languages") else None
    if languages is not None:
        out["languages"] = languages
    existence = agg.balanced_accuracy(rows) if shows("existence") else None
    if existence is not None:
        out["existence"] = existence
    circ = agg.circular(rows) if shows("circular") else None
    if circ is not None:
        out["circular"] = circ
    if reports is not None:
        out["reports"] = reports.model_dump(mode="json")
    return out


def _cell(row: Scored) -> tuple[str, str, str]:
    """What a no-distractor baseline pairs on: the task and the needle and question languages."""
    langs = row.item.get("languages") or {}
    return (str(row.item.get("task")), str(langs.get("needle", "?")), str(langs.get("question", "?")))


def _baseline(
    name: str, reports: ReportsSpec | None, configs: Mapping[str, Sequence[Scored]]
) -> tuple[float | None, int | None]:
    """The baseline (points) a config's reports name, and the length it was measured at (if any).

    `items: no_distractors` pairs each config with the no-distractor items of its task and needle
    and question languages (MLNeedle's baseline per language cell); a config made of such items
    gets no baseline itself (no relative rule applies to the baseline).
    """
    if reports is None or reports.baseline is None:
        return None, None
    base = reports.baseline
    if base.items is not None:
        own = configs[name]
        if all(agg.is_no_distractor(r) for r in own):
            return None, None
        cells = {_cell(r) for r in own}
        found = [r for rows in configs.values() for r in rows if agg.is_no_distractor(r) and _cell(r) in cells]
        return (points(sum(r.score for r in found) / len(found)) if found else None), None
    if base.config is not None:
        rows = configs.get(base.config) or []
        return (points(sum(r.score for r in rows) / len(rows)) if rows else None), None
    at = [r for r in configs[name] if int(r.item["context_length"]) == base.length]
    return (points(sum(r.score for r in at) / len(at)) if at else None), base.length


def build_summary(
    rows: Sequence[Scored],
    *,
    missing: Sequence[str] = (),
    unknown: Sequence[str] = (),
    repeated: Sequence[str] = (),
    reports: Mapping[str, ReportsSpec] | None = None,
    families: Mapping[str, FamilyResult] | None = None,
) -> dict[str, Any]:
    """The whole summary as JSON-ready data; deterministic for the same rows.

    `families` are the family reports' results when the caller computed them already (else they
    are computed here); their aggregates go under `families`.

    `reports` maps config names to their `reports:` settings; a config not in it gets every
    aggregate. A config whose baseline config has no scored items gets no relative rule.
    """
    reports = reports or {}
    configs = agg.group_by(rows, lambda r: str(r.item.get("config")))
    benchmarks = sorted({str(r.item.get("benchmark")) for r in rows})
    per_config: dict[str, Any] = {}
    for name in sorted(configs):
        wanted = reports.get(name)
        baseline, baseline_length = _baseline(name, wanted, configs)
        per_config[name] = config_summary(configs[name], wanted, baseline, baseline_length)
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
        "configs": per_config,
    }

    chosen = family_reports(rows, reports) if families is None else families
    if chosen:
        summary["families"] = {name: result.aggregate for name, result in chosen.items()}
    return summary


def family_reports(rows: Sequence[Scored], reports: Mapping[str, ReportsSpec] | None = None) -> dict[str, FamilyResult]:
    """Every registered family report that applies to `rows` (see `needlec.scoring.families`),
    in registration order; each picks its own rows by what the items and `reports` say."""
    from needlec.registry import REPORTS

    out: dict[str, FamilyResult] = {}
    for component in REPORTS:
        result = component.factory(component.config(), rows, reports or {})
        if result is not None:
            out[component.name] = result
    return out
