"""MLNeedle's family report: per needle, haystack and question language, the mean score by
needle position (grid depth) and by length, the no-distractor baseline and the effective length
by the paper's rule: the largest length up to which every score is at least 0.75 x the baseline
of the same needle and question languages."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import Field

from needlec.registry import REPORTS
from needlec.scoring import aggregates as agg
from needlec.scoring.aggregates import Scored, group_by
from needlec.scoring.families.base import Cell, FamilyResult, ReportConfig, Table
from needlec.scoring.stats import points
from needlec.spec.reports import RULE_DEFAULTS, ReportsSpec


class MLNeedleReport(ReportConfig):
    """MLNeedle: effective while a length's score is at least `ratio` x the no-distractor baseline."""

    ratio: float = Field(RULE_DEFAULTS["mlneedle"], description="Share of the baseline a length must keep (0.75).")


def is_mlneedle(row: Scored) -> bool:
    """An MLNeedle item: the needle kind names its task `mlneedle-<mode>`."""
    return str(row.item.get("task", "")).startswith("mlneedle-")


def _languages(row: Scored) -> tuple[str, str, str]:
    given = row.item.get("languages") or {}
    return (str(given.get("needle", "?")), str(given.get("haystack", "?")), str(given.get("question", "?")))


def _mean(rows: Sequence[Scored]) -> float:
    return points(sum(r.score for r in rows) / len(rows))


@REPORTS.register("mlneedle", MLNeedleReport)
def mlneedle_report(
    config: MLNeedleReport, rows: Sequence[Scored], settings: Mapping[str, ReportsSpec]
) -> FamilyResult | None:
    """Items whose task is `mlneedle-exact` or `mlneedle-existence`; baseline items are those
    compiled without distractors (`structure.passages.baseline`)."""
    ml = [r for r in rows if is_mlneedle(r)]
    if not ml:
        return None
    effective = agg.mlneedle_effective(ml, config.ratio) or {}
    depths = sorted({float(r.item["depth_percent"]) for r in ml})
    # baselines have their own column: their length is the needle passage's, not a grid length
    lengths = sorted({int(r.item["context_length"]) for r in ml if not agg._is_baseline(r)})
    body: list[tuple[Cell, ...]] = []
    headline: list[tuple[str, Cell]] = []
    for task, task_rows in sorted(group_by(ml, lambda r: str(r.item.get("task"))).items()):
        found: dict[str, Any] = effective.get(task) or {}
        cells = {(c["needle"], c["haystack"], c["question"]): c for c in found.get("by_languages") or []}
        for key, members in sorted(group_by(task_rows, _languages).items()):
            at_depth = group_by(members, lambda r: float(r.item["depth_percent"]))
            at_length = group_by(
                [r for r in members if not agg._is_baseline(r)], lambda r: int(r.item["context_length"])
            )
            cell = cells.get(key) or {}
            body.append(
                (
                    task,
                    *key,
                    len(members),
                    _mean(members),
                    *(_mean(at_depth[d]) if d in at_depth else None for d in depths),
                    *(_mean(at_length[n]) if n in at_length else None for n in lengths),
                    cell.get("baseline"),
                    cell.get("effective_length"),
                )
            )
        if found:
            headline.append((f"{task}: no-distractor baseline", found["baseline"]))
            headline.append(
                (f"{task}: effective length ({config.ratio:g} x baseline)", found["overall"]["effective_length"])
            )
        else:
            headline.append((f"{task}: effective length", "no baseline items scored"))
    table = Table(
        title="MLNeedle: score by needle, haystack and question language, position and length (points)",
        columns=(
            "task",
            "needle",
            "haystack",
            "question",
            "items",
            "mean",
            *(f"depth {d:g}" for d in depths),
            *(str(n) for n in lengths),
            "baseline",
            "effective length",
        ),
        rows=tuple(body),
        headline=tuple(headline),
        notes=(
            f"Effective length: the largest length up to which every score is at least {config.ratio:g} x the "
            "baseline (the same needle and question languages without distractors, haystack `none`).",
        ),
    )
    return FamilyResult(effective, table)
