"""manifest.json: what went into a compile and a hash of every file that came out."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from needlec.dataset import ITEM_SCHEMA_VERSION
from needlec.util.canonical import sha256_json
from needlec.version import __version__

MANIFEST = "manifest.json"


def file_entry(root: Path, relative: str, split: str, rows: int) -> dict[str, Any]:
    path = root / relative
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return {"path": relative, "split": split, "rows": rows, "bytes": path.stat().st_size, "sha256": digest.hexdigest()}


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
    manifest: dict[str, Any] = {
        "needlec_version": __version__,
        "item_schema_version": ITEM_SCHEMA_VERSION,
        "spec": {"name": spec_name, "file": spec_file, "sha256": spec_sha256},
        "sources": sources,
        "tokenizers": tokenizers,
        "filters": filters,
        "configs": configs,
    }
    manifest["content_hash"] = sha256_json(manifest)
    return manifest


def content_hash(manifest: dict[str, Any]) -> str:
    """Recompute the content hash of a manifest (everything but the hash itself)."""
    body = {k: v for k, v in manifest.items() if k != "content_hash"}
    return sha256_json(body)
