"""Haystack sources: embedded corpus, local files, pinned downloads.

The kinds register in `needlec.registry.SOURCES` when the registry first imports them; importing
this package imports none of them.
"""

from needlec.haystacks.sources.base import SOURCES, SourceContext, SourceDocument, SourceLoader, SourceSpec, SourceText

__all__ = ["SOURCES", "SourceContext", "SourceDocument", "SourceLoader", "SourceSpec", "SourceText"]
