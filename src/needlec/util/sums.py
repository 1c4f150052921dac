"""`SHA256SUMS` files (`sha256sum -c` compatible): one `<hex>  <path>` line per file of a folder."""

from __future__ import annotations

import hashlib
from pathlib import Path

SUMS = "SHA256SUMS"


def file_digest(path: Path) -> tuple[str, int, int]:
    """sha256, size and line count of a file, read once in blocks."""
    digest = hashlib.sha256()
    size = lines = 0
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
            size += len(block)
            lines += block.count(b"\n")
    return digest.hexdigest(), size, lines


def write_sums(folder: Path, paths: list[str]) -> str:
    """Write `SHA256SUMS` for `paths` (relative to `folder`) and return its text."""
    lines = [f"{file_digest(folder / p)[0]}  {p}" for p in sorted(paths)]
    text = "\n".join(lines) + "\n"
    (folder / SUMS).write_text(text, encoding="utf-8")
    return text


def every_file(folder: Path) -> list[str]:
    """Every file below `folder` (relative POSIX paths), except `SHA256SUMS` itself."""
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file() and p.name != SUMS)
