"""Mutations of the shipped specs for the fuzz tests: delete, retype, duplicate, rename keys, insert junk."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import yaml

SPECS = sorted((Path(__file__).resolve().parents[1] / "specs").glob("*.yaml"))
JUNK: list[Any] = [
    None,
    0,
    -1,
    10**12,
    1.5e308,
    "",
    "x" * 200,
    "../../evil",
    "/etc/passwd",
    [],
    {},
    [None],
    {"type": "nope"},
    True,
    "{{ 'a' * 99999999 }}",
    "{% for i in range(99999) %}{% endfor %}",
    "\u202e",
    [[[[[]]]]],
    {"a": {"b": {"c": {}}}},
    "*",
    "[",
    3.7,
]


def _junk(rng: random.Random) -> Any:
    import copy

    return copy.deepcopy(rng.choice(JUNK))  # a fresh copy: a shared list mutated later would become a cycle


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(node, dict):
        for key, value in node.items():
            out += _paths(value, (*prefix, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            out += _paths(value, (*prefix, i))
    return out


def _at(node: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        node = node[part]
    return node


def mutate(data: dict[str, Any], rng: random.Random, steps: int) -> dict[str, Any]:
    """Apply `steps` random mutations to a copy of `data`."""
    import copy

    data = copy.deepcopy(data)
    for _ in range(steps):
        paths = [p for p in _paths(data) if p]
        if not paths:
            break
        path = rng.choice(paths)
        parent = _at(data, path[:-1])
        key = path[-1]
        action = rng.choice(["delete", "retype", "duplicate", "rename", "junk", "junk"])
        if action == "delete":
            del parent[key]
        elif action == "retype":
            parent[key] = _junk(rng)
        elif action == "duplicate" and isinstance(parent, list):
            parent.insert(key, copy.deepcopy(parent[key]))
        elif action == "duplicate" and isinstance(parent, dict):
            parent[f"{key}_copy"] = copy.deepcopy(parent[key])
        elif action == "rename" and isinstance(parent, dict):
            parent[str(key)[::-1] or "x"] = parent.pop(key)
        else:
            target = _at(data, path)
            if isinstance(target, dict):
                target[rng.choice(["junk", "type", "metric", "extends", "variants"])] = _junk(rng)
            elif isinstance(target, list):
                target.append(_junk(rng))
            else:
                parent[key] = _junk(rng)
    return data


def mutated_text(rng: random.Random) -> str:
    """A mutated shipped spec as YAML text; sometimes with raw junk spliced into the text itself."""
    spec = rng.choice(SPECS)
    data = yaml.safe_load(spec.read_text(encoding="utf-8"))
    text = yaml.safe_dump(mutate(data, rng, rng.randint(1, 4)), allow_unicode=True, sort_keys=False)
    if rng.random() < 0.2:
        cut = rng.randrange(len(text) + 1)
        text = (
            text[:cut]
            + rng.choice(["\t", ": : :", "&a *a", "- [", "!!python/object:os.system {}", "\x00", "{{"])
            + text[cut:]
        )
    return text
