"""Haystack text downloaded over HTTP(S), pinned by sha256 and cached on disk.

The pin makes a compile reproducible: a changed file is an error, not a silent new dataset.
Downloads go to a temporary file and are renamed into the cache only after the hash matches.
"""

from __future__ import annotations

import hashlib
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Literal

from pydantic import Field

from needlec.errors import SourceError
from needlec.haystacks.sources.base import SOURCES, SourceContext, SourceSpec, SourceText
from needlec.haystacks.sources.files import parse_bytes
from needlec.util.atomic import write_file_atomic


class UrlSource(SourceSpec):
    """A text or JSONL file downloaded once, checked against its sha256 and cached."""

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
    format: Literal["text", "jsonl"] = Field(
        "text", description="`text`: the whole file is one document; `jsonl`: one document per record."
    )
    field: str = Field("text", description="For `jsonl`: the key that holds each record's text.")
    encoding: str = Field("utf-8", description="Text encoding of the file.")
    timeout: float = Field(30.0, gt=0, description="Seconds to wait for the server per attempt.")
    retries: int = Field(
        3,
        ge=0,
        le=10,
        description="Extra attempts after a failed download, with exponential backoff (0.5 s, 1 s, 2 s, ...).",
    )


def _download(config: UrlSource, target: Path) -> bytes:
    last_error = ""
    for attempt in range(config.retries + 1):
        if attempt:
            time.sleep(0.5 * 2 ** (attempt - 1))
        try:
            request = urllib.request.Request(config.url, headers={"User-Agent": "needlec"})
            with urllib.request.urlopen(request, timeout=config.timeout) as response:
                data: bytes = response.read()
        except urllib.error.HTTPError as exc:
            last_error = f"HTTP {exc.code} {exc.reason}"
            if exc.code < 500 and exc.code != 429:
                break
            continue
        except (urllib.error.URLError, TimeoutError, OSError) as exc:
            last_error = str(getattr(exc, "reason", exc))
            continue
        actual = hashlib.sha256(data).hexdigest()
        if actual != config.sha256:
            raise SourceError(
                f"url source {config.url}: sha256 mismatch: the spec pins {config.sha256} but the server sent {actual}"
            )
        write_file_atomic(target, data)
        return data
    raise SourceError(f"url source {config.url}: download failed after {config.retries + 1} attempt(s): {last_error}")


@SOURCES.register("url", UrlSource)
def load_url(config: UrlSource, ctx: SourceContext) -> SourceText:
    """A file downloaded over HTTP(S), pinned by sha256."""
    cached = ctx.cache_dir / "url" / config.sha256
    data = None
    if cached.exists():
        data = cached.read_bytes()
        if hashlib.sha256(data).hexdigest() != config.sha256:
            data = None
    if data is None:
        data = _download(config, cached)
    suffix = ".jsonl" if config.format == "jsonl" else ".txt"
    documents = parse_bytes(data, suffix, config.url, config.field, config.encoding)
    return SourceText(name=f"url:{config.url}", documents=tuple(documents), sha256=config.sha256, origin=config.url)
