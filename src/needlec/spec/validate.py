"""Turn pydantic validation errors into `file:line:col` problems with "did you mean" hints."""

from __future__ import annotations

import re
from typing import Any

from pydantic import ValidationError

from needlec.errors import Problem
from needlec.registry import did_you_mean
from needlec.spec.loader import Document, KeyPath, dotted

_TAG_KEYS = ("type", "metric")
_QUOTED = re.compile(r"'([^']*)'")
_THOUSANDS = re.compile(r"\d+(\.\d+)?[kK]")


def data_path(data: Any, loc: tuple[Any, ...], kind: str = "missing") -> KeyPath:
    """Drop the parts of a pydantic error location that name union members, not data keys."""
    path: list[str | int] = []
    node = data
    for i, part in enumerate(loc):
        is_tag = isinstance(node, dict) and any(node.get(tag) == part for tag in _TAG_KEYS)
        if is_tag and i + 1 < len(loc):
            continue  # a tagged union names the chosen kind (`url`) before the key inside it
        in_dict = isinstance(node, dict) and isinstance(part, str) and part in node
        in_list = isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node)
        if in_dict or in_list:
            path.append(part)
            node = node[part]
        elif (
            kind in ("missing", "extra_forbidden")
            and isinstance(node, dict)
            and isinstance(part, str)
            and part not in node
            and loc[-1] == part
        ):
            path.append(part)  # a missing or unknown key: keep it so the message can name it
    return tuple(path)


def _schema_keys(
    schema: dict[str, Any], path: KeyPath, chosen: tuple[str, Any] | None = None, untagged: bool = False
) -> set[str]:
    """Property names the JSON Schema allows at `path` (all union branches together, or with `chosen`, a tag
    key and its value such as `("type", "files")`, the branches that tag selects where some do; with
    `untagged`, a mapping without a tag, the branches that take it by default, as `needle: {needles: ...}` is
    a template needle, where some do)."""
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
    defaults: dict[str, Any] = {}  # the `default` of the last union entered, where it names a tag
    for part in path:
        following: list[dict[str, Any]] = []
        defaults = {}
        for node in nodes:
            if isinstance(part, int) and "items" in node:
                entered = node["items"]
            elif isinstance(part, str) and part in node.get("properties", {}):
                entered = node["properties"][part]
            elif isinstance(part, str) and isinstance(node.get("additionalProperties"), dict):
                entered = node["additionalProperties"]
            else:
                continue
            if isinstance(entered.get("default"), dict) and len(entered["default"]) == 1:
                defaults.update(entered["default"])
            following.extend(expand(entered))
        nodes = following
    if chosen is not None:
        tag, value = chosen

        def selects(node: dict[str, Any]) -> bool:
            prop = node.get("properties", {}).get(tag, {})
            return bool(prop.get("const") == value or value in prop.get("enum", []))

        picked = [node for node in nodes if selects(node)]
        nodes = picked or nodes
    elif untagged and defaults:  # the kind a mapping without its tag is (`ComponentField.default`)
        (tag, value), *_ = defaults.items()
        nodes = [node for node in nodes if node.get("properties", {}).get(tag, {}).get("const") == value] or nodes
    keys: set[str] = set()
    for node in nodes:
        keys.update(node.get("properties", {}))
    return keys


_SHAPE_ERRORS = {"dict_type", "model_type", "model_attributes_type", "list_type", "is_instance_of"}
_EXPECTED = {
    "int_type": "expected a whole number",
    "int_parsing": "expected a whole number",
    "int_from_float": "expected a whole number",
    "float_type": "expected a number",
    "float_parsing": "expected a number",
    "finite_number": "expected a finite number",
    "bool_type": "expected true or false",
    "bool_parsing": "expected true or false",
    "string_type": "expected text",
    "dict_type": "expected a mapping of keys",
    "model_type": "expected a mapping of keys",
    "model_attributes_type": "expected a mapping of keys",
    "list_type": "expected a list",
    "none_required": "expected null",
}
_BOUNDS = {
    "greater_than": ("gt", "must be greater than {}"),
    "greater_than_equal": ("ge", "must be at least {}"),
    "less_than": ("lt", "must be less than {}"),
    "less_than_equal": ("le", "must be at most {}"),
    "too_short": ("min_length", "needs at least {} entr(y/ies)"),
    "too_long": ("max_length", "allows at most {} entr(y/ies)"),
    "string_too_short": ("min_length", "needs at least {} character(s)"),
    "string_too_long": ("max_length", "allows at most {} character(s)"),
}
SLUG_WORDING = (
    "must be a slug: lowercase letters, digits, `-` and `_`, starting with a letter or digit, at most 64 characters"
)


def _wording(kind: str, err: Any) -> str:
    """Plain wording for one pydantic error type; no pydantic phrasing reaches the user."""
    ctx = err.get("ctx", {}) or {}
    got = f" (got {_short(err.get('input'))})"
    value = err.get("input")
    if kind == "int_parsing" and isinstance(value, str) and _THOUSANDS.fullmatch(value.strip()):
        # `4k` could be 4,000 or 4,096 tokens: a spec says which (`--select length=4K` finds it in the grid)
        n = float(value.strip()[:-1])
        return f"expected a whole number of tokens{got}: write {n * 1000:,.0f} or {n * 1024:,.0f}".replace(",", "")
    if kind in _EXPECTED:
        return _EXPECTED[kind] + got
    if kind in _BOUNDS:
        name, text = _BOUNDS[kind]
        text = text.replace("entr(y/ies)", "entry" if ctx.get(name) == 1 else "entries")
        return text.format(ctx.get(name)) + got
    if kind == "string_pattern_mismatch":
        pattern = str(ctx.get("pattern", ""))
        return (SLUG_WORDING if "a-z0-9" in pattern else f"must match the pattern {pattern}") + got
    if kind == "union_tag_not_found":
        return f"a {str(ctx.get('discriminator', 'type')).strip(chr(39))!r} key is required to choose the kind"
    msg = str(err.get("msg", "invalid value"))
    msg = msg.replace("Input should be", "expected").replace("instance of ", "")
    return msg + got


def _shape_only(err: Any, path: KeyPath, others: list[tuple[Any, KeyPath]]) -> bool:
    """A 'wrong shape' error from one union branch while another branch reports a real problem."""
    if err["type"] == "literal_error":
        # e.g. `multi: [150]`: the "spread" branch fails too, but the list branch names the real problem
        return any(other is not err and len(p) > len(path) and p[: len(path)] == path for other, p in others)
    if err["type"] not in _SHAPE_ERRORS:
        return False
    return any(
        other is not err and other["type"] not in _SHAPE_ERRORS and other_path[: len(path)] == path
        for other, other_path in others
    )


def problems_from(error: ValidationError, doc: Document, schema: dict[str, Any], root: KeyPath = ()) -> list[Problem]:
    """Problems for every pydantic error, located in `doc` (under `root` for variant overrides)."""
    problems = []
    errors = error.errors(include_url=False)
    data = doc_data_at(doc, root)
    located = [(err, data_path(data, err["loc"], err["type"])) for err in errors]
    shapes: dict[KeyPath, list[str]] = {}
    for err, path in located:
        if err["type"] in _SHAPE_ERRORS and not _shape_only(err, path, located):
            shapes.setdefault(path, []).append(_EXPECTED.get(err["type"], "").removeprefix("expected "))
    for err, path in located:
        if _shape_only(err, path, located):
            continue
        if err["type"] in _SHAPE_ERRORS:
            if path not in shapes:
                continue  # already reported with the other union branches
            shape = " or ".join(dict.fromkeys(e for e in shapes.pop(path) if e)) or "another kind of value"
            location = doc.locate(root + path)
            problems.append(Problem(f"expected {shape} (got {_short(err.get('input'))})", location, dotted(path)))
            continue
        kind = err["type"]
        msg = err["msg"]
        hint = ""
        prefer_key = False
        if kind == "extra_forbidden":
            key = path[-1] if path else ""
            parent_data = doc_data_at(doc, root + path[:-1]) if path else {}
            picked = next(
                ((t, parent_data[t]) for t in ("type", "metric") if isinstance(parent_data, dict) and t in parent_data),
                None,
            )
            allowed = _schema_keys(schema, _clean(path[:-1]))
            if key not in allowed:  # a misspelling: the keys of the kind the mapping chose, or takes by default
                allowed = _schema_keys(schema, _clean(path[:-1]), picked, untagged=picked is None)
            msg = f"unknown key {key!r}"
            if key in allowed:
                # the key exists, but for another kind (e.g. another needle `type`) than the one chosen
                parent = doc_data_at(doc, root + path[:-1]) if path else {}
                parent = parent if isinstance(parent, dict) else {}
                tag = next((t for t in ("type", "metric") if t in parent), "type")  # what picks the kind
                chosen = parent.get(tag)
                msg = f"key {key!r} is not used by this kind" + (f" ({tag} {chosen!r})" if chosen else "")
                hint = f"It belongs to another kind; check the `{tag}` key or remove this key."
            else:
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
            if not hint:  # nothing close: perhaps a plugin's component, not installed (or turned off)
                hint = "A plugin's component is found once its package is installed (and NEEDLEC_PLUGINS is not 0)."
            tag_path = (*path, tag_key)
            if root + tag_path in doc.values:
                path = tag_path
        elif kind == "literal_error":
            expected = _QUOTED.findall(str(err.get("ctx", {}).get("expected", "")))
            msg = f"expected one of {', '.join(repr(e) for e in expected)}, got {err.get('input')!r}"
            hint = did_you_mean(str(err.get("input")), expected).lstrip("; ").capitalize()
        elif kind in ("value_error", "assertion_error"):
            msg = msg.removeprefix("Value error, ").removeprefix("Assertion failed, ")
            cause = (err.get("ctx") or {}).get("error")
            extra = getattr(cause, "key_path", ())
            if extra and path and path[-1] == extra[0]:
                extra = extra[1:]  # a field validator's location already names its field
            if extra and _exists(data, (*path, *extra)):
                path = (*path, *extra)
        else:
            msg = _wording(kind, err)
        location = doc.locate(root + path, prefer_key=prefer_key)
        problems.append(Problem(msg, location, dotted(path), hint))
    return problems


def _exists(data: Any, path: KeyPath) -> bool:
    node = data
    for part in path:
        if isinstance(node, dict) and part in node:  # noqa: SIM114  (two branches keep mypy narrowing)
            node = node[part]
        elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
            node = node[part]
        else:
            return False
    return True


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
