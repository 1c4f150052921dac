"""Item and manifest schemas: committed files match the models, and compiled rows fit them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from needlec.dataset.item import ITEM_SCHEMA_VERSION, Item, item_json_schema
from needlec.dataset.manifest import Manifest, content_hash, manifest_json_schema, read_manifest
from needlec.errors import OutputError

ROOT = Path(__file__).resolve().parents[1]
SCHEMAS = {
    "item": (
        ROOT / "schema" / "item.schema.json",
        item_json_schema,
        "needlec schema --item -o schema/item.schema.json",
    ),
    "manifest": (
        ROOT / "schema" / "manifest.schema.json",
        manifest_json_schema,
        "needlec schema --manifest -o schema/manifest.schema.json",
    ),
}


def _committed(name: str) -> dict[str, Any]:
    path, _, command = SCHEMAS[name]
    assert path.is_file(), f"{path.relative_to(ROOT)} is missing; create it with `{command}`"
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_committed_schema_matches_the_model(name: str) -> None:
    _, build, command = SCHEMAS[name]
    committed = _committed(name)
    jsonschema.Draft202012Validator.check_schema(committed)
    assert committed == json.loads(json.dumps(build())), f"schema out of date; regenerate with `{command}`"


def _rows(folder: Path) -> list[dict[str, Any]]:
    rows = []
    for path in sorted((folder / "data").rglob("*.jsonl")):
        rows.extend(json.loads(line) for line in path.read_text(encoding="utf-8").splitlines())
    return rows


def test_every_compiled_row_fits_the_item_schema(small_niah: Path) -> None:
    validator = jsonschema.Draft202012Validator(_committed("item"))
    rows = _rows(small_niah)
    assert len(rows) == 2 * 3 * 3 * 11  # tokenizers x configs x lengths (selected) x depths
    for row in rows:
        errors = sorted(validator.iter_errors(row), key=str)
        assert not errors, f"{row['id']}: {errors[0].message} at {list(errors[0].absolute_path)}"
        Item.model_validate(row)  # the model agrees with the schema


def test_items_carry_the_flat_keys_of_schema_v2(small_niah: Path) -> None:
    by_config: dict[str, dict[str, Any]] = {}
    for row in _rows(small_niah):
        by_config.setdefault(row["config"], row)
    # facts and aliases, as written in specs/niah.yaml
    assert by_config["single"]["answers"] == [["yellow tram"]]
    assert by_config["multi"]["answers"] == [["roasted chestnuts"], ["smoked paprika"], ["heather honey"]]
    passkey = by_config["passkey"]
    assert passkey["answers"] == [[passkey["values"]["code"]]] and len(passkey["values"]["code"]) == 7
    for config, row in by_config.items():
        assert row["family"] == "niah" and row["task"] == config
        assert row["languages"] == {"needle": "en", "haystack": "en", "question": "en"}
        # versions as the scoring page defines them: contains/contains_all v2 (whole words), numeric v1
        assert row["scoring"]["version"] == {"contains": 2, "contains_all": 2, "numeric": 1}[row["scoring"]["metric"]]
        assert [n["role"] for n in row["needles"]] == ["target"] * len(row["answers"])
        assert [n["id"] for n in row["needles"]] == [f"n{i}" for i in range(len(row["needles"]))]
        assert "distractors" not in row


def test_manifest_fits_its_model_and_schema(small_niah: Path) -> None:
    manifest = read_manifest(small_niah)
    jsonschema.Draft202012Validator(_committed("manifest")).validate(manifest)
    model = Manifest.model_validate(manifest)
    assert model.item_schema_version == ITEM_SCHEMA_VERSION == 2
    assert content_hash(manifest) == manifest["content_hash"]


def test_read_manifest_reports_a_missing_or_broken_file(tmp_path: Path) -> None:
    with pytest.raises(OutputError, match=r"no manifest\.json"):
        read_manifest(tmp_path)
    (tmp_path / "manifest.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(OutputError, match="not valid JSON"):
        read_manifest(tmp_path)
