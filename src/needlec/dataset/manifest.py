"""The dataset manifest (`manifest.json`): its typed model, its content hash and one reader.

The manifest records what went into a compile (spec, sources, tokenizers, filters) and a hash of
every data file that came out; `content_hash` is sha256 over the canonical JSON of everything
else, so two compiles that agree on it produced the same dataset.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from needlec.dataset.item import ITEM_SCHEMA_VERSION
from needlec.errors import OutputError
from needlec.util.canonical import sha256_json

MANIFEST = "manifest.json"
MANIFEST_SCHEMA_ID = "https://needlec.dev/schema/manifest-v1.json"


class ManifestUnreadable(OutputError):
    """The manifest exists but is not valid UTF-8 JSON."""


class _Part(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SpecRef(_Part):
    """The spec a dataset was compiled from."""

    name: str = Field(description="The spec's `name`.")
    file: str = Field(description="File name of the spec.")
    sha256: str = Field(description="sha256 of the spec file(s) as loaded (with `extends:`).")


class FileEntry(_Part):
    """One data file of a config."""

    path: str = Field(description="Path relative to the dataset folder, e.g. `data/single/cl100k_base.jsonl`.")
    split: str = Field(description="Split name on the Hub: the tokenizer label.")
    rows: int = Field(description="Items in the file.")
    bytes: int = Field(description="File size.")
    sha256: str = Field(description="sha256 of the file's bytes.")


class HaystackEntry(_Part):
    """One haystack a config's items were cut from."""

    id: str = Field(description="Haystack id (`h0`, ...).")
    sha256: str = Field(description="sha256 of the haystack text.")
    characters: int = Field(description="Length of the haystack text in characters.")


class RepetitionEntry(_Part):
    """A haystack shorter than some target lengths, so its text is used more than once in their items."""

    tokenizer: str = Field(description="Tokenizer label (the split).")
    haystack: str = Field(description="Haystack id (`h0`, ...).")
    haystack_tokens: int = Field(description="Tokens of the haystack text used once.")
    lengths: list[int] = Field(description="Every target length longer than the haystack, ascending.")
    times: float = Field(description="How many times the text is used at the longest of `lengths` (0.01 steps).")


def describe_repetition(entry: dict[str, Any]) -> str:
    """A manifest `repetition` entry in words (for `inspect`, the dataset card and the site)."""
    lengths = ", ".join(f"{n:,}" for n in entry.get("lengths", []))
    return (
        f"haystack {entry.get('haystack')} ({entry.get('haystack_tokens', 0):,} tokens with "
        f"{entry.get('tokenizer')}) is repeated up to {entry.get('times', 0):.1f} times to reach {lengths} tokens"
    )


class ConfigEntry(BaseModel):
    """A config's files, haystacks and statistics; later stages may add sections."""

    model_config = ConfigDict(extra="allow")

    variant: dict[str, str] = Field(description="Variant axis -> value that made this config.")
    files: list[FileEntry] = Field(description="Data files, one per tokenizer.")
    haystacks: list[HaystackEntry] = Field(description="Haystacks of the config.")
    overlap: dict[str, Any] = Field(
        description="Question overlap statistics (against needle and context): count, mean and max of "
        "each ROUGE precision, unstemmed (`rouge1`, ...) and stemmed (`rouge1_stemmed`, ...)."
    )
    needle_kind: dict[str, Any] | None = Field(
        default=None, description="What the needle kind reported (e.g. excluded names)."
    )
    reports: dict[str, Any] | None = Field(
        default=None,
        description="The config's spec `reports:` mapping (aggregates shown, headline effective-length rule, "
        "baseline), read by `needlec score`; absent when the spec has none.",
    )
    repetition: list[RepetitionEntry] | None = Field(
        default=None,
        description="Haystacks repeated to reach some lengths (a compile warning); absent when none is.",
    )


class Manifest(_Part):
    """`manifest.json`: inputs, outputs and the content hash of one compiled dataset."""

    needlec_version: str = Field(description="Version of needlec that compiled the dataset.")
    item_schema_version: int = Field(description="Version of the item schema of the data files.")
    spec: SpecRef = Field(description="The spec.")
    sources: list[dict[str, Any]] = Field(description="Haystack sources as each describes itself (with sha256).")
    tokenizers: list[dict[str, str]] = Field(description="Tokenizers as each describes itself.")
    filters: list[dict[str, Any]] = Field(description="Haystack filter runs (see the filters audit).")
    configs: dict[str, ConfigEntry] = Field(description="Config name -> its files and statistics.")
    content_hash: str = Field(description="sha256 of the canonical JSON of every other key.")


def content_hash(manifest: dict[str, Any]) -> str:
    """Recompute the content hash of a manifest (everything but the hash itself)."""
    return sha256_json({k: v for k, v in manifest.items() if k != "content_hash"})


def with_content_hash(body: dict[str, Any]) -> dict[str, Any]:
    """`body` with its `content_hash` added, after checking it against the Manifest model."""
    manifest = {**body, "item_schema_version": body.get("item_schema_version", ITEM_SCHEMA_VERSION)}
    manifest["content_hash"] = content_hash(manifest)
    Manifest.model_validate(manifest)
    return manifest


def read_manifest(folder: str | Path, hint: str = "is this a needlec dataset folder?") -> dict[str, Any]:
    """The manifest of a dataset folder as plain JSON data.

    Raises OutputError (with `hint`) when the folder has none, and ManifestUnreadable when it is
    not valid JSON. Plain data, not the model, so readers of older or extended manifests still work.
    """
    folder = Path(folder)
    path = folder / MANIFEST
    if not folder.exists():
        raise OutputError(f"{folder}: no such folder")
    if not path.is_file():
        if (folder / "catalogue.json").is_file():  # a release folder of many datasets (`needlec release`)
            raise OutputError(
                f"{folder}: a release folder of many datasets (it has a catalogue.json), not one dataset; name one "
                f"of its datasets ({folder}/NAME), or for `publish` pass --catalogue"
            )
        raise OutputError(f"{folder}: no {MANIFEST}; {hint}")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ManifestUnreadable(f"{MANIFEST}: not valid JSON ({exc})") from None
    if not isinstance(data, dict):
        raise ManifestUnreadable(f"{MANIFEST}: not a JSON object")
    return data


def manifest_json_schema() -> dict[str, Any]:
    """The JSON Schema of `manifest.json` (published as `schema/manifest.schema.json`)."""
    schema = Manifest.model_json_schema(mode="serialization")
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = MANIFEST_SCHEMA_ID
    return schema
