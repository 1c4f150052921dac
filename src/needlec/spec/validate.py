"""Turn pydantic validation errors into `file:line:col` problems with "did you mean" hints."""

from __future__ import annotations

import re
from typing import Any

from pydantic import ValidationError

from needlec.errors import Problem
from needlec.registry import did_you_mean
from needlec.spec.loader import Document, KeyPath, dotted

_QUOTED = re.compile(r"'([^']*)'")


def data_path(data: Any, loc: tuple[Any, ...]) -> KeyPath:
    """Drop the parts of a pydantic error location that name union members, not data keys."""
    path: list[str | int] = []
    node = data
    for part in loc:
        in_dict = isinstance(node, dict) and isinstance(part, str) and part in node
        in_list = isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node)
        if in_dict or in_list:
            path.append(part)
            node = node[part]
        elif isinstance(node, dict) and isinstance(part, str) and part not in node and loc[-1] == part:
            path.append(part)  # a missing or unknown key: keep it so the message can name it
    return tuple(path)


def _schema_keys(schema: dict[str, Any], path: KeyPath) -> set[str]:
    """Property names the JSON Schema allows at `path` (all union branches together)."""
    defs = schema.get("$defs", {})

    def expand(node: dict[str, Any]) -> list[dict[str, Any]]:
        if "$ref" in node:
            return expand(defs[node["$ref"].split("/")[-1]])
        out = [node]
        for key in ("anyOf", "oneOf", "allOf"):
            for sub in node.get(key, []):
                out.extend(expand(sub))
        return out

    nodes = expand(schema)
    for part in path:
        following: list[dict[str, Any]] = []
        for node in nodes:
            if isinstance(part, int) and "items" in node:
                following.extend(expand(node["items"]))
            elif isinstance(part, str) and part in node.get("properties", {}):
                following.extend(expand(node["properties"][part]))
            elif isinstance(part, str) and isinstance(node.get("additionalProperties"), dict):
                following.extend(expand(node["additionalProperties"]))
        nodes = following
    keys: set[str] = set()
    for node in nodes:
        keys.update(node.get("properties", {}))
    return keys


def problems_from(error: ValidationError, doc: Document, schema: dict[str, Any], root: KeyPath = ()) -> list[Problem]:
    """Problems for every pydantic error, located in `doc` (under `root` for variant overrides)."""
    problems = []
    for err in error.errors(include_url=False):
        path = data_path(doc_data_at(doc, root), err["loc"])
        kind = err["type"]
        msg = err["msg"]
        hint = ""
        prefer_key = False
        if kind == "extra_forbidden":
            key = path[-1] if path else ""
            allowed = _schema_keys(schema, _clean(path[:-1]))
            msg = f"unknown key {key!r}"
            hint = did_you_mean(str(key), allowed).lstrip("; ").capitalize()
            if allowed:
                hint = (hint + " " if hint else "") + "Allowed keys: " + ", ".join(sorted(allowed)) + "."
            prefer_key = True
        elif kind == "missing":
            msg = f"required key {path[-1]!r} is missing" if path else "a required key is missing"
            path = path[:-1]
        elif kind == "union_tag_invalid":
            ctx = err.get("ctx", {})
            expected = _QUOTED.findall(str(ctx.get("expected_tags", "")))
            tag_key = str(ctx.get("discriminator", "type")).strip("'")
            msg = f"unknown {tag_key} {ctx.get('tag')!r}; expected one of: {', '.join(expected)}"
            hint = did_you_mean(str(ctx.get("tag")), expected).lstrip("; ").capitalize()
        elif kind == "literal_error":
            expected = _QUOTED.findall(str(err.get("ctx", {}).get("expected", "")))
            msg = f"expected one of {', '.join(repr(e) for e in expected)}, got {err.get('input')!r}"
            hint = did_you_mean(str(err.get("input")), expected).lstrip("; ").capitalize()
        elif kind == "value_error":
            msg = msg.removeprefix("Value error, ")
        else:
            msg = f"{msg} (got {_short(err.get('input'))})"
        location = doc.locate(root + path, prefer_key=prefer_key)
        problems.append(Problem(msg, location, dotted(path), hint))
    return problems


def doc_data_at(doc: Document, root: KeyPath) -> Any:
    node: Any = doc.data
    for part in root:
        node = node[part]
    return node


def _clean(path: KeyPath) -> KeyPath:
    return tuple(p for p in path)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
