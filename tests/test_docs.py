"""The user documentation covers the real spec language, the real CLI and the real item fields."""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from needlec.cli import build_parser
from needlec.site.reference import walk_models
from needlec.spec.models import Spec, json_schema

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "site" / "docs"
SPEC_MD = DOCS / "reference" / "spec.md"
CLI_MD = DOCS / "reference" / "cli.md"
CONCEPTS_MD = DOCS / "concepts.md"

ROOT_PATH = "(top level)"
PATH_MARKER = re.compile(r"^\*\*Path:\*\* `([^`]+)`\s*$", re.MULTILINE)


def _text(path: Path) -> str:
    assert path.is_file(), f"{path.relative_to(ROOT)} is missing"
    return path.read_text(encoding="utf-8")


def _squash(text: str) -> str:
    return " ".join(text.split())


# --- the spec reference ----------------------------------------------------------------------


def _models(schema: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    """(key path, model name, model schema) for every object model reachable from the top.

    Key paths use `[]` for list entries and `<name>` for keys the author chooses, as the
    reference's **Path:** lines do; the walk is the one the generated field reference uses.
    """
    return walk_models(schema)


def _sections(markdown: str) -> list[tuple[str, str]]:
    """(heading, body) for every heading of the page."""
    parts = re.split(r"^(#{1,6} .*)$", markdown, flags=re.MULTILINE)
    return [(parts[i].lstrip("#").strip(), parts[i + 1]) for i in range(1, len(parts) - 1, 2)]


def _rows(body: str) -> dict[str, list[str]]:
    """Table rows of a section whose first cell is a `key`: key -> all cells."""
    rows = {}
    for line in body.splitlines():
        match = re.match(r"^\| `([^`]+)` \|", line)
        if match:
            rows[match.group(1)] = [cell.strip() for cell in line.strip().strip("|").split("|")]
    return rows


@pytest.fixture(scope="module")
def spec_sections() -> list[tuple[str, list[str], dict[str, list[str]]]]:
    """(heading, paths from **Path:** lines, table rows) for each section of the reference."""
    return [(heading, PATH_MARKER.findall(body), _rows(body)) for heading, body in _sections(_text(SPEC_MD))]


def _default_forms(value: Any) -> set[str]:
    """Ways the default column may spell a schema default (backticks removed)."""
    if value is None:
        return {"null"}
    if isinstance(value, bool):
        return {"true" if value else "false"}
    if isinstance(value, float) and value.is_integer():
        return {str(int(value)), repr(value)}
    if isinstance(value, str):
        return {value, json.dumps(value)} if value else {json.dumps(value)}
    return {json.dumps(value), str(value)}


def test_the_schema_walk_reaches_every_model() -> None:
    reached = {name for _, name, _ in _models(json_schema())}
    assert set(json_schema()["$defs"]) | {"Spec"} == reached


def test_every_key_path_is_documented(spec_sections: list[tuple[str, list[str], dict[str, list[str]]]]) -> None:
    """Each model has a section with its **Path:** line and one table row per key."""
    missing = []
    for path, name, model in _models(json_schema()):
        keys = set(model["properties"])
        homes = [rows for _, paths, rows in spec_sections if path in paths and keys <= set(rows)]
        if not homes:
            missing.append(
                f"{name} at `{path}`: no section with '**Path:** `{path}`' and a table row for each of {sorted(keys)}"
            )
    assert not missing, "spec.md does not document:\n  " + "\n  ".join(missing)


def test_documented_defaults_match_the_schema(spec_sections: list[tuple[str, list[str], dict[str, list[str]]]]) -> None:
    problems = []
    for path, name, model in _models(json_schema()):
        required = set(model.get("required", []))
        keys = set(model["properties"])
        rows = next((rows for _, paths, rows in spec_sections if path in paths and keys <= set(rows)), None)
        if rows is None:
            continue  # reported by test_every_key_path_is_documented
        for key, prop in model["properties"].items():
            cells = rows[key]
            if len(cells) != 4:
                problems.append(f"{name}.{key}: expected 4 cells (key, type, default, description), got {cells}")
                continue
            default = cells[2].replace("`", "").strip()
            if not cells[3]:
                problems.append(f"{name}.{key}: empty description")
            if key in required:
                if default != "required":
                    problems.append(f"{name}.{key} is required but documented with default {cells[2]!r}")
            elif "default" in prop:
                forms = _default_forms(prop["default"])
                if not any(default == f or default.startswith(f + " ") for f in forms):
                    problems.append(f"{name}.{key}: default is {prop['default']!r}, documented {cells[2]!r}")
            elif default == "required":
                problems.append(f"{name}.{key} is optional but documented as required")
    assert not problems, "spec.md tables disagree with the schema:\n  " + "\n  ".join(problems)


def test_no_stale_keys_are_documented(spec_sections: list[tuple[str, list[str], dict[str, list[str]]]]) -> None:
    known: dict[str, set[str]] = {}
    for path, _, model in _models(json_schema()):
        known.setdefault(path, set()).update(model["properties"])
    stale = [
        f"{path}.{key} (section {heading!r})"
        for heading, paths, rows in spec_sections
        for path in paths
        for key in rows
        if key not in known.get(path, set())
    ]
    unknown_paths = [p for _, paths, _ in spec_sections for p in paths if p not in known]
    assert not stale and not unknown_paths, f"spec.md documents keys the schema lacks: {stale} {unknown_paths}"


def _merge(base: Any, over: Any) -> Any:
    """The spec language's merge: mappings merge, anything else replaces, `null` removes."""
    if isinstance(base, dict) and isinstance(over, dict):
        out = dict(base)
        for key, value in over.items():
            if value is None and key in out:
                del out[key]
            else:
                out[key] = _merge(out[key], value) if key in out else value
        return out
    return over


def test_yaml_examples_are_valid_specs() -> None:
    """Every YAML example of the reference, merged over a real spec, validates."""
    blocks = re.findall(r"```yaml\n(.*?)```", _text(SPEC_MD), flags=re.DOTALL)
    assert len(blocks) >= 15
    bases = {
        name: yaml.safe_load((ROOT / "specs" / f"{name}.yaml").read_text(encoding="utf-8"))
        for name in ("niah", "nolima", "needlebench/base", "atc/atc-v1-mc", "ruler")
    }
    kind_bases = {"latent_hop": "nolima", "needlebench": "needlebench/base", "atc": "atc/atc-v1-mc", "ruler": "ruler"}
    for block in blocks:
        example = yaml.safe_load(block)
        assert isinstance(example, dict), f"example is not a mapping:\n{block}"
        example.pop("extends", None)
        # an example of another needle kind is merged over the shipped spec that uses that kind
        needle = example.get("needle")
        kind = needle.get("type") if isinstance(needle, dict) else None
        base = bases[kind_bases.get(str(kind), "niah")]
        try:
            Spec.model_validate(_merge(base, example))
        except Exception as exc:
            pytest.fail(f"this example from spec.md is not a valid spec fragment:\n{block}\n{exc}")


# --- the CLI reference ------------------------------------------------------------------------


def _subcommands(parser: argparse.ArgumentParser, nested: bool = False) -> dict[str, argparse.ArgumentParser]:
    """Subcommands by name; nested ones (`site build`) too, named by their words joined with spaces."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            found = {}
            for name, sub in action.choices.items():
                found[name] = sub
                found.update({f"{name} {inner}": p for inner, p in _subcommands(sub, nested=True).items()})
            return found
    if nested:
        return {}
    raise AssertionError("the parser has no subcommands")


def _cli_sections() -> dict[str, str]:
    sections = {}
    for heading, body in _sections(_text(CLI_MD)):
        match = re.fullmatch(r"`?(needlec(?: [a-z]+)*)`?", heading)
        if match:
            sections[match.group(1)] = body
    return sections


def _long_options(parser: argparse.ArgumentParser) -> Iterator[tuple[str, argparse.Action]]:
    for action in parser._actions:
        for option in action.option_strings:
            if option.startswith("--"):
                yield option, action


def test_every_subcommand_and_option_is_documented() -> None:
    parser = build_parser()
    sections = _cli_sections()
    text = _text(CLI_MD)
    problems = []
    assert "needlec" in sections, "cli.md needs a section headed 'needlec' for the global options"
    for option, _ in _long_options(parser):
        if not re.search(rf"`{re.escape(option)}[` ]", sections["needlec"]):
            problems.append(f"global option {option}")
    for name, sub in _subcommands(parser).items():
        section = sections.get(f"needlec {name}")
        if section is None:
            problems.append(f"no section headed `needlec {name}`")
            continue
        if f"`needlec {name}`" not in text:
            problems.append(f"`needlec {name}` is never named in backticks")
        if _squash(sub.description or "") not in _squash(section):
            problems.append(f"needlec {name}: its description (--help) is not quoted")
        for action in sub._actions:
            if action.help and action.help != argparse.SUPPRESS and _squash(action.help) not in _squash(section):
                problems.append(f"needlec {name} {action.option_strings or action.metavar}: help text not quoted")
            if not action.option_strings and any(f"`{part}`" not in section for part in str(action.metavar).split("|")):
                problems.append(f"needlec {name}: positional {action.metavar} not documented")
        for option, _ in _long_options(sub):
            if not re.search(rf"`{re.escape(option)}[` ]", section):
                problems.append(f"needlec {name} {option}")
    assert not problems, "cli.md does not document:\n  " + "\n  ".join(problems)


def test_no_stale_options_are_documented() -> None:
    parser = build_parser()
    real = {option for option, _ in _long_options(parser)}
    for sub in _subcommands(parser).values():
        real.update(option for option, _ in _long_options(sub))
    mentioned = set(re.findall(r"(?<![\w-])--[a-z][a-z-]*", _text(CLI_MD)))
    assert mentioned <= real, f"cli.md mentions options that do not exist: {sorted(mentioned - real)}"


# --- the item schema in concepts.md -----------------------------------------------------------


def _field_paths(value: Any, prefix: str = "") -> Iterator[str]:
    if isinstance(value, dict):
        for key, child in value.items():
            path = f"{prefix}.{key}" if prefix else key
            yield path
            yield from _field_paths(child, path)
    elif isinstance(value, list):
        for child in value:
            if isinstance(child, dict):
                yield from _field_paths(child, f"{prefix}[]")


MAX_SAMPLED_CONFIGS = 30


@pytest.fixture(scope="module")
def sample_items(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    """One real item per config of every shipped spec, at the smallest length, built in memory."""
    from needlec.compile.pipeline import Prepared, build_one, haystack_ids
    from needlec.compile.plan import load_plan

    items = []
    cache = tmp_path_factory.mktemp("cache")  # shared: configs of one spec reuse sources and filter results
    for spec in sorted((ROOT / "specs").glob("*.yaml")):
        plan = load_plan(spec)
        prepared = Prepared(plan, cache)  # one per spec: its configs share haystacks and indexes
        # a spec with very many configs (mlneedle's language product) is sampled evenly: its configs differ
        # in languages, not in fields, and its pilot spec covers every kind of config in full
        step = -(-len(plan.configs) // MAX_SAMPLED_CONFIGS)
        for config in plan.configs[::step]:
            keys = list(plan.keys(config, haystack_ids(config.spec)))
            key = min(keys, key=lambda k: (k.length, k.depth))
            items.append(build_one(plan, config, key, prepared=prepared))
    return items


def test_every_item_field_is_documented(sample_items: list[dict[str, Any]]) -> None:
    text = _text(CONCEPTS_MD)
    fields = sorted({path for item in sample_items for path in _field_paths(item)})
    assert {"id", "needles[].depth_percent", "context_span.start", "haystack.sha256"} <= set(fields)
    missing = [f for f in fields if f"`{f}`" not in text]
    assert not missing, f"concepts.md does not document these item fields: {missing}"


def test_concepts_documents_no_stale_item_fields(sample_items: list[dict[str, Any]]) -> None:
    fields = {path for item in sample_items for path in _field_paths(item)}
    body = dict(_sections(_text(CONCEPTS_MD)))["The item schema"]
    documented = set(_rows(body))
    # optional fields a kind sets only for some families (options, group, ...) are checked against the model
    from needlec.dataset.item import Item

    known = fields | set(Item.model_fields)
    assert documented <= known, f"concepts.md lists item fields that items lack: {sorted(documented - known)}"
