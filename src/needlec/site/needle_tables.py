"""Needle settings as tables, whatever the needle kind: scalars in one table, record lists in their own.

A list of records that holds lists of records itself (groups of needle pairs, say) becomes two
tables: the outer records, and every inner record with the outer record it belongs to.
"""

from __future__ import annotations

from typing import Any

from needlec.site.markdown import cell, code, scalar, table

LIST_ROWS = 60


def _is_records(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, dict) for v in value)


def value_cell(value: Any) -> str:
    if isinstance(value, list) and all(not isinstance(v, dict | list) for v in value):
        shown = [cell(v) if isinstance(v, str) else scalar(v) for v in value[:LIST_ROWS]]
        more = [f"… and {len(value) - LIST_ROWS} more"] if len(value) > LIST_ROWS else []
        if len(shown) == 1 and not more:
            return shown[0]
        return "<br>".join(f"{i + 1}. {v}" for i, v in enumerate(shown)) + "".join(f"<br>{m}" for m in more)
    if isinstance(value, str):
        return cell(value) if value else code('""')
    return scalar(value)


def _label(record: dict[str, Any], index: int) -> str:
    for key in ("id", "name"):
        if isinstance(record.get(key), str | int):
            return str(record[key])
    return str(index)


def _records_table(records: list[dict[str, Any]], lead: list[str], lead_name: str | None) -> str:
    columns: list[str] = []
    for record in records:
        columns.extend(c for c in record if c not in columns and not _is_records(record[c]))
    shown = records[:LIST_ROWS]
    headers = ([lead_name] if lead_name else []) + columns
    rows = [
        ([code(lead[i])] if lead_name else []) + [value_cell(r.get(c, "")) for c in columns]
        for i, r in enumerate(shown)
    ]
    note = f"\n\nThe first {LIST_ROWS} of {len(records)} are shown." if len(records) > LIST_ROWS else ""
    return table(headers, rows) + note


def records_tables(key: str, records: list[dict[str, Any]]) -> list[str]:
    """The outer table, then one table per nested record list (rows tagged with their parent)."""
    parts = [f"{code(key)} ({len(records)} entries):", _records_table(records, [], None)]
    nested: list[str] = []
    for record in records:
        nested.extend(c for c, v in record.items() if _is_records(v) and c not in nested)
    for inner in nested:
        rows: list[dict[str, Any]] = []
        parents: list[str] = []
        for i, record in enumerate(records):
            for child in record.get(inner) or []:
                rows.append(child)
                parents.append(_label(record, i))
        parts.append(
            f"{code(f'{key}[].{inner}')} ({len(rows)} entries, with the entry of {code(key)} each belongs to):"
        )
        parts.append(_records_table(rows, parents, key))
    return parts


def settings_tables(dump: dict[str, Any], skip: tuple[str, ...] = ("type",)) -> list[str]:
    flat = [(code(k), value_cell(v)) for k, v in dump.items() if k not in skip and not _is_records(v)]
    parts = [table(["key", "value"], flat)] if flat else []
    for key, value in dump.items():
        if key not in skip and _is_records(value):
            parts.extend(records_tables(key, value))
    return parts
