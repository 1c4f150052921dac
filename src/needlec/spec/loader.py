"""Load YAML/JSON spec files into plain data while remembering where every key and value sits.

Positions let validation errors point at `file:line:col`. Duplicate keys are errors (YAML would
silently keep the last one). `extends:` is resolved here: the parent is loaded first and the
child's keys are merged over it (mappings merge recursively, everything else is replaced, and
`key: null` removes an inherited key so its default applies).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from needlec.errors import Location, Problem, SpecError

KeyPath = tuple[str | int, ...]
MAX_EXTENDS_DEPTH = 16
MAX_SPEC_BYTES = 2_000_000
"""Largest spec file read (bytes); specs are short, anything bigger is a mistake or an attack."""
MAX_NESTING = 64
"""Deepest nesting of mappings and lists; also stops a recursive alias (`&a [*a]`)."""
MAX_NODES = 200_000
"""Most values a spec may expand to once aliases are resolved; stops "billion laughs" bombs."""
_STANDARD_TAGS: dict[type[yaml.Node], str] = {
    yaml.MappingNode: "tag:yaml.org,2002:map",
    yaml.SequenceNode: "tag:yaml.org,2002:seq",
}


@dataclass
class Document:
    """Plain data of a spec plus where each value and key came from."""

    data: dict[str, Any]
    values: dict[KeyPath, Location] = field(default_factory=dict)
    keys: dict[KeyPath, Location] = field(default_factory=dict)
    files: list[Path] = field(default_factory=list)

    def locate(self, path: KeyPath, prefer_key: bool = False) -> Location | None:
        """Best location for `path`: the exact node, else the nearest ancestor."""
        lookups = (self.keys, self.values) if prefer_key else (self.values, self.keys)
        probe = tuple(path)
        while True:
            for table in lookups:
                if probe in table:
                    return table[probe]
            if not probe:
                return None
            probe = probe[:-1]

    @property
    def sha256(self) -> str:
        """Hash over every file that makes up the document, in load order."""
        digest = hashlib.sha256()
        for path in self.files:
            digest.update(path.read_bytes())
        return digest.hexdigest()


def _loc(file: str, node: yaml.Node) -> Location:
    return Location(file, node.start_mark.line + 1, node.start_mark.column + 1)


class _Budget:
    """Counts values built so far, so alias expansion cannot grow without bound."""

    def __init__(self) -> None:
        self.nodes = 0


def _limit(message: str, file: str, node: yaml.Node, path: KeyPath, hint: str) -> SpecError:
    shown = _dotted(path[:4]) + ("..." if len(path) > 4 else "")
    return SpecError([Problem(message, _loc(file, node), shown, hint)])


def _build(
    node: yaml.Node,
    path: KeyPath,
    file: str,
    doc: Document,
    problems: list[Problem],
    constructor: yaml.constructor.SafeConstructor,
    budget: _Budget | None = None,
) -> Any:
    budget = budget or _Budget()
    budget.nodes += 1
    if budget.nodes > MAX_NODES:
        top = doc.keys.get(path[:1])  # the aliased node's own position is its anchor's; name the key being built
        if top is not None:
            raise SpecError(
                [
                    Problem(
                        f"the spec expands to more than {MAX_NODES:,} values (aliases expanded)",
                        top,
                        _dotted(path[:1]),
                        "An alias (*name) repeats its anchor's whole value; nested aliases multiply. "
                        "Write the values out.",
                    )
                ]
            )
        raise _limit(
            f"the spec expands to more than {MAX_NODES:,} values (aliases expanded)",
            file,
            node,
            path,
            "An alias (*name) repeats its anchor's whole value; nested aliases multiply. Write the values out.",
        )
    if len(path) > MAX_NESTING:
        raise _limit(
            f"nesting deeper than {MAX_NESTING} levels (or an alias that contains itself)",
            file,
            node,
            path,
            "Specs are shallow; flatten the structure or remove the self-referencing alias.",
        )
    doc.values[path] = _loc(file, node)
    expected_tag = _STANDARD_TAGS.get(type(node))
    if expected_tag is not None and node.tag != expected_tag:
        problems.append(
            Problem(
                f"tag {node.tag!r} is not allowed; specs hold plain mappings, lists and scalars",
                _loc(file, node),
                _dotted(path),
            )
        )
        return None
    if isinstance(node, yaml.MappingNode):
        out: dict[str, Any] = {}
        for key_node, value_node in node.value:
            key = constructor.construct_object(key_node, deep=True)
            if not isinstance(key, str):
                problems.append(
                    Problem(
                        f"keys must be strings, got {type(key).__name__} {key!r}", _loc(file, key_node), _dotted(path)
                    )
                )
                key = str(key)
            if isinstance(key, str) and _has_surrogate(key):
                problems.append(Problem("key contains an unpaired surrogate (\\ud800-\\udfff)", _loc(file, key_node)))
                key = key.encode("utf-8", "replace").decode("utf-8")
            if key in out:
                first = doc.keys.get((*path, key))
                where = f" (first defined at line {first.line})" if first else ""
                problems.append(Problem(f"duplicate key {key!r}{where}", _loc(file, key_node), _dotted((*path, key))))
                continue
            doc.keys[(*path, key)] = _loc(file, key_node)
            out[key] = _build(value_node, (*path, key), file, doc, problems, constructor, budget)
        return out
    if isinstance(node, yaml.SequenceNode):
        return [
            _build(child, (*path, i), file, doc, problems, constructor, budget) for i, child in enumerate(node.value)
        ]
    try:
        value = constructor.construct_object(node, deep=True)
    except ValueError:  # e.g. an integer of more digits than Python converts
        chars = len(str(getattr(node, "value", "")))
        problems.append(
            Problem(f"value of {chars:,} characters is not a usable number", _loc(file, node), _dotted(path))
        )
        return None
    if isinstance(value, str) and _has_surrogate(value):
        problems.append(
            Problem(
                "text contains an unpaired surrogate (\\ud800-\\udfff), which is not a character",
                _loc(file, node),
                _dotted(path),
                "Write the character itself, or a surrogate pair for characters beyond U+FFFF.",
            )
        )
    return value


def _has_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _check_shape(text: str, file: str, loader: Any = yaml.SafeLoader) -> None:
    """Reject too-deep nesting from the event stream (the parser is iterative; composing recurses)."""
    depth = 0
    for event in yaml.parse(text, Loader=loader):
        if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            depth += 1
            if depth > MAX_NESTING:
                mark = event.start_mark
                assert mark is not None  # the parser marks every event it emits
                raise SpecError(
                    [
                        Problem(
                            f"nesting deeper than {MAX_NESTING} levels",
                            Location(file, mark.line + 1, mark.column + 1),
                            hint="Specs are shallow; flatten the structure.",
                        )
                    ]
                )
        elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            depth -= 1


def _dotted(path: KeyPath) -> str:
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text


def dotted(path: KeyPath) -> str:
    """Render a key path the way errors show it: `grid.lengths[2]`."""
    return _dotted(path)


def _unreadable(exc: yaml.YAMLError | RecursionError, file: str) -> SpecError:
    """The report of a text the parser refused."""
    if isinstance(exc, RecursionError):
        return SpecError([Problem(f"nesting deeper than {MAX_NESTING} levels", Location(file, 1, 1))])
    if isinstance(exc, yaml.MarkedYAMLError):
        mark = exc.problem_mark or exc.context_mark
        problem = str(exc.problem or exc)
        hint = ""
        if exc.context_mark is not None and "end of stream" in problem and "quoted scalar" in str(exc.context):
            # an unclosed quote: the parser reads to the end of the file; where the quote opens is the place
            mark = exc.context_mark
            problem = "a quoted string opens here and is never closed (the file ends first)"
            hint = "Close the quote that opens here."
        elif "expected <block end>" in problem or "mapping values are not allowed" in problem:
            hint = (
                "Check the indentation here: a key that belongs to the mapping above must line up with its other "
                "keys, and a list item's keys with the first key after its `- `."
            )
        problem = problem.replace("but found '?'", "but found a key")  # (the parser's name for a key that starts)
        location = Location(file, mark.line + 1, mark.column + 1) if mark else Location(file)
        return SpecError([Problem(f"not valid YAML/JSON: {problem}", location, hint=hint)])
    return SpecError([Problem(f"not valid YAML/JSON: {exc}", Location(file))])


class _Refused(Exception):
    """The fast parser could not read the text: the pure-Python one reads it again for the report."""


def load_text(text: str, file: str) -> Document:
    """Parse one YAML or JSON text (JSON is read as YAML) into a Document, without `extends`.

    libyaml's parser (PyYAML's `CSafeLoader`, where PyYAML was built with it) reads the text about ten
    times faster; a text it refuses is read again by the pure-Python parser, whose error messages and
    positions are the ones users see.
    """
    fast = getattr(yaml, "CSafeLoader", None)
    if fast is not None:
        try:
            return _load_text(text, file, fast)
        except _Refused:
            pass
    return _load_text(text, file, yaml.SafeLoader)


def _load_text(text: str, file: str, parser: Any) -> Document:
    doc = Document(data={})
    problems: list[Problem] = []
    fast = parser is not yaml.SafeLoader
    try:
        _check_shape(text, file, parser)
        loader = parser(text)
        try:
            node = loader.get_single_node()
            if node is None:
                raise SpecError([Problem("the spec is empty", Location(file, 1, 1))])
            data = _build(node, (), file, doc, problems, loader)
        finally:
            loader.dispose()
    except UnicodeEncodeError:  # libyaml reads UTF-8 bytes: a lone surrogate does not make any
        if fast:
            raise _Refused from None
        raise
    except (yaml.YAMLError, RecursionError) as exc:
        if fast:
            raise _Refused from None
        raise _unreadable(exc, file) from None
    if problems:
        raise SpecError(problems)
    if not isinstance(data, dict):
        raise SpecError([Problem("the top level of a spec must be a mapping of keys", doc.values.get(()))])
    doc.data = data
    return doc


def load_file(path: str | Path, _chain: tuple[Path, ...] = ()) -> Document:
    """Load a spec file and resolve its `extends:` chain (paths are relative to the child)."""
    path = Path(path)
    display = str(path)
    try:
        if path.is_dir():
            raise SpecError([Problem("is a folder, not a spec file", Location(display))])
        size = path.stat().st_size
        if size > MAX_SPEC_BYTES:
            raise SpecError(
                [
                    Problem(
                        f"spec file is {size:,} bytes; the limit is {MAX_SPEC_BYTES:,}",
                        Location(display),
                        hint="Specs describe data, they do not contain it: put long texts in haystack files.",
                    )
                ]
            )
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SpecError([Problem("spec file not found", Location(display))]) from None
    except UnicodeDecodeError as exc:
        raise SpecError(
            [Problem(f"spec file is not UTF-8 ({exc.reason} at byte {exc.start})", Location(display))]
        ) from None
    except OSError as exc:
        raise SpecError([Problem(f"cannot read spec file: {exc.strerror}", Location(display))]) from None
    doc = load_text(text, display)
    doc.files = [path.resolve()]
    parent_ref = doc.data.pop("extends", None)
    if parent_ref is None:
        return doc
    where = doc.values.get(("extends",))
    if not isinstance(parent_ref, str):
        raise SpecError([Problem("`extends` must be a path to another spec file", where, "extends")])
    parent_path = (path.parent / parent_ref).resolve()
    if parent_path in _chain or parent_path == path.resolve() or len(_chain) > MAX_EXTENDS_DEPTH:
        raise SpecError([Problem(f"`extends` forms a cycle through {parent_ref}", where, "extends")])
    if parent_path.exists() and not parent_path.is_file():
        raise SpecError([Problem(f"`extends` must name a spec file; {parent_ref!r} is a folder", where, "extends")])
    if not parent_path.exists():
        raise SpecError(
            [Problem(f"extended spec {parent_ref!r} not found (looked at {parent_path})", where, "extends")]
        )
    parent = load_file(parent_path, (*_chain, path.resolve()))
    merged = merge_documents(parent, doc, ())
    merged.files = parent.files + doc.files
    return merged


def merge_documents(base: Document, over: Document, over_root: KeyPath) -> Document:
    """Merge `over` (its subtree at `over_root`) onto `base`; positions follow the winning value."""
    out = Document(data={}, values=dict(base.values), keys=dict(base.keys), files=list(base.files))
    source = over.data
    for part in over_root:
        source = source[part]  # type: ignore[index]

    def rebase(path: KeyPath) -> KeyPath:
        return path[len(over_root) :]

    def drop_subtree(prefix: KeyPath) -> None:
        for table in (out.values, out.keys):
            for key in [k for k in table if k[: len(prefix)] == prefix and len(k) > len(prefix)]:
                del table[key]

    def copy_positions(prefix: KeyPath) -> None:
        full = over_root + prefix
        for table_src, table_dst in ((over.values, out.values), (over.keys, out.keys)):
            for key, loc in table_src.items():
                if key[: len(full)] == full:
                    table_dst[rebase(key)] = loc

    def merge(a: Any, b: Any, prefix: KeyPath) -> Any:
        if isinstance(a, dict) and isinstance(b, dict):
            result = dict(a)
            for key, value in b.items():
                if value is None and key in a:
                    del result[key]  # `key: null` removes an inherited key (its default applies)
                    drop_subtree((*prefix, key))
                elif key in a:
                    result[key] = merge(a[key], value, (*prefix, key))
                else:
                    result[key] = value
                    copy_positions((*prefix, key))
            if (over_root + prefix) in over.values:
                out.values[prefix] = over.values[over_root + prefix]
            return result
        drop_subtree(prefix)
        copy_positions(prefix)
        return b

    out.data = merge(base.data, source, ())
    return out
