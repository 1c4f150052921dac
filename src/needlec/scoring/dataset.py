"""Reading a compiled dataset for scoring, in the item schema 2 shape.

Items compiled before schema 2 differ (flat `answers`, a separate `distractors` list, no
`role`, `family`, `task` or metric `version`); `to_contract` lifts them to the schema 2 shape so
one scorer serves both.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
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


SPEC_SUFFIXES = (".yaml", ".yml")

FOLDER_HINT = "a compiled dataset folder (`needlec compile SPEC -o DIR` writes one) or a JSONL file of its items"


def _files(path: Path) -> list[Path]:
    if path.is_file():
        if path.suffix.lower() in SPEC_SUFFIXES:
            raise NeedlecError(
                f"{path}: a spec, not a dataset; this reads {FOLDER_HINT}. Compile the spec first: "
                f"`needlec compile {path} -o DIR`"
            )
        return [path]
    data = path / "data"
    root = data if data.is_dir() else path
    found = sorted(p for p in root.rglob("*") if p.suffix in (".jsonl", ".parquet") and p.is_file())
    if not found:
        raise NeedlecError(f"{path}: no dataset files (.jsonl or .parquet under data/)")
    return found


def select_items(path: str | Path, tokenizer: str | None, config: str | Sequence[str] | None) -> list[dict[str, Any]]:
    """The items of `path` of `tokenizer` and of the configs `config` (one name, or several; None or empty:
    all), read in one pass that keeps only those. A tokenizer or config the dataset does not have, or a
    selection with no item, is an error (NeedlecError) that says what the dataset has."""
    configs = [config] if isinstance(config, str) else list(config or ())  # one name, not its letters
    tokenizers: set[str] = set()
    held: set[str] = set()
    chosen = []
    for item in iter_items(path):
        tokenizers.add(str(item.get("tokenizer")))
        held.add(str(item.get("config")))
        if (tokenizer is None or item.get("tokenizer") == tokenizer) and (not configs or item.get("config") in configs):
            chosen.append(item)
    wrong = []
    if tokenizer is not None and tokenizer not in tokenizers:
        wrong.append(f"no tokenizer {tokenizer!r} (it has {', '.join(sorted(tokenizers))})")
    absent = [c for c in configs if c not in held]
    if absent:
        wrong.append(f"no config {', '.join(map(repr, absent))} (it has {', '.join(sorted(held))})")
    if wrong:
        raise NeedlecError(f"{path} has " + " and ".join(wrong))
    if not chosen:
        which = f" of config {', '.join(configs)}" if configs else ""
        raise NeedlecError(f"{path} has no items{which}" + (f" with tokenizer {tokenizer}" if tokenizer else ""))
    return chosen


ITEM_FIELDS: dict[str, type | tuple[type, ...]] = {
    "id": str,
    "config": str,
    "context_length": int,
    "depth_percent": (int, float),
    "answers": list,
    "scoring": dict,
}
"""The fields scoring reads from every item, with their JSON types."""

OPTIONAL_FIELDS: dict[str, type | tuple[type, ...]] = {"tokenizer": str, "messages": list}
"""Fields checked for their JSON type where an item has them (the exports need `messages`)."""


def _item(record: Any, where: str, root: Path) -> dict[str, Any]:
    """`record` in the schema 2 shape, or a NeedlecError at `where` (file:line) when it is not an item."""
    hint = f"; run `needlec verify {root}` to see what changed" if root.is_dir() else ""
    if not isinstance(record, dict):
        raise NeedlecError(f"{where}: not an item (a JSON {type(record).__name__}, not an object){hint}")
    missing = [key for key in ITEM_FIELDS if key not in record]
    if missing:
        raise NeedlecError(f"{where}: not an item (it has no {', '.join(map(repr, missing))}){hint}")
    typed = {**ITEM_FIELDS, **{key: kind for key, kind in OPTIONAL_FIELDS.items() if key in record}}
    wrong = [key for key, kind in typed.items() if not isinstance(record[key], kind) or isinstance(record[key], bool)]
    if wrong:
        shown = ", ".join(f"{key!r} is {type(record[key]).__name__}" for key in wrong)
        raise NeedlecError(f"{where}: not an item ({shown}){hint}")
    return to_contract(record)


def iter_items(path: str | Path) -> Iterator[dict[str, Any]]:
    """Every item of a dataset folder (its `data/` JSONL or parquet files) or of one JSONL file; a line or row
    that is not an item (not JSON, not an object, or without a field of `ITEM_FIELDS`) is an error at its
    file:line (NeedlecError)."""
    root = Path(path)
    if not root.exists():
        raise NeedlecError(f"{root}: no such dataset")
    for file in _files(root):
        if file.suffix == ".parquet":
            import pyarrow.parquet as pq

            for number, row in enumerate(pq.read_table(file).to_pylist(), 1):
                yield _item(row, f"{file}: row {number}", root)
            continue
        with file.open(encoding="utf-8") as fh:
            for lineno, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    record = orjson.loads(line)
                except json.JSONDecodeError as exc:
                    hint = f"; this reads {FOLDER_HINT}" if file == root else ""
                    raise NeedlecError(f"{file}:{lineno}:{exc.colno}: not a JSON object ({exc.msg}){hint}") from None
                yield _item(record, f"{file}:{lineno}", root)
