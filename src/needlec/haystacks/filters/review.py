"""Human review: the file `needlec filter --review` writes, and decision files read back.

The review file is YAML: a list of entries, each naming its filter, what was flagged and a
`decision` (`remove`, `keep`, or `undecided`). Edit the decisions and point a filter's
`decisions:` key at the file; the same format is read back, so review and override are one loop.
A decision file may also be a mapping `{remove: [...], keep: [...]}` for the distractor filter.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import yaml

from needlec.errors import NeedlecError

DECISIONS = ("remove", "keep")


def file_sha256(path: Path) -> str:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError as exc:
        raise NeedlecError(f"decisions file {path}: {exc.strerror or exc}") from None


def load_decisions(path: Path, filter_name: str) -> list[dict[str, Any]]:
    """Entries of `path` meant for `filter_name` (or for any filter) that carry a decision."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise NeedlecError(f"decisions file {path}: {exc.strerror or exc}") from None
    except yaml.YAMLError as exc:
        raise NeedlecError(f"decisions file {path}: not valid YAML or JSON ({exc})") from None
    if data is None:
        return []
    if isinstance(data, dict) and set(data) <= set(DECISIONS):
        return [{"candidate": str(c), "decision": d} for d in DECISIONS for c in data.get(d) or []]
    if isinstance(data, dict) and isinstance(data.get("entries"), list):
        data = data["entries"]
    if not isinstance(data, list) or not all(isinstance(e, dict) for e in data):
        raise NeedlecError(
            f"decisions file {path}: expected a list of entries (as written by "
            "`needlec filter --review`) or a mapping with `remove` and `keep` lists"
        )
    out = []
    for number, entry in enumerate(data, start=1):
        if entry.get("filter", filter_name) != filter_name:
            continue
        decision = entry.get("decision", "undecided")
        if decision == "undecided":
            continue
        if decision not in DECISIONS:
            raise NeedlecError(
                f"decisions file {path}: entry {number} has decision {decision!r}; expected remove, keep or undecided"
            )
        out.append(entry)
    return out


def write_review(path: Path, entries: list[dict[str, Any]]) -> None:
    header = (
        "# needlec filter review. Set each `decision` to remove, keep or undecided, then name\n"
        "# this file in the filter's `decisions:` key and compile again.\n"
    )
    body = yaml.safe_dump({"entries": entries}, sort_keys=False, allow_unicode=True, width=100)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(header + body, encoding="utf-8")
