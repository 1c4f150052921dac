"""Reading a compiled dataset for scoring, in the item schema 2 shape.

Items compiled before schema 2 differ (flat `answers`, a separate `distractors` list, no
`role`, `family`, `task` or metric `version`); `to_contract` lifts them to the schema 2 shape so
one scorer serves both.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from needlec.errors import NeedlecError


def to_contract(item: dict[str, Any]) -> dict[str, Any]:
    """The item in the schema 2 shape (a new dict when anything had to change)."""
    out = dict(item)
    answers = out.get("answers") or []
    out["answers"] = [[a] if isinstance(a, str) else list(a) for a in answers]
    needles = [dict(n, role=n.get("role", "target")) for n in out.get("needles") or []]
    needles += [dict(n, role="distractor") for n in out.pop("distractors", None) or []]
    out["needles"] = needles
    out.setdefault("family", out.get("benchmark"))
    out.setdefault("task", out.get("config"))
    return out


def _files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    data = path / "data"
    root = data if data.is_dir() else path
    found = sorted(p for p in root.rglob("*") if p.suffix in (".jsonl", ".parquet") and p.is_file())
    if not found:
        raise NeedlecError(f"{path}: no dataset files (.jsonl or .parquet under data/)")
    return found


def iter_items(path: str | Path) -> Iterator[dict[str, Any]]:
    """Every item of a dataset folder (its `data/` JSONL or parquet files) or of one JSONL file."""
    root = Path(path)
    if not root.exists():
        raise NeedlecError(f"{root}: no such dataset")
    for file in _files(root):
        if file.suffix == ".parquet":
            import pyarrow.parquet as pq

            for row in pq.read_table(file).to_pylist():
                yield to_contract(row)
            continue
        with file.open(encoding="utf-8") as fh:
            for lineno, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    yield to_contract(orjson.loads(line))
                except json.JSONDecodeError as exc:
                    raise NeedlecError(f"{file}:{lineno}:{exc.colno}: not a JSON object ({exc.msg})") from None
