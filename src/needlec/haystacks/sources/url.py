"""Haystack text downloaded over HTTP(S), pinned by sha256 and cached on disk.

The pin makes a compile reproducible: a changed file is an error, not a silent new dataset.
Downloads stream to a temporary file (memory stays bounded whatever the size) and are renamed
into the cache only after the hash matches, so a truncated body is never cached. Each attempt has
a total deadline; client errors (4xx except 429) are not retried; messages never show secrets.
"""

from __future__ import annotations

import hashlib
import os
import time
import uuid
from pathlib import Path
from typing import Literal

from pydantic import Field, field_validator

from needlec.errors import SourceError
from needlec.haystacks.sources.base import SOURCES, SourceContext, SourceSpec, SourceText
from needlec.haystacks.sources.files import known_encoding, parse_bytes
from needlec.haystacks.sources.records import parse_squad, parse_tsv, tsv_documents, unzip_member
from needlec.util.redact import redact


class UrlSource(SourceSpec):
    """A text, JSONL, SQuAD-JSON or TSV file (or a member of a zip archive) downloaded once, checked
    against its sha256 and cached."""

    type: Literal["url"] = Field(description="Selects a download.")
    url: str = Field(
        pattern=r"^https?://",
        description="HTTP(S) address of the file.",
        examples=["https://example.org/corpus/essays.txt"],
    )
    sha256: str = Field(
        pattern=r"^[0-9a-f]{64}$",
        description="Required sha256 of the file (lowercase hex); a download that does not match is rejected.",
    )
    format: Literal["text", "jsonl", "squad", "tsv"] = Field(
        "text",
        description="`text`: the whole file is one document; `jsonl`: one document per record; `squad`: "
        "SQuAD-format JSON (as MLQA), one document per distinct `data[].paragraphs[].context`; `tsv`: one "
        "document per line, the tab-separated field `column` (as the mMARCO collections).",
    )
    field: str = Field("text", description="For `jsonl`: the key that holds each record's text.")
    column: int = Field(1, ge=0, description="For `tsv`: the 0-based field that holds the passage (mMARCO: 1).")
    member: str | None = Field(
        None,
        description="Read this file inside the downloaded zip archive (e.g. MLQA's "
        "`MLQA_V1/test/test-context-de-question-de.json`); the sha256 pins the archive.",
    )
    max_records: int | None = Field(
        None,
        ge=1,
        description="For `jsonl`, `squad` and `tsv`: keep only the first this many documents (a `tsv` file "
        "outside an archive is read only that far).",
    )
    encoding: str = Field("utf-8", description="Text encoding of the file.")

    @field_validator("encoding")
    @classmethod
    def _known_encoding(cls, encoding: str) -> str:
        return known_encoding(encoding)

    timeout: float = Field(30.0, gt=0, description="Seconds to wait for the server to answer or send more data.")
    deadline: float = Field(
        600.0,
        gt=0,
        description="Most seconds one download attempt may take in total, however slowly the server sends.",
    )
    retries: int = Field(
        3,
        ge=0,
        le=10,
        description="Extra attempts after a failed download, with exponential backoff (0.5 s, 1 s, 2 s, ...). "
        "Client errors (HTTP 4xx other than 429) are not retried.",
    )


CHUNK = 1 << 16


class _Fatal(Exception):
    """A failure that another attempt cannot fix (HTTP 4xx other than 429, a hash mismatch)."""


def _attempt(config: UrlSource, part: Path) -> str:
    """One download into `part`, streamed in chunks; returns the sha256 of what arrived."""
    import urllib.request  # only when a download runs (with http.client and ssl, about 20 ms to import)

    started = time.monotonic()
    request = urllib.request.Request(config.url, headers={"User-Agent": "needlec"})
    digest = hashlib.sha256()
    received = 0
    with urllib.request.urlopen(request, timeout=min(config.timeout, config.deadline)) as response:
        declared = response.headers.get("Content-Length")
        expected = int(declared) if declared and declared.isdigit() else None
        with part.open("wb") as out:
            while True:
                left = config.deadline - (time.monotonic() - started)
                if left <= 0:
                    raise TimeoutError(f"the download took longer than the {config.deadline:g} s deadline")
                sock = getattr(getattr(getattr(response, "fp", None), "raw", None), "_sock", None)
                if sock is not None:
                    sock.settimeout(max(0.01, min(config.timeout, left)))
                # read1: at most one socket read, so a server that drips bytes cannot hold one call past the deadline
                try:
                    block = response.read1(CHUNK)
                except TimeoutError:
                    if config.deadline - (time.monotonic() - started) <= 0.05:  # the socket waited out the deadline
                        raise TimeoutError(
                            f"the download took longer than the {config.deadline:g} s deadline"
                        ) from None
                    raise
                if not block:
                    break
                digest.update(block)
                out.write(block)
                received += len(block)
    if expected is not None and received != expected:
        raise ConnectionError(f"the body was cut short: received {received:,} of {expected:,} bytes")
    return digest.hexdigest()


def _download(config: UrlSource, target: Path) -> None:
    """Download to a temporary file beside `target`; rename it into place only when the hash matches."""
    import http.client
    import urllib.error

    last_error = ""
    target.parent.mkdir(parents=True, exist_ok=True)
    label = redact(config.url)
    for attempt in range(config.retries + 1):
        if attempt:
            time.sleep(0.5 * 2 ** (attempt - 1))
        part = target.with_name(f"{target.name}.{uuid.uuid4().hex}.part")
        try:
            try:
                actual = _attempt(config, part)
            except urllib.error.HTTPError as exc:
                last_error = f"HTTP {exc.code} {exc.reason}"
                if 400 <= exc.code < 500 and exc.code != 429:
                    raise _Fatal(last_error) from None
                continue
            except (urllib.error.URLError, http.client.HTTPException, TimeoutError, OSError) as exc:
                reason = getattr(exc, "reason", None) or exc
                if isinstance(exc, http.client.HTTPException) and not isinstance(exc, http.client.IncompleteRead):
                    reason = f"not a valid HTTP response ({type(exc).__name__}: {exc})"
                last_error = str(reason)
                continue
            if actual != config.sha256:
                raise _Fatal(f"sha256 mismatch: the spec pins {config.sha256} but the server sent {actual}")
            os.replace(part, target)
            return
        except _Fatal as exc:
            raise SourceError(redact(f"url source {label}: {exc}")) from None
        finally:
            part.unlink(missing_ok=True)
    raise SourceError(
        redact(f"url source {label}: download failed after {config.retries + 1} attempt(s): {last_error}")
    )


def _sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def cached_path(config: UrlSource, cache_dir: Path) -> Path:
    """Where the download of `config` is kept in the cache (named by its pinned sha256)."""
    return cache_dir / "url" / config.sha256


@SOURCES.register("url", UrlSource)
def load_url(config: UrlSource, ctx: SourceContext) -> SourceText:
    """A file downloaded over HTTP(S), pinned by sha256."""
    cached = cached_path(config, ctx.cache_dir)
    if not (cached.is_file() and _sha256_file(cached) == config.sha256):
        _download(config, cached)
    label = config.url if config.member is None else f"{config.url}!{config.member}"
    if config.format == "tsv" and config.member is None:  # streamed: a multi-GB collection stays on disk
        with cached.open("rb") as stream:
            rows = tsv_documents(stream, label, config.encoding, config.column, config.max_records)
        return SourceText(name=f"url:{label}", documents=tuple(rows), sha256=config.sha256, origin=config.url)
    data = cached.read_bytes()
    if config.member is not None:
        data = unzip_member(data, config.member, config.url)
    if config.format == "squad":
        documents = parse_squad(data, label, config.encoding, config.max_records)
    elif config.format == "tsv":
        documents = parse_tsv(data, label, config.encoding, config.column, config.max_records)
    else:
        suffix = ".jsonl" if config.format == "jsonl" else ".txt"
        documents = parse_bytes(data, suffix, label, config.field, config.encoding)
        if config.max_records is not None:
            documents = documents[: config.max_records]
    return SourceText(name=f"url:{label}", documents=tuple(documents), sha256=config.sha256, origin=config.url)
