"""What every haystack source produces, and the registry that names the kinds of source."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import Field

from needlec.haystacks.filters import FilterConfig
from needlec.registry import Registry
from needlec.spec.base import StrictModel


class SourceSpec(StrictModel):
    """Keys every kind of haystack source accepts besides its own."""

    filters: list[FilterConfig] = Field(  # type: ignore[valid-type]
        default_factory=list,
        description="Filters run over this source's documents, in order, "
        "before haystacks are built: each takes out sentences (or, for `name_collisions`, pool "
        "names) and records why. Each is a mapping with a `type`: `literal_terms`, "
        "`embedding_distractors`, `llm_answer_candidates` or `name_collisions`.",
        examples=[[{"type": "literal_terms", "from_spec": ["answers"]}]],
    )


@dataclass(frozen=True)
class SourceDocument:
    """One document of haystack text (a book, a file, a record of a JSONL file)."""

    id: str
    text: str


@dataclass(frozen=True)
class SourceText:
    """The documents a source yields, with a sha256 over exactly the bytes it read."""

    name: str
    documents: tuple[SourceDocument, ...]
    sha256: str
    origin: str
    # Embedded corpora behind this text: {name, licence, sha256, language} each (builtin source only).
    corpora: tuple[dict[str, object], ...] = ()

    def describe(self) -> dict[str, object]:
        out: dict[str, object] = {
            "name": self.name,
            "origin": self.origin,
            "sha256": self.sha256,
            "documents": len(self.documents),
            "characters": sum(len(d.text) for d in self.documents),
        }
        if self.corpora:
            out["corpora"] = [dict(c) for c in self.corpora]
        return out


@dataclass(frozen=True)
class SourceContext:
    """What a source may use: the spec's folder (for relative paths) and the cache folder."""

    spec_dir: Path
    cache_dir: Path


SourceLoader = Callable[[Any, SourceContext], SourceText]
SOURCES: Registry[SourceLoader] = Registry("sources")


def sha256_of(chunks: list[bytes]) -> str:
    digest = hashlib.sha256()
    for chunk in chunks:
        digest.update(hashlib.sha256(chunk).digest())
    return digest.hexdigest()
