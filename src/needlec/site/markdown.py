"""Small Markdown writers shared by the page generators: tables, code fences, escaped cells.

Everything here is pure text formatting, so the generated pages are byte-stable.
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterable, Sequence
from typing import Any

MARKDOWN_MARKS = ("\\", "`", "*", "_", "[", "]", "#")


def cell(text: object) -> str:
    """Plain text made safe for one cell of a pipe table: HTML and Markdown marks escaped."""
    value = html.escape(str(text), quote=False).replace("\r", "")
    for mark in MARKDOWN_MARKS:
        value = value.replace(mark, "\\" + mark)
    return value.replace("|", "\\|").replace("\n", "<br>")


def md_cell(text: str) -> str:
    """Trusted Markdown (a field description) in one table cell: only pipes and line breaks change."""
    return " ".join(text.split()).replace("|", "\\|")


def code(text: object) -> str:
    """An inline code span (Python-Markdown keeps pipes inside code spans out of table splitting)."""
    value = str(text).replace("\n", " ")
    fence = "``" if "`" in value else "`"
    pad = " " if value.startswith("`") or value.endswith("`") else ""
    return f"{fence}{pad}{value}{pad}{fence}"


def table(headers: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    """A pipe table; cells are escaped with `cell` unless already formatted by the caller."""
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    for row in rows:
        lines.append("| " + " | ".join(str(c) if str(c) else " " for c in row) + " |")
    return "\n".join(lines)


def fence(text: str, language: str = "text", title: str | None = None) -> str:
    """A fenced code block whose fence is longer than any backtick run inside it."""
    longest = max((len(run) for run in text.split("\n") if set(run) == {"`"}), default=0)
    ticks = "`" * max(3, longest + 1)
    head = f"{ticks}{language}" + (f' title="{title}"' if title else "")
    return f"{head}\n{text.rstrip()}\n{ticks}"


def compact_json(value: Any, limit: int | None = None) -> str:
    """JSON on one line, keys sorted, non-ASCII kept; cut with an ellipsis beyond `limit`."""
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(", ", ": "))
    if limit is not None and len(text) > limit:
        return text[: limit - 1] + "…"
    return text


def human_bytes(size: int) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if size >= scale:
            return f"{size / scale:,.1f} {unit}"
    return f"{size} B"


def short_number(value: int) -> str:
    """1000 -> 1K, 128000 -> 128K, 1500 -> 1.5K: the way context lengths are usually named."""
    if value >= 1_000_000 and value % 100_000 == 0:
        return f"{value / 1_000_000:g}M"
    if value >= 1000 and value % 100 == 0:
        return f"{value / 1000:g}K"
    return f"{value:,}"


def escape(text: str) -> str:
    return html.escape(text, quote=False)


def scalar(value: Any) -> str:
    """A value for a table cell: plain text for strings and numbers, inline code for the rest."""
    if isinstance(value, bool) or value is None:
        return code(json.dumps(value))
    if isinstance(value, int | float):
        return f"{value:,}" if isinstance(value, int) else f"{value:g}"
    if isinstance(value, str):
        return cell(value) if value else code('""')
    return code(compact_json(value, 200))


def value_block(value: Any) -> str:
    """A generic rendering of JSON-like data: tables where the shape allows, JSON otherwise.

    Used for manifest sections that other parts of needlec fill (filters, overlap statistics),
    so a new key shows up on the site without a change here.
    """
    if isinstance(value, dict) and value and all(not isinstance(v, dict | list) for v in value.values()):
        return table(["key", "value"], [(code(k), scalar(v)) for k, v in value.items()])
    rows = _records(value)
    if rows is not None:
        label, records = rows
        columns: list[str] = []
        for record in records.values():
            columns.extend(k for k in record if k not in columns)
        body = [
            [code(name)] + [scalar(record.get(c, "")) if c in record else " " for c in columns]
            for name, record in records.items()
        ]
        return table([label, *columns], body)
    return fence(json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False), "json")


def _flatten(record: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested mappings as dotted keys, so a record of small mappings becomes one table row."""
    out: dict[str, Any] = {}
    for key, value in record.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict) and value and len(value) <= 6:
            out.update(_flatten(value, name + "."))
        else:
            out[name] = value
    return out


def _records(value: Any) -> tuple[str, dict[str, dict[str, Any]]] | None:
    """`value` as named flat records (a mapping of mappings, or a list of mappings), if it is one."""
    if isinstance(value, dict) and value and all(isinstance(v, dict) for v in value.values()):
        records = {str(k): _flatten(v) for k, v in value.items()}
        label = "key"
    elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        records = {str(i): _flatten(v) for i, v in enumerate(value)}
        label = "#"
    else:
        return None
    columns = {k for r in records.values() for k in r}
    return (label, records) if len(columns) <= 12 else None
