"""ATC's family report: per task (question language and prompt variant), the item accuracy, the
CircularEval score (a question counts only when every rotation is right) and the step-weighted
score; the overall is the mean of the tasks' step-weighted scores."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from needlec.registry import REPORTS
from needlec.scoring import aggregates as agg
from needlec.scoring.aggregates import Scored, group_by
from needlec.scoring.families.base import Cell, FamilyResult, ReportConfig, Table, shown
from needlec.scoring.stats import points
from needlec.spec.reports import ReportsSpec


class AtcReport(ReportConfig):
    """ATC: accuracy, CircularEval and the step-weighted score per task (no parameters)."""


@REPORTS.register("atc", AtcReport)
def atc_report(config: AtcReport, rows: Sequence[Scored], settings: Mapping[str, ReportsSpec]) -> FamilyResult | None:
    """Items with `family: atc` whose config shows `atc_weighted`."""
    atc = [r for r in shown(rows, settings, "atc_weighted") if r.item.get("family") == "atc"]
    result = agg.atc_score(atc)
    if result is None:
        return None
    body: list[tuple[Cell, ...]] = []
    tasks = group_by(atc, agg.atc_task)
    accuracy: dict[str, float] = {}
    circular: dict[str, float | None] = {}
    for name in sorted(tasks):
        members = tasks[name]
        accuracy[name] = points(sum(r.score for r in members) / len(members))
        circ = agg.circular(members)
        circular[name] = None if circ is None else circ["circular"]
        body.append((name, len(members), accuracy[name], circular[name], result["tasks"][name]["score"]))
    aggregate = {**result, "accuracy": accuracy, "circular": circular}
    table = Table(
        title="ATC: accuracy, CircularEval and step-weighted score by task (points)",
        columns=("task", "items", "accuracy", "circular_eval", "step_weighted"),
        rows=tuple(body),
        headline=(("overall (mean step-weighted score)", result["overall"]),),
        notes=("CircularEval is `-` for open-answer tasks (no rotated options).",),
    )
    return FamilyResult(aggregate, table)
