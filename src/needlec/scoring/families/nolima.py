"""NoLiMa's family report: per config, the base score (the mean over lengths up to 1K), the
score per length, and the effective length: the largest length up to which every score reaches
85% of the base score."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pydantic import Field

from needlec.registry import REPORTS
from needlec.scoring import aggregates as agg
from needlec.scoring.aggregates import Scored, group_by
from needlec.scoring.families.base import (
    Cell,
    FamilyResult,
    ReportConfig,
    Table,
    cell_text,
    config_of,
    headline_rule,
)
from needlec.spec.reports import RULE_DEFAULTS, ReportsSpec


class NolimaReport(ReportConfig):
    """NoLiMa: effective while a length's score is at least `ratio` x the base score."""

    ratio: float = Field(RULE_DEFAULTS["nolima"], description="Share of the base score a length must keep (0.85).")
    base_max_length: int = Field(1000, description="The base score is the mean over lengths up to this one.")


def _ratio(config: NolimaReport, name: str, settings: Mapping[str, ReportsSpec]) -> float:
    chosen = settings.get(name)
    if chosen is not None and chosen.effective_length.rule == "nolima":
        return chosen.effective_length.value()
    return config.ratio


@REPORTS.register("nolima", NolimaReport)
def nolima_report(
    config: NolimaReport, rows: Sequence[Scored], settings: Mapping[str, ReportsSpec]
) -> FamilyResult | None:
    """Items with `family: nolima`, or of a config whose recorded headline rule is `nolima`."""
    mine = [r for r in rows if r.item.get("family") == "nolima" or headline_rule(r, settings) == "nolima"]
    if not mine:
        return None
    configs = group_by(mine, config_of)
    aggregate: dict[str, dict[str, object]] = {}
    lengths = sorted({int(r.item["context_length"]) for r in mine})
    body: list[tuple[Cell, ...]] = []
    headline: list[tuple[str, Cell]] = []
    for name in sorted(configs):
        ratio = _ratio(config, name, settings)
        found = agg.effective_lengths(configs[name], nolima_ratio=ratio, nolima_base_max_length=config.base_max_length)
        rule = found["nolima"]
        curve = found["curve"]
        base = None if rule is None else rule["base_score"]
        effective = None if rule is None else rule["effective_length"]
        aggregate[name] = {
            "base_score": base,
            "ratio": ratio,
            "curve": curve,
            "effective_length": effective,
            "first_failing_length": None if rule is None else rule["first_failing_length"],
        }
        body.append((name, base, *(curve.get(str(n)) for n in lengths), effective))
        headline.append((f"{name}: base score / effective length", f"{cell_text(base)} / {cell_text(effective)}"))
    table = Table(
        title="NoLiMa: base score, score by length and effective length (points)",
        columns=("config", "base score", *(str(n) for n in lengths), "effective length"),
        rows=tuple(body),
        headline=tuple(headline),
        notes=(
            f"Base score: the mean over lengths up to {config.base_max_length}; effective length: the largest "
            "length up to which every score reaches the ratio (0.85 unless the spec says otherwise) x the base.",
        ),
    )
    return FamilyResult({"configs": aggregate}, table)
