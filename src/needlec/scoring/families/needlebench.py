"""NeedleBench's family report: each task's score per needle language and overall (the mean over
languages), and the weighted overall scores v1 (0.4 S-RT + 0.3 M-RT + 0.3 M-RS) and v2 (the mean)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from needlec.registry import REPORTS
from needlec.scoring import aggregates as agg
from needlec.scoring.aggregates import Scored, group_by
from needlec.scoring.families.base import Cell, FamilyResult, ReportConfig, Table, shown
from needlec.scoring.stats import points
from needlec.spec.reports import ReportsSpec


class NeedleBenchReport(ReportConfig):
    """NeedleBench: task scores per language and the v1/v2 overall scores (no parameters)."""


def _language(row: Scored) -> str:
    return str((row.item.get("languages") or {}).get("needle", "?"))


@REPORTS.register("needlebench", NeedleBenchReport)
def needlebench_report(
    config: NeedleBenchReport, rows: Sequence[Scored], settings: Mapping[str, ReportsSpec]
) -> FamilyResult | None:
    """Items with `family: needlebench` whose config shows `needlebench_overall`."""
    nb = [r for r in shown(rows, settings, "needlebench_overall") if r.item.get("family") == "needlebench"]
    result = agg.needlebench_overall(nb)
    if result is None:
        return None
    body: list[tuple[Cell, ...]] = []
    by_task = group_by(nb, lambda r: str(r.item.get("task", "")).lower())
    per_language: dict[str, dict[str, float]] = {}
    for task in sorted(by_task):
        langs = group_by(by_task[task], _language)
        per_language[task] = {}
        for lang in sorted(langs):
            members = langs[lang]
            score = points(sum(r.score for r in members) / len(members))
            per_language[task][lang] = score
            body.append((task, lang, len(members), score))
        body.append((task, "all (mean over languages)", len(by_task[task]), result["tasks"][task]))
    aggregate = {**result, "by_language": per_language}
    notes: tuple[str, ...] = ()
    if result["overall_v1"] is None:
        notes = ("The overall scores need all three tasks (s-rt, m-rt, m-rs); some were not scored.",)
    table = Table(
        title="NeedleBench: score by task and needle language (points)",
        columns=("task", "language", "items", "score"),
        rows=tuple(body),
        headline=(
            ("overall v1 (0.4 S-RT + 0.3 M-RT + 0.3 M-RS)", result["overall_v1"]),
            ("overall v2 (mean of the three tasks)", result["overall_v2"]),
        ),
        notes=notes,
    )
    return FamilyResult(aggregate, table)
