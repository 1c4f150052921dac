"""RULER's family report: the task x length table, the per-length average over RULER's 13 tasks
and the effective length at 85.6 points, laid out as RULER's result tables (tasks as rows here,
lengths as columns, the average as the last row)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pydantic import Field

from needlec.kinds.ruler.tasks import TASKS
from needlec.registry import REPORTS
from needlec.scoring import aggregates as agg
from needlec.scoring.aggregates import Scored
from needlec.scoring.families.base import Cell, FamilyResult, ReportConfig, Table
from needlec.spec.reports import RULE_DEFAULTS, ReportsSpec

CORE = tuple(task.name for task in TASKS)
"""RULER's 13 tasks, from the needle kind's own task table: the ones its average counts."""


class RulerReport(ReportConfig):
    """RULER: a length is effective while the 13-task average reaches `threshold` points."""

    threshold: float = Field(RULE_DEFAULTS["ruler"], description="Points the average must reach (85.6).")


def _threshold(config: RulerReport, rows: Sequence[Scored], settings: Mapping[str, ReportsSpec]) -> float:
    """The threshold a RULER config's recorded `reports:` names (when all agree), else the default."""
    chosen = {
        s.effective_length.value()
        for r in rows
        if (s := settings.get(str(r.item.get("config")))) is not None and s.effective_length.rule == "ruler"
    }
    return chosen.pop() if len(chosen) == 1 else config.threshold


@REPORTS.register("ruler", RulerReport)
def ruler_report(
    config: RulerReport, rows: Sequence[Scored], settings: Mapping[str, ReportsSpec]
) -> FamilyResult | None:
    """Items with `family: ruler`; tasks outside RULER's 13 (passkey, RAG-chunk) get rows of
    their own below the average, which leaves them out."""
    ruler = [r for r in rows if r.item.get("family") == "ruler"]
    if not ruler:
        return None
    threshold = _threshold(config, ruler, settings)
    result = agg.ruler_average(ruler, threshold, core=CORE)
    assert result is not None
    curves: dict[str, dict[str, float]] = {**result["tasks"], **result["extra_tasks"]}
    lengths = sorted({int(k) for curve in curves.values() for k in curve})
    body: list[tuple[Cell, ...]] = [
        (name, *(result["tasks"][name].get(str(n)) for n in lengths)) for name in CORE if name in result["tasks"]
    ]
    core_names = len(result["tasks"])
    body.append((f"average ({core_names} tasks)", *(result["average"].get(str(n)) for n in lengths)))
    body += [
        (f"{name} (not in the average)", *(curve.get(str(n)) for n in lengths))
        for name, curve in result["extra_tasks"].items()
    ]
    notes = [f"Effective length: the largest length up to which every average reaches {threshold:g} points."]
    if result["missing_tasks"]:
        notes.append(f"Not scored, so not in the average: {', '.join(result['missing_tasks'])}.")
    if result["incomplete_lengths"]:
        notes.append(
            "Lengths where some task has no score (no average): "
            + ", ".join(str(n) for n in result["incomplete_lengths"])
            + "."
        )
    effective = result["effective_length"]
    table = Table(
        title="RULER: score by task and length (points)",
        columns=("task", *(str(n) for n in lengths)),
        rows=tuple(body),
        headline=(
            (f"average over {core_names} tasks and {len(result['average'])} lengths", result["overall"]),
            (f"effective length ({threshold:g} points)", effective["effective_length"]),
        ),
        notes=tuple(notes),
    )
    return FamilyResult(result, table)
