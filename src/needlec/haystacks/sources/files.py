"""Haystack text from local files: .txt and .md as whole documents, .jsonl one record per document."""

from __future__ import annotations

import codecs
import json
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Literal

from pydantic import Field, field_validator

from needlec.errors import SourceError
from needlec.haystacks.sources.base import SOURCES, SourceContext, SourceDocument, SourceSpec, SourceText, sha256_of
from needlec.spec.base import KeyedValueError

SUFFIXES = {".txt", ".md", ".jsonl"}


class FilesSource(SourceSpec):
    """Local text files matched by glob patterns, read in sorted path order."""

    type: Literal["files"] = Field(description="Selects local files.")
    paths: list[str] = Field(
        min_length=1,
        description="Glob patterns relative to the spec "
        "file's folder (`**` recurses). Files ending in .txt, .md or .jsonl.",
        examples=[["haystacks/*.txt"]],
    )
    field: str = Field("text", description="For .jsonl files: the key that holds each record's text.")
    encoding: str = Field(
        "utf-8",
        description="Text encoding of the files; a file that does not decode is an error, never silently replaced.",
    )

    @field_validator("encoding")
    @classmethod
    def _known_encoding(cls, encoding: str) -> str:
        return known_encoding(encoding)

    @field_validator("paths")
    @classmethod
    def _relative(cls, paths: list[str]) -> list[str]:
        for i, pattern in enumerate(paths):
            if not pattern.strip():
                raise KeyedValueError("a path pattern must not be empty", "paths", i)
            if (
                PurePosixPath(pattern).is_absolute()
                or PureWindowsPath(pattern).is_absolute()
                or pattern.startswith("~")
            ):
                raise KeyedValueError(
                    f"path pattern {pattern!r} is absolute; patterns are relative to the spec file's folder "
                    "(use ../ to reach a sibling folder)",
                    "paths",
                    i,
                )
        return paths

    def preflight(self, ctx: SourceContext) -> list[str]:
        """Patterns that match no file, reported at validation time."""
        return [
            f"files source: pattern {p!r} matched no .txt/.md/.jsonl file under {ctx.spec_dir}"
            for p in self.paths
            if not any(h.is_file() and h.suffix in SUFFIXES for h in ctx.spec_dir.glob(p))
        ]


def known_encoding(encoding: str) -> str:
    """`encoding` where Python knows it (checked when the spec is validated, not when a file is first read)."""
    try:
        text = getattr(codecs.lookup(encoding), "_is_text_encoding", True)  # not base64, rot13, ...
    except LookupError:
        text = False
    if not text:
        raise ValueError(f"unknown text encoding {encoding!r}; e.g. utf-8, utf-16, latin-1, cp1252")
    return encoding


def parse_bytes(raw: bytes, suffix: str, label: str, field: str, encoding: str) -> list[SourceDocument]:
    """Decode one file's bytes into documents; shared by the files and url sources."""
    try:
        text = raw.decode(encoding)
    except UnicodeDecodeError as exc:
        raise SourceError(f"{label}: not valid {encoding} (byte {exc.start}: {exc.reason})") from None
    except LookupError:
        raise SourceError(f"{label}: unknown text encoding {encoding!r}") from None
    text = text.replace("\r\n", "\n").lstrip("\ufeff")
    if suffix != ".jsonl":
        return [SourceDocument(id=label, text=text)]
    documents = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise SourceError(f"{label}:{number}: not valid JSON ({exc.msg})") from None
        if not isinstance(record, dict) or not isinstance(record.get(field), str):
            raise SourceError(f"{label}:{number}: expected an object with a string {field!r} field")
        documents.append(SourceDocument(id=f"{label}:{number}", text=record[field]))
    return documents


@SOURCES.register("files", FilesSource)
def load_files(config: FilesSource, ctx: SourceContext) -> SourceText:
    """Local .txt, .md and .jsonl files matched by globs."""
    matched: set[Path] = set()
    for pattern in config.paths:
        hits = [p for p in ctx.spec_dir.glob(pattern) if p.is_file() and p.suffix in SUFFIXES]
        if not hits:
            raise SourceError(f"files source: pattern {pattern!r} matched no .txt/.md/.jsonl file under {ctx.spec_dir}")
        matched.update(hits)
    documents: list[SourceDocument] = []
    raws: list[bytes] = []
    for path in sorted(matched, key=lambda p: p.relative_to(ctx.spec_dir).as_posix()):
        label = path.relative_to(ctx.spec_dir).as_posix()
        raw = path.read_bytes()
        raws.append(label.encode() + b"\0" + raw)
        documents.extend(parse_bytes(raw, path.suffix, label, config.field, config.encoding))
    return SourceText(
        name="files:" + ",".join(config.paths),
        documents=tuple(documents),
        sha256=sha256_of(raws),
        origin=f"{len(raws)} local file(s)",
    )
