"""Streaming sha256 of files: one read in blocks, with the size and line count on the way."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

BLOCK = 1 << 20


@dataclass(frozen=True)
class FileDigest:
    """sha256 (hex), size in bytes and number of newline characters of a file."""

    sha256: str
    size: int
    lines: int


def file_digest(path: Path) -> FileDigest:
    """Hash a file of any size in 1 MiB blocks (memory stays flat)."""
    digest = hashlib.sha256()
    size = lines = 0
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(BLOCK), b""):
            digest.update(block)
            size += len(block)
            lines += block.count(b"\n")
    return FileDigest(digest.hexdigest(), size, lines)
