"""What a family report is: its aggregate (JSON for `summary.json`) and its headline table.

A family report is registered in `needlec.registry.REPORTS` under the family's name, with a
pydantic model of its parameters (e.g. RULER's 85.6-point threshold) and a function

    report(config, rows, settings) -> FamilyResult | None

that picks its rows by what the items say (`family`, `task`, `structure`, `languages`) and by
the manifest's `reports:` settings per config (`settings`), never by a list of config names,
and returns None when none of the rows is its family's. `needlec score` calls every registered
report, puts each aggregate under `summary["families"][name]`, prints each table on the console
and writes it as `NAME.csv` and `NAME.md` beside `summary.json`.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict

from needlec.scoring.aggregates import Scored
from needlec.spec.reports import ReportsSpec

Cell = str | int | float | None


class ReportConfig(BaseModel):
    """Parameters of a family report (none by default); registered beside the report function."""

    model_config = ConfigDict(extra="forbid", frozen=True)


def cell_text(value: Cell) -> str:
    """A table cell as text: numbers as given (points keep their 4 decimals), None as `-`."""
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.2f}"
    return str(value)


@dataclass(frozen=True)
class Table:
    """A family's headline table: a title, a header, rows, and the headline numbers.

    `headline` holds the family's own overall numbers as (label, value) pairs, e.g. RULER's
    average over its 13 tasks and its effective length; the console prints them first, so the
    number a user reads is the family's, not an item-weighted mean over every config.
    CSV cells keep full precision; Markdown and the console show two decimals.
    """

    title: str
    columns: tuple[str, ...]
    rows: tuple[tuple[Cell, ...], ...]
    headline: tuple[tuple[str, Cell], ...] = ()
    notes: tuple[str, ...] = field(default=())

    def to_csv(self) -> str:
        """The table as CSV (header row first; empty cells for missing values)."""
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(self.columns)
        for row in self.rows:
            writer.writerow(["" if v is None else v for v in row])
        return out.getvalue()

    def to_markdown(self) -> str:
        """The table as a Markdown section: title, headline numbers, the table, notes."""
        lines = [f"## {self.title}", ""]
        lines += [f"- {label}: {cell_text(value)}" for label, value in self.headline]
        if self.headline:
            lines.append("")
        lines.append("| " + " | ".join(self.columns) + " |")
        lines.append("|" + "|".join("---" for _ in self.columns) + "|")
        lines += ["| " + " | ".join(cell_text(v) for v in row) + " |" for row in self.rows]
        if self.notes:
            lines.append("")
            lines += list(self.notes)
        return "\n".join(lines) + "\n"

    def to_console(self) -> str:
        """The table as aligned plain text for a terminal."""
        body = [list(self.columns), *([cell_text(v) for v in row] for row in self.rows)]
        widths = [max(len(line[i]) for line in body) for i in range(len(self.columns))]
        lines = [self.title]
        lines += [f"  {label}: {cell_text(value)}" for label, value in self.headline]
        for n, line in enumerate(body):
            cells = [
                text.ljust(w) if i == 0 else text.rjust(w) for i, (text, w) in enumerate(zip(line, widths, strict=True))
            ]
            lines.append("  " + "  ".join(cells).rstrip())
            if n == 0:
                lines.append("  " + "  ".join("-" * w for w in widths))
        lines += [f"  {note}" for note in self.notes]
        return "\n".join(lines)


@dataclass(frozen=True)
class FamilyResult:
    """A family report's output: the aggregate (`summary.json`) and its headline table."""

    aggregate: dict[str, Any]
    table: Table


class FamilyReport(Protocol):
    """The function a family registers in `REPORTS` (see the module docstring)."""

    def __call__(
        self, config: Any, rows: Sequence[Scored], settings: Mapping[str, ReportsSpec]
    ) -> FamilyResult | None: ...


def config_of(row: Scored) -> str:
    """The config an item belongs to."""
    return str(row.item.get("config"))


def shown(rows: Sequence[Scored], settings: Mapping[str, ReportsSpec], name: str) -> list[Scored]:
    """The rows whose config's `reports.show` includes `name` (a config without settings shows all)."""
    return [r for r in rows if (c := settings.get(config_of(r))) is None or c.shows(name)]


def headline_rule(row: Scored, settings: Mapping[str, ReportsSpec]) -> str | None:
    """The headline effective-length rule the manifest records for the row's config (None: none recorded)."""
    chosen = settings.get(config_of(row))
    return None if chosen is None else chosen.effective_length.rule
