"""The contract of a haystack source: its config base, what it produces, and its loader Protocol.

A source kind is a config model (a subclass of `SourceSpec`) registered in
`needlec.registry.SOURCES` together with a loader: a callable `(config, context) -> SourceText`.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from pydantic import Field

from needlec.registry import SOURCES
from needlec.spec.base import StrictModel
from needlec.spec.components import FilterConfig


class SourceSpec(StrictModel):
    """Keys every kind of haystack source accepts besides its own."""

    filters: list[FilterConfig] = Field(
        default_factory=list,
        description="Filters run over this source's documents, in order, "
        "before haystacks are built: each takes out sentences (or, for `name_collisions`, pool "
        "names) and records why. Each is a mapping with a `type`: `literal_terms`, "
        "`embedding_distractors`, `llm_answer_candidates` or `name_collisions`.",
        examples=[[{"type": "literal_terms", "from_spec": ["answers"]}]],
    )

    def preflight(self, context: SourceContext) -> list[str]:
        """Problems found before compiling (a missing file, a bad pin), as messages; none by default.

        Hook: `needlec validate` calls it for every source, so a broken source fails early.
        """
        return []


@dataclass(frozen=True)
class SourceDocument:
    """One document of haystack text (a book, a file, a record of a JSONL file)."""

    id: str
    text: str
    # which of the spec's haystack sources it came from (set by the compile, after the filters), so a
    # builder can keep sources apart, e.g. rank each language of a pooled haystack on its own
    source: int = 0


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


class SourceLoader(Protocol):
    """What `SOURCES` registers beside a config model: reads the documents the config names."""

    def __call__(self, config: Any, context: SourceContext, /) -> SourceText: ...


__all__ = ["SOURCES", "SourceContext", "SourceDocument", "SourceLoader", "SourceSpec", "SourceText", "sha256_of"]


def sha256_of(chunks: list[bytes]) -> str:
    digest = hashlib.sha256()
    for chunk in chunks:
        digest.update(hashlib.sha256(chunk).digest())
    return digest.hexdigest()
