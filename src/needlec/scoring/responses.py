"""Readers of model responses: plain JSONL and the native outputs of the supported runners.

Detected from the content, not the file name:
- plain JSONL: `{"id": ITEM_ID, "response": TEXT}` per line (other keys ignored);
- OpenAI Batch output JSONL: `{"custom_id": ITEM_ID, "response": {"body": {"choices": [...]}}}`;
- lm-evaluation-harness samples JSONL: `{"doc": {"id": ...}, "resps": [[TEXT]], ...}`;
- Inspect eval logs: a JSON log (`{"eval": ..., "samples": [...]}`) or a `.eval` zip archive.
"""

from __future__ import annotations

import json
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from needlec.errors import NeedlecError


@dataclass(frozen=True)
class Response:
    """One response to one item, and where it came from (file:line) for error messages.

    `error` is set when the runner recorded that the request failed (an Inspect sample with an
    `error`, an OpenAI Batch line with an `error`): such a response has no text to score, and the
    item counts as missing, with the runner's message in the report.
    """

    id: str
    text: str
    origin: str
    error: str | None = None


def _openai_text(obj: dict[str, Any]) -> str:
    body = (obj.get("response") or {}).get("body") or {}
    choices = body.get("choices") or []
    if not choices:
        return ""
    first = choices[0]
    message = first.get("message") or {}
    return str(message.get("content") or first.get("text") or "")


def _openai_error(obj: dict[str, Any]) -> str | None:
    """The failure an OpenAI Batch output line records (a top-level `error`, or a response whose
    status code is 400 or more), or None for a completed request."""
    response = obj.get("response") or {}
    status = response.get("status_code", 200)
    error = obj.get("error") or (((response.get("body") or {}).get("error") or {}) if status >= 400 else None)
    if not error and status < 400:
        return None
    if isinstance(error, dict) and error.get("message"):
        return str(error["message"])
    return f"request failed (status {status})"


def _lm_eval_text(obj: dict[str, Any]) -> str:
    for key in ("filtered_resps", "resps"):
        value = obj.get(key)
        while isinstance(value, list) and value:
            value = value[0]
        if isinstance(value, str):
            return value
    return ""


def _jsonl(path: Path) -> Iterator[Response]:
    kind = None
    with path.open("rb") as fh:  # bytes: orjson checks the UTF-8 of each line and says where it fails
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            origin = f"{path}:{lineno}"
            try:
                obj = orjson.loads(line)
            except json.JSONDecodeError as exc:
                try:
                    line.decode("utf-8")
                except UnicodeDecodeError as bad:
                    raise NeedlecError(f"{origin}: not valid UTF-8 at byte {bad.start + 1} ({bad.reason})") from None
                raise NeedlecError(f"{origin}:{exc.colno}: not a JSON object ({exc.msg})") from None
            if not isinstance(obj, dict):
                raise NeedlecError(f"{origin}: expected a JSON object per line")
            if kind is None and "samples" in obj and "eval" in obj:
                yield from _inspect_samples(obj.get("samples") or [], origin)
                return
            if kind is None:
                kind = "openai" if "custom_id" in obj else "lm-eval" if "doc" in obj else "plain"
            if kind == "openai":
                failure = _openai_error(obj)
                if failure is not None:
                    yield Response(str(obj["custom_id"]), "", origin, error=failure)
                    continue
                yield Response(str(obj["custom_id"]), _openai_text(obj), origin)
            elif kind == "lm-eval":
                doc = obj.get("doc") or {}
                yield Response(str(doc.get("id")), _lm_eval_text(obj), origin)
            else:
                if "id" not in obj or "response" not in obj:
                    raise NeedlecError(f'{origin}: expected {{"id": ..., "response": ...}}')
                text = obj["response"]
                if text is None:  # the runner got no answer: the item counts as missing
                    yield Response(str(obj["id"]), "", origin, error="the response is null")
                    continue
                if not isinstance(text, str):
                    raise NeedlecError(
                        f"{origin}: `response` must be the model's text as a string, not a JSON "
                        f"{_json_type(text)}; write null for an item the runner got no answer to"
                    )
                yield Response(str(obj["id"]), text, origin)


def _json_type(value: object) -> str:
    return {bool: "boolean", int: "number", float: "number", list: "array", dict: "object"}.get(type(value), "value")


def _inspect_samples(samples: list[dict[str, Any]], origin: str) -> Iterator[Response]:
    for sample in samples:
        error = sample.get("error")
        if error:
            message = error.get("message", str(error)) if isinstance(error, dict) else str(error)
            yield Response(str(sample.get("id")), "", origin, error=message)
            continue
        output = sample.get("output") or {}
        text = output.get("completion")
        if text is None:
            choices = output.get("choices") or [{}]
            content = (choices[0].get("message") or {}).get("content", "")
            text = content if isinstance(content, str) else "".join(c.get("text", "") for c in content)
        yield Response(str(sample.get("id")), str(text or ""), origin)


def _zip_member(zf: zipfile.ZipFile, name: str, path: Path) -> bytes:
    """One member of an Inspect `.eval` log. Recent Inspect versions compress members with zstd, which
    Python's zipfile reads only once `zipfile_zstd` (installed with Inspect) has registered the method."""
    try:
        return zf.read(name)
    except NotImplementedError:
        try:
            import zipfile_zstd  # noqa: F401  (registers zstd with zipfile on import)
        except ImportError:
            raise NeedlecError(
                f"{path}: {name} is zstd-compressed; install zipfile-zstd (pip install zipfile-zstd) "
                "or write the log with `inspect eval --log-format json`"
            ) from None
        return zf.read(name)


def read_responses(path: str | Path) -> Iterator[Response]:
    """Responses in `path`, whatever the supported format."""
    p = Path(path)
    if not p.is_file():
        raise NeedlecError(f"{p}: no such responses file")
    if zipfile.is_zipfile(p):
        with zipfile.ZipFile(p) as zf:
            names = sorted(n for n in zf.namelist() if n.startswith("samples/") and n.endswith(".json"))
            for name in names:
                yield from _inspect_samples([json.loads(_zip_member(zf, name, p))], f"{p}:{name}")
        return
    with p.open("rb") as fh:  # a sniff of the format only: a bad byte is reported where the line is read
        head = fh.read(1 << 16).decode("utf-8", errors="replace").lstrip()
    if head.startswith("{") and not head.split("\n", 1)[0].rstrip().endswith("}"):
        try:
            log = json.loads(p.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise NeedlecError(f"{p}:{exc.lineno}:{exc.colno}: not JSON ({exc.msg})") from None
        except UnicodeDecodeError as exc:
            raise NeedlecError(f"{p}: not valid UTF-8 at byte {exc.start + 1} ({exc.reason})") from None
        if isinstance(log, dict) and "samples" in log:
            yield from _inspect_samples(log.get("samples") or [], str(p))
            return
        raise NeedlecError(f"{p}: a JSON document but not an Inspect eval log (no `samples`)")
    yield from _jsonl(p)
