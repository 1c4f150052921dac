"""The spec field reference, generated from the JSON Schema and the pydantic models behind it.

Every field of every model gets a row with its type, default, description and an example. The
example is the schema's own when it has one, else a value from a shipped spec, else the default,
else a value built from the type, so the page can never fall behind the spec language.
"""

from __future__ import annotations

import hashlib
import json
import math
import types
import typing
from dataclasses import dataclass
from typing import Any

import yaml
from pydantic import BaseModel

from needlec.registry import ComponentField
from needlec.site.markdown import code, md_cell, table
from needlec.spec.models import Spec, json_schema

ROOT_PATH = "(top level)"
EXAMPLE_LIMIT = 110


@dataclass(frozen=True)
class FieldRow:
    model: str
    key: str
    type: str
    default: str
    description: str
    example: str


@dataclass(frozen=True)
class ModelSection:
    name: str
    description: str
    paths: tuple[str, ...]
    rows: tuple[FieldRow, ...]


def model_classes(root: type[BaseModel] = Spec) -> dict[str, type[BaseModel]]:
    """Every pydantic model reachable from `root` through field annotations, by class name."""
    found: dict[str, type[BaseModel]] = {}

    def visit(annotation: Any) -> None:
        if isinstance(annotation, ComponentField):  # a component mapping: every registered kind's model
            visit(annotation.full())
            return
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            if annotation.__name__ not in found:
                found[annotation.__name__] = annotation
                for info in annotation.model_fields.values():
                    visit(info.annotation)
                    for meta in info.metadata:
                        visit(meta)
            return
        for arg in typing.get_args(annotation):
            visit(arg)
        if isinstance(annotation, types.UnionType):
            for arg in annotation.__args__:
                visit(arg)

    visit(root)
    return found


def walk_models(schema: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    """(key path, model name, model schema) for every object model reachable from the top."""
    defs = schema.get("$defs", {})
    found: list[tuple[str, str, dict[str, Any]]] = []
    seen: set[tuple[str, str]] = set()

    def join(path: str, key: str) -> str:
        return key if path == ROOT_PATH else f"{path}.{key}"

    def walk(node: Any, path: str, name: str) -> None:
        if not isinstance(node, dict):
            return
        if "$ref" in node:
            ref = node["$ref"].split("/")[-1]
            if (path, ref) not in seen:
                seen.add((path, ref))
                walk(defs[ref], path, ref)
            return
        if "properties" in node:
            found.append((path, name, node))
            for key, prop in node["properties"].items():
                walk(prop, join(path, key), "")
        for key in ("anyOf", "oneOf", "allOf"):
            for sub in node.get(key, []):
                walk(sub, path, name)
        if isinstance(node.get("items"), dict):
            walk(node["items"], f"{path}[]", "")
        if isinstance(node.get("additionalProperties"), dict):
            walk(node["additionalProperties"], join(path, "<name>"), "")

    walk(schema, ROOT_PATH, "Spec")
    return found


def type_text(node: dict[str, Any]) -> str:
    """A readable type: links to other models, enums spelt out, bounds appended."""
    if "$ref" in node:
        name = node["$ref"].split("/")[-1]
        return f"[{name}](#{name.lower()})"
    if "const" in node:
        return code(json.dumps(node["const"]))
    if "enum" in node:
        return " or ".join(code(json.dumps(v)) for v in node["enum"])
    for key in ("anyOf", "oneOf"):
        if key in node:
            text = " or ".join(type_text(sub) for sub in node[key])
            if "discriminator" in node:
                text += f" (chosen by {code(node['discriminator']['propertyName'])})"
            return text
    kind = node.get("type")
    if kind == "array":
        items = node.get("items")
        text = f"list of {type_text(items)}" if isinstance(items, dict) and items else "list"
        if "minItems" in node:
            text += f", at least {node['minItems']}"
        return text
    if kind == "object":
        extra = node.get("additionalProperties")
        return f"mapping of string to {type_text(extra)}" if isinstance(extra, dict) and extra else "mapping"
    text = {"string": "string", "integer": "integer", "number": "number", "boolean": "boolean", "null": "null"}.get(
        str(kind), "any"
    )
    bounds = [
        f"≥ {node['minimum']}" if "minimum" in node else "",
        f"> {node['exclusiveMinimum']}" if "exclusiveMinimum" in node else "",
        f"≤ {node['maximum']}" if "maximum" in node else "",
        f"matching {code(node['pattern'])}" if "pattern" in node else "",
    ]
    return ", ".join([text, *(b for b in bounds if b)])


def _plain(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", exclude_defaults=False)
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def _yaml_value(key: str, value: Any) -> str:
    """`key: value` in YAML flow style, or with a JSON value where flow style would break lines."""
    text = yaml.safe_dump(
        {key: value}, default_flow_style=True, width=math.inf, allow_unicode=True, sort_keys=False
    ).strip()
    text = text[1:-1] if text.startswith("{") and text.endswith("}") else text
    if "\n" in text:
        text = f"{key}: {json.dumps(value, ensure_ascii=False)}"
    return text if len(text) <= EXAMPLE_LIMIT else text[: EXAMPLE_LIMIT - 1] + "…"


def _parents(document: Any, path: str) -> list[Any]:
    """The mappings at `path` in a spec document (lists: every entry; `<name>`: every value)."""
    parts = [] if path == ROOT_PATH else path.replace("[]", ".[]").split(".")
    nodes = [document]
    for part in parts:
        following = []
        for node in nodes:
            if part == "[]" and isinstance(node, list):
                following.extend(node)
            elif part == "<name>" and isinstance(node, dict):
                following.extend(node.values())
            elif isinstance(node, dict) and part in node:
                following.append(node[part])
        nodes = following
    return [n for n in nodes if isinstance(n, dict)]


def _is_this_model(node: dict[str, Any], model: dict[str, Any]) -> bool:
    """Whether a mapping is an instance of `model`, judged by its constant fields (`type: url`)."""
    for key, prop in model.get("properties", {}).items():
        if "const" in prop:
            value = node.get(key, prop.get("default"))
            if value != prop["const"]:
                return False
    return True


def _placeholder(node: dict[str, Any]) -> Any:
    for key in ("anyOf", "oneOf"):
        if key in node:
            options = [s for s in node[key] if s.get("type") != "null"]
            return _placeholder(options[0]) if options else None
    kind = node.get("type")
    if kind == "integer":
        return node.get("minimum", node.get("exclusiveMinimum", 0) + 1)
    if kind == "number":
        return float(node.get("minimum", 1.0))
    return {"boolean": True, "array": [], "object": {}}.get(str(kind), "text")


def example(model: dict[str, Any], key: str, path: str, documents: list[Any], default: Any) -> str:
    prop = model["properties"][key]
    if prop.get("examples"):
        return _yaml_value(key, prop["examples"][0])
    if "const" in prop:
        return _yaml_value(key, prop["const"])
    for document in documents:
        for node in _parents(document, path):
            if key in node and node[key] is not None and _is_this_model(node, model):
                return _yaml_value(key, node[key])
    if default is not None and default not in ("", [], {}):
        return _yaml_value(key, default)
    if "enum" in prop:
        return _yaml_value(key, prop["enum"][0])
    if prop.get("pattern") == "^[0-9a-f]{64}$":
        return _yaml_value(key, hashlib.sha256(b"").hexdigest())
    return _yaml_value(key, _placeholder(prop))


def sections(documents: list[Any]) -> list[ModelSection]:
    """The reference's sections, one per model, in the order the schema reaches them."""
    schema = json_schema()
    classes = model_classes()
    paths: dict[str, list[str]] = {}
    bodies: dict[str, dict[str, Any]] = {}
    for path, name, node in walk_models(schema):
        paths.setdefault(name, [])
        if path not in paths[name]:
            paths[name].append(path)
        bodies[name] = node
    out = []
    for name, node in bodies.items():
        cls = classes.get(name)
        required = set(node.get("required", []))
        rows = []
        for key, prop in node["properties"].items():
            info = cls.model_fields.get(key) if cls else None
            if "default" in prop:
                default_value = prop["default"]
            elif info is not None and not info.is_required():
                default_value = _plain(info.get_default(call_default_factory=True))
            else:
                default_value = None
            default = "required" if key in required else code(json.dumps(default_value, ensure_ascii=False))
            rows.append(
                FieldRow(
                    model=name,
                    key=key,
                    type=type_text(prop),
                    default=default,
                    description=str(prop.get("description", "")).strip(),
                    example=example(node, key, paths[name][0], documents, default_value),
                )
            )
        out.append(ModelSection(name, str(node.get("description", "")).strip(), tuple(paths[name]), tuple(rows)))
    return out


def render_reference(documents: list[Any]) -> str:
    lines = [
        "# Spec fields",
        "",
        "Every key of the spec language, generated from the models that validate specs (the same "
        "source as `needlec schema`). Each section is one mapping; **Paths** says where it appears "
        "(`[]`: each entry of a list, `<name>`: any key you choose). Examples come from the schema or "
        "the shipped specs. For explanations and longer examples, see the "
        "[spec language guide](../../reference/spec.md).",
        "",
    ]
    for section in sections(documents):
        lines += [f"## {section.name} {{#{section.name.lower()}}}", ""]
        if section.description:
            lines += [md_cell(section.description), ""]
        lines += ["**Paths:** " + ", ".join(code(p) for p in section.paths), ""]
        lines += ['<div class="needlec-fields" markdown>', ""]
        lines.append(
            table(
                ["Key", "Type", "Default", "Description", "Example"],
                [(code(r.key), r.type, r.default, md_cell(r.description), code(r.example)) for r in section.rows],
            )
        )
        lines += ["", "</div>", ""]
    return "\n".join(lines)
