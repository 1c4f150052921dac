"""Haystack sources: embedded corpus, local files, pinned downloads."""

from needlec.haystacks.sources import builtin, files, url  # noqa: F401  (registers the kinds)
from needlec.haystacks.sources.base import SOURCES, SourceContext, SourceDocument, SourceSpec, SourceText

__all__ = ["SOURCES", "SourceContext", "SourceDocument", "SourceSpec", "SourceText"]
