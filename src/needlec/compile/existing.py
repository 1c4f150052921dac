"""Nothing lost: a compile into a folder that already holds a dataset must not quietly shrink it.

Rebuilding a dataset folder from the same spec and the same (or a wider) selection rewrites
items that are all deterministic, so nothing is lost and it goes ahead. A different spec, or a
selection that would leave out items the folder holds now, replaces work the user may still
want: that needs `--force` (or another `-o`). The check reads only the old manifest and sizes the
new compile by arithmetic, before anything is built.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from needlec.compile.plan import Plan
from needlec.compile.size import config_size
from needlec.dataset.manifest import read_manifest
from needlec.errors import NeedlecError, OutputError


class WouldReplace(OutputError):
    """The output folder holds a dataset that this compile would replace with less or other data."""


@dataclass(frozen=True)
class Held:
    """What an existing dataset folder holds: its spec and, per data file, rows and bytes."""

    spec_name: str
    spec_sha256: str
    files: dict[tuple[str, str], tuple[int, int]]  # (config, tokenizer) -> (rows, bytes)

    @property
    def items(self) -> int:
        return sum(rows for rows, _ in self.files.values())

    @property
    def bytes(self) -> int:
        return sum(size for _, size in self.files.values())


def held(folder: Path) -> Held | None:
    """The dataset a folder holds, or None when it holds no compiled dataset to protect."""
    if not (folder / "manifest.json").is_file():
        return None
    try:
        manifest = read_manifest(folder)
    except NeedlecError:
        return None
    spec: Any = manifest.get("spec")
    configs: Any = manifest.get("configs")
    if not isinstance(spec, dict) or not isinstance(configs, dict):
        return None
    files: dict[tuple[str, str], tuple[int, int]] = {}
    for name, info in configs.items():
        for entry in info.get("files", []) if isinstance(info, dict) else []:
            if isinstance(entry, dict):
                rows, size = entry.get("rows", 0), entry.get("bytes", 0)
                files[(str(name), str(entry.get("split", "")))] = (
                    rows if isinstance(rows, int) else 0,
                    size if isinstance(size, int) else 0,
                )
    return Held(str(spec.get("name", "")), str(spec.get("sha256", "")), files)


def check_replace(folder: Path, plan: Plan, select: dict[str, set[str]], force: bool) -> None:
    """Refuse (WouldReplace, exit 2) to replace a dataset of another spec, or with fewer items, without `force`."""
    old = held(folder)
    if old is None or force:
        return
    what = f"{folder} holds {old.items:,} items ({_size(old.bytes)})"
    advice = "Pass --force (force=True from Python) to replace it, or write elsewhere with -o."
    if old.spec_sha256 != plan.spec_sha256:
        other = (
            f"a spec of the same name ({old.spec_name!r}) whose text differs: an earlier version, or another file"
            if old.spec_name == plan.spec.name
            else f"spec {old.spec_name!r}"
        )
        raise WouldReplace(f"{what} compiled from {other}; this compile would replace them all. {advice}")
    lost = 0
    lost_bytes = 0
    for (name, split), (rows, size) in old.files.items():
        new = _new_rows(plan, select, name, split)
        if new < rows:
            lost += rows - new
            lost_bytes += size if new == 0 else size * (rows - new) // max(1, rows)
    if lost:
        raise WouldReplace(
            f"{what}; this selection would leave out {lost:,} of them (about {_size(lost_bytes)}). {advice}"
        )


def _new_rows(plan: Plan, select: dict[str, set[str]], name: str, split: str) -> int:
    """Rows the new compile writes to one (config, tokenizer) file, by arithmetic."""
    if "tokenizer" in select and split not in select["tokenizer"]:
        return 0
    for config in plan.configs:
        if config.name == name:
            return config_size(config, {**select, "tokenizer": {split}}).items
    return 0


def _size(count: int) -> str:
    if count >= 10**9:
        return f"{count / 1e9:,.1f} GB"
    if count >= 10**6:
        return f"{count / 1e6:,.1f} MB"
    return f"{count / 1e3:,.1f} kB"


__all__ = ["Held", "WouldReplace", "check_replace", "held"]
