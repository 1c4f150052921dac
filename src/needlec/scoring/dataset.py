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


def _files(path: Path) -> list[Path]:
    if path.is_file():
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
