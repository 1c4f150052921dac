"""manifest.json: what went into a compile and a hash of every file that came out.

The model, the content hash and the reader live in `needlec.dataset.manifest`; this module builds
a manifest from a compile's pieces.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from needlec.dataset.item import ITEM_SCHEMA_VERSION
from needlec.dataset.manifest import MANIFEST, content_hash, with_content_hash
from needlec.util.hashing import file_digest
from needlec.version import __version__

__all__ = ["MANIFEST", "build_manifest", "content_hash", "file_entry"]


def file_entry(root: Path, relative: str, split: str, rows: int) -> dict[str, Any]:
    """The manifest entry of one data file: path, split, rows, bytes and sha256."""
    digest = file_digest(root / relative)
    return {"path": relative, "split": split, "rows": rows, "bytes": digest.size, "sha256": digest.sha256}


def build_manifest(
    *,
    spec_name: str,
    spec_file: str,
    spec_sha256: str,
    sources: list[dict[str, Any]],
    tokenizers: list[dict[str, str]],
    filters: list[dict[str, Any]],
    configs: dict[str, dict[str, Any]],
) -> dict[str, Any]:
    """The manifest as JSON data, checked against the Manifest model, with its content hash."""
    return with_content_hash(
        {
            "needlec_version": __version__,
            "item_schema_version": ITEM_SCHEMA_VERSION,
            "spec": {"name": spec_name, "file": spec_file, "sha256": spec_sha256},
            "sources": sources,
            "tokenizers": tokenizers,
            "filters": filters,
            "configs": configs,
        }
    )
