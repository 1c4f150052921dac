"""Passage collections in the formats MLNeedle's online sources use: SQuAD JSON and TSV.

`squad`: the SQuAD layout that MLQA ships (`data[].paragraphs[].context`); every distinct context
paragraph is one document, in file order. `tsv`: one passage per line, as the mMARCO collections
(`id<TAB>passage`); `column` picks the field. Either may come out of a `.zip` archive (`member`),
as MLQA is published, and `max_records` keeps the first records only.
"""

from __future__ import annotations

import io
import json
import zipfile
from typing import IO, Any

from needlec.errors import SourceError
from needlec.haystacks.sources.base import SourceDocument

__all__ = ["parse_squad", "parse_tsv", "tsv_documents", "unzip_member"]


def unzip_member(raw: bytes, member: str, label: str) -> bytes:
    """The bytes of `member` inside the zip archive `raw`."""
    try:
        with zipfile.ZipFile(io.BytesIO(raw)) as archive:
            try:
                return archive.read(member)
            except KeyError:
                names = [n for n in archive.namelist() if not n.endswith("/")]
                shown = ", ".join(names[:8]) + (", ..." if len(names) > 8 else "")
                raise SourceError(f"{label}: the archive has no member {member!r} (it has {shown})") from None
    except zipfile.BadZipFile:
        raise SourceError(f"{label}: `member` is set but the file is not a zip archive") from None


def _decode(raw: bytes, label: str, encoding: str) -> str:
    try:
        return raw.decode(encoding).replace("\r\n", "\n").lstrip("\ufeff")
    except UnicodeDecodeError as exc:
        raise SourceError(f"{label}: not valid {encoding} (byte {exc.start}: {exc.reason})") from None
    except LookupError:
        raise SourceError(f"{label}: unknown text encoding {encoding!r}") from None


def parse_squad(raw: bytes, label: str, encoding: str, limit: int | None) -> list[SourceDocument]:
    """Every distinct `context` of a SQuAD-format file, one document each (id: title and position)."""
    try:
        data: Any = json.loads(_decode(raw, label, encoding))
    except json.JSONDecodeError as exc:
        raise SourceError(f"{label}: not valid JSON ({exc.msg} at line {exc.lineno})") from None
    articles = data.get("data") if isinstance(data, dict) else None
    if not isinstance(articles, list):
        raise SourceError(f"{label}: expected SQuAD format, an object with a `data` list of articles")
    documents: list[SourceDocument] = []
    seen: set[str] = set()
    for a, article in enumerate(articles):
        paragraphs = article.get("paragraphs") if isinstance(article, dict) else None
        if not isinstance(paragraphs, list):
            raise SourceError(f"{label}: data[{a}] has no `paragraphs` list")
        title = str(article.get("title", a))
        for p, paragraph in enumerate(paragraphs):
            context = paragraph.get("context") if isinstance(paragraph, dict) else None
            if not isinstance(context, str):
                raise SourceError(f"{label}: data[{a}].paragraphs[{p}] has no string `context`")
            text = " ".join(context.split())  # one paragraph: no blank line may split it
            if not text or text in seen:
                continue
            seen.add(text)
            documents.append(SourceDocument(id=f"{label}#{title}/{p}", text=text))
            if limit is not None and len(documents) >= limit:
                return documents
    return documents


def parse_tsv(raw: bytes, label: str, encoding: str, column: int, limit: int | None) -> list[SourceDocument]:
    """One document per non-empty line: its tab-separated field `column` (0-based)."""
    return tsv_documents(io.BytesIO(raw), label, encoding, column, limit)


def tsv_documents(stream: IO[bytes], label: str, encoding: str, column: int, limit: int | None) -> list[SourceDocument]:
    """`parse_tsv` over a binary stream, read line by line, so `limit` stops reading a large file early."""
    documents: list[SourceDocument] = []
    for number, raw_line in enumerate(stream, start=1):
        try:
            line = raw_line.decode(encoding)
        except UnicodeDecodeError as exc:
            raise SourceError(f"{label}:{number}: not valid {encoding} ({exc.reason})") from None
        except LookupError:
            raise SourceError(f"{label}: unknown text encoding {encoding!r}") from None
        line = line.rstrip("\r\n").lstrip("\ufeff") if number == 1 else line.rstrip("\r\n")
        if not line.strip():
            continue
        fields = line.split("\t")
        if column >= len(fields):
            raise SourceError(f"{label}:{number}: {len(fields)} tab-separated field(s), no column {column}")
        text = " ".join(fields[column].split())
        if text:
            documents.append(SourceDocument(id=f"{label}:{number}", text=text))
            if limit is not None and len(documents) >= limit:
                break
    return documents
