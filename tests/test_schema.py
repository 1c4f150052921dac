"""The committed JSON Schema matches the code, accepts every shipped spec, and documents every key."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from needlec.spec.loader import load_file, merge_documents
from needlec.spec.models import json_schema

ROOT = Path(__file__).resolve().parents[1]
SCHEMA_FILE = ROOT / "schema" / "spec.schema.json"
REGENERATE = "needlec schema -o schema/spec.schema.json"
SPEC_FILES = sorted(p for p in (ROOT / "specs").rglob("*") if p.suffix in {".yaml", ".yml", ".json"})


@pytest.fixture(scope="module")
def committed() -> dict[str, Any]:
    assert SCHEMA_FILE.is_file(), f"{SCHEMA_FILE.relative_to(ROOT)} is missing; create it with `{REGENERATE}`"
    return json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def validator(committed: dict[str, Any]) -> jsonschema.Draft202012Validator:
    jsonschema.Draft202012Validator.check_schema(committed)
    return jsonschema.Draft202012Validator(committed)


def test_committed_schema_matches_code(committed: dict[str, Any]) -> None:
    current = json.loads(json.dumps(json_schema()))
    assert committed == current, (
        f"schema/spec.schema.json is out of date with needlec.spec.models.json_schema(); "
        f"regenerate it with `{REGENERATE}` and commit the result"
    )


def test_schema_declares_draft_2020_12(committed: dict[str, Any]) -> None:
    assert committed["$schema"] == "https://json-schema.org/draft/2020-12/schema"


def _documents(path: Path) -> Iterator[tuple[str, Any]]:
    """The spec as the compiler validates it: `extends` resolved, then once per variant config."""
    doc = load_file(path)
    yield "base", doc.data
    axes = doc.data.get("variants") or {}
    for axis, values in axes.items():
        for value in values:
            merged = merge_documents(doc, doc, ("variants", axis, value))
            data = dict(merged.data)
            data["variants"] = {}
            yield f"variant {axis}={value}", data


def test_there_are_specs_to_check() -> None:
    assert SPEC_FILES, "specs/ holds no spec files"


@pytest.mark.parametrize("path", SPEC_FILES, ids=[p.name for p in SPEC_FILES])
def test_every_spec_validates_against_the_schema(path: Path, validator: jsonschema.Draft202012Validator) -> None:
    for label, data in _documents(path):
        errors = sorted(validator.iter_errors(data), key=lambda e: list(e.absolute_path))
        shown = "\n".join(f"  {'.'.join(map(str, e.absolute_path)) or '(top level)'}: {e.message}" for e in errors)
        assert not errors, f"{path.name} ({label}) does not validate against the schema:\n{shown}"


def test_schema_rejects_what_the_compiler_rejects(validator: jsonschema.Draft202012Validator) -> None:
    data = load_file(ROOT / "specs" / "niah.yaml").data
    assert validator.is_valid(data)
    bad = [
        {**data, "nmae": "typo"},
        {**data, "tokenizers": ["gpt2"]},
        {**data, "tokenizers": [{"encoding": "cl100k_base"}]},
        {**data, "placement": {"snap": "word"}},
        {**data, "scoring": {"metric": "bleu"}},
        {**data, "grid": {"lengths": {"min": 1000, "max": 2000}}},
        {k: v for k, v in data.items() if k != "prompt"},
    ]
    for spec in bad:
        assert not validator.is_valid(spec), f"the schema accepts an invalid spec: {spec}"


def _properties(node: Any, path: str) -> Iterator[tuple[str, Any]]:
    """Every (path, property schema) pair anywhere below `node`."""
    if isinstance(node, dict):
        for name, prop in (node.get("properties") or {}).items():
            yield f"{path}.properties.{name}", prop
        for key, value in node.items():
            yield from _properties(value, f"{path}.{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _properties(value, f"{path}[{i}]")


def test_every_property_has_a_description(committed: dict[str, Any]) -> None:
    found = list(_properties(committed, "#"))
    assert len(found) > 50, "the walk found too few properties; has the schema layout changed?"
    assert {"$defs", "properties"} <= set(committed)
    missing = [
        path for path, prop in found if not isinstance(prop.get("description"), str) or not prop["description"].strip()
    ]
    assert not missing, "properties without a description (add one to the Field):\n  " + "\n  ".join(missing)


def test_every_model_has_a_description(committed: dict[str, Any]) -> None:
    missing = [name for name, model in committed["$defs"].items() if not str(model.get("description", "")).strip()]
    assert not missing, f"models without a docstring: {missing}"
