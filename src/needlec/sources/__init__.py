"""Haystack sources: embedded corpus, local files, pinned downloads."""

from needlec.sources import builtin, files, url  # noqa: F401  (registers the kinds)
from needlec.sources.base import SOURCES, SourceContext, SourceDocument, SourceSpec, SourceText

__all__ = ["SOURCES", "SourceContext", "SourceDocument", "SourceSpec", "SourceText"]
