"""The release's dataset card and the checks the Hugging Face Hub applies to its configs.

The card keeps the metadata and prose `needlec compile` wrote, recomputes what depends on the
files (configs, size category), and is checked before anything is written: required metadata
present, split names the Hub accepts, and one uniform row schema per config.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import orjson
import yaml

from needlec.errors import OutputError, Problem
from needlec.exporters.hf import config_entries as card_configs
from needlec.exporters.hf import size_category

REQUIRED_METADATA = ("license", "language", "task_categories", "size_categories", "configs")
SPLIT_NAME = re.compile(r"^\w+(\.\w+)*$")
CONFIG_NAME = re.compile(r"^[\w][\w.-]*$")
SUMS = "SHA256SUMS"

Shape = Any  # "null" | "bool" | "int" | "float" | "str" | ["list", Shape] | {key: Shape}


def split_front_matter(text: str) -> tuple[dict[str, Any], str]:
    """The YAML metadata block of a card and the Markdown after it."""
    match = re.match(r"^---\n(.*?\n)---\n?", text, flags=re.DOTALL)
    if not match:
        return {}, text
    meta = yaml.safe_load(match.group(1)) or {}
    if not isinstance(meta, dict):
        raise OutputError("README.md: the YAML metadata block is not a mapping")
    return meta, text[match.end() :]


def config_entries(manifest: dict[str, Any], order: list[str] | None = None) -> list[dict[str, Any]]:
    """The card's `configs` list for a manifest (the same entries a compile writes), the configs in `order`
    (the compiled card's: the spec's, whose first is the default) where given; the manifest's keys are sorted."""
    configs = manifest["configs"]
    if order:
        names = [n for n in order if n in configs] + [n for n in configs if n not in order]
        configs = {name: configs[name] for name in names}
    return card_configs(configs)


def card_problems(meta: dict[str, Any]) -> list[str]:
    """What the Hub would reject or mis-read in the card's metadata."""
    problems = [f"README.md metadata lacks `{key}`" for key in REQUIRED_METADATA if not meta.get(key)]
    if not isinstance(meta.get("language", []), list) or not all(
        isinstance(x, str) and re.fullmatch(r"[a-z]{2,3}(-[A-Za-z0-9]+)*", x) for x in meta.get("language", [])
    ):
        problems.append("`language` must be a list of ISO 639 codes")
    license_id = meta.get("license", "")
    if not isinstance(license_id, str) or license_id != license_id.lower():
        problems.append(f"`license` must be a lower-case license id, got {license_id!r}")
    names = [c.get("config_name") for c in meta.get("configs") or []]
    if len(set(names)) != len(names):
        problems.append("config names must be unique")
    if sum(1 for c in meta.get("configs") or [] if c.get("default")) > 1:
        problems.append("at most one config may be the default")
    for config in meta.get("configs") or []:
        name = str(config.get("config_name", ""))
        if not CONFIG_NAME.match(name):
            problems.append(f"config name {name!r} is not accepted by the Hub")
        splits = [f.get("split", "") for f in config.get("data_files", [])]
        if len(set(splits)) != len(splits):
            problems.append(f"config {name}: split names repeat")
        problems += [
            f"config {name}: split name {s!r} must match {SPLIT_NAME.pattern} (letters, digits, _ "
            f"and dots); rename the tokenizer"
            for s in splits
            if not SPLIT_NAME.match(str(s))
        ]
    return problems


def release_card(readme: str, manifest: dict[str, Any]) -> str:
    """The card for a release: the compile's card with file-derived metadata refreshed and checked."""
    meta, body = split_front_matter(readme)
    rows = sum(f["rows"] for c in manifest["configs"].values() for f in c["files"])
    meta["size_categories"] = [size_category(rows)]
    shown = [str(c.get("config_name")) for c in meta.get("configs") or [] if isinstance(c, dict)]
    meta["configs"] = config_entries(manifest, shown)  # the compiled card's order, so its default stays
    problems = card_problems(meta)
    if problems:
        raise OutputError("the dataset card does not meet the Hub's rules:", [Problem(p) for p in problems])
    front = yaml.safe_dump(meta, sort_keys=False, allow_unicode=True)
    checks = (
        "\n## Verifying a copy\n\n"
        f"`{SUMS}` lists the sha256 of every file of this release (check it with `sha256sum -c "
        f"{SUMS}`), and `manifest.json` records the sha256, rows and bytes of every data file "
        "together with a content hash over all of them. `needlec verify DIR` checks a copy "
        "against both.\n"
    )
    return f"---\n{front}---\n{body.rstrip()}\n{checks}"


def partial_card(readme: str, held: list[str]) -> str:
    """A card for a copy of some configs only: its `configs` list keeps only `held`, so a loader that reads the
    card (`datasets.load_dataset`) looks for no file the copy does not have; the rest is as it was."""
    meta, body = split_front_matter(readme)
    if not meta:
        return readme
    meta["configs"] = [c for c in meta.get("configs") or [] if isinstance(c, dict) and c.get("config_name") in held]
    return f"---\n{yaml.safe_dump(meta, sort_keys=False, allow_unicode=True)}---\n{body}"


def _shape(value: Any) -> Shape:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "str"
    if isinstance(value, list):
        element: Shape = "null"
        for v in value:
            element = _merge(element, _shape(v), "[]")
        return ["list", element]
    return {k: _shape(v) for k, v in value.items()}


class ShapeConflict(Exception):
    pass


def _merge(a: Shape, b: Shape, path: str) -> Shape:
    """Two row shapes as one Arrow schema would hold them (nulls and missing keys fit anything)."""
    if a == b:
        return a
    if a == "null":
        return b
    if b == "null":
        return a
    if isinstance(a, str) and isinstance(b, str) and {a, b} == {"int", "float"}:
        return "float"
    if isinstance(a, list) and isinstance(b, list):
        return ["list", _merge(a[1], b[1], path + "[]")]
    if isinstance(a, dict) and isinstance(b, dict):
        return {
            k: _merge(a.get(k, "null"), b.get(k, "null"), f"{path}.{k}".lstrip(".")) for k in sorted(set(a) | set(b))
        }
    raise ShapeConflict(f"`{path or '(row)'}` is {_name(a)} in one row and {_name(b)} in another")


def _name(shape: Shape) -> str:
    return "a list" if isinstance(shape, list) else "an object" if isinstance(shape, dict) else shape


def _differences(a: Shape, b: Shape, path: str = "") -> list[str]:
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for key in sorted(set(a) | set(b)):
            sub = f"{path}.{key}".lstrip(".")
            if key not in a or key not in b:
                out.append(f"`{sub}` is missing from one split")
            else:
                out += _differences(a[key], b[key], sub)
        return out
    if isinstance(a, list) and isinstance(b, list):
        return _differences(a[1], b[1], path + "[]")
    return [] if a == b else [f"`{path}` is {_name(a)} in one split and {_name(b)} in another"]


def schema_problems(folder: Path, manifest: dict[str, Any]) -> list[str]:
    """One uniform schema per config: every split's rows must fit the same Arrow schema."""
    problems = []
    for name, info in manifest["configs"].items():
        shapes: dict[str, Shape] = {}
        for entry in info["files"]:
            shape: Shape = "null"
            try:
                with (folder / entry["path"]).open("rb") as handle:
                    for line in handle:
                        shape = _merge(shape, _shape(orjson.loads(line)), "")
            except ShapeConflict as exc:
                problems.append(f"config {name}, split {entry['split']}: {exc}")
                continue
            shapes[entry["split"]] = shape
        splits = list(shapes)
        for other in splits[1:]:
            problems += [
                f"config {name}: splits {splits[0]} and {other} differ: {d}"
                for d in _differences(shapes[splits[0]], shapes[other])
            ]
    return problems
