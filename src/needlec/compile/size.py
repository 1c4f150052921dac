"""The size of a compile, computed from the plan by arithmetic alone (nothing is built or listed).

Every grid axis is filtered by `--select` on its own, so the item count is a product of axis
lengths and a grid of billions of cells is sized instantly. The default ceilings stop a spec
that would write far more than anyone meant; `--max-items` / `--max-bytes` raise them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from needlec.compile.plan import ConfigPlan, Plan
from needlec.errors import NeedlecError
from needlec.haystacks.builders import haystack_builder
from needlec.kinds.base import needle_kind
from needlec.spec.models import Spec

DEFAULT_MAX_ITEMS = 100_000
"""Items one compile may write unless `--max-items` says otherwise."""
DEFAULT_MAX_BYTES = 20 * 10**9
"""Estimated output bytes one compile may write unless `--max-bytes` says otherwise (20 GB)."""
BYTES_PER_TOKEN = 4.3
"""Estimated JSONL bytes per context token (the text, its escapes and the chat copy)."""
BYTES_PER_ITEM = 2000
"""Estimated JSONL bytes of an item's fields besides its context."""


def haystack_ids(spec: Spec) -> list[str]:
    """Haystack ids a spec's builder will produce (known without building them)."""
    return haystack_builder(spec.haystack.builder).haystack_ids()


@dataclass(frozen=True)
class Size:
    """Items, context tokens and estimated output bytes of a compile."""

    items: int
    tokens: int
    bytes: int


def _keep(values: list[str], select: dict[str, set[str]], key: str) -> int:
    return sum(1 for v in values if key not in select or v in select[key])


def config_size(config: ConfigPlan, select: dict[str, set[str]]) -> Size:
    """Size of one config after `--select`, by multiplying the filtered axis lengths."""
    spec = config.spec
    if "config" in select and config.name not in select["config"]:
        return Size(0, 0, 0)
    lengths = [n for n in spec.grid.length_points() if "length" not in select or str(n) in select["length"]]
    others = (
        _keep([t.label for t in spec.tokenizers], select, "tokenizer")
        * _keep([f"{d:g}" for d in config.depth_points()], select, "depth")
        * len(needle_kind(spec.needle).cases())
        * _keep(haystack_ids(spec), select, "haystack")
        * _keep([str(r) for r in range(spec.grid.repeats)], select, "repeat")
    )
    tokens = sum(lengths) * others
    items = len(lengths) * others
    return Size(items, tokens, math.ceil(tokens * BYTES_PER_TOKEN) + items * BYTES_PER_ITEM)


def plan_size(plan: Plan, select: dict[str, set[str]]) -> Size:
    """Size of the whole compile after `--select`."""
    sizes = [config_size(c, select) for c in plan.configs]
    return Size(sum(s.items for s in sizes), sum(s.tokens for s in sizes), sum(s.bytes for s in sizes))


def check_size(size: Size, max_items: int | None, max_bytes: int | None) -> None:
    """Refuse a compile above the ceilings (the defaults unless overridden), or one that selects nothing."""
    if size.items == 0:
        raise NeedlecError("--select matches no item; nothing would be compiled (check the values against `inspect`)")
    limit_items = DEFAULT_MAX_ITEMS if max_items is None else max_items
    limit_bytes = DEFAULT_MAX_BYTES if max_bytes is None else max_bytes
    if size.items > limit_items:
        raise NeedlecError(
            f"this compile would write {size.items:,} items; the limit is {limit_items:,}. "
            f"Pass --max-items {size.items} if you mean it, or narrow the grid / --select."
        )
    if size.bytes > limit_bytes:
        raise NeedlecError(
            f"this compile would write about {size.bytes / 1e9:,.1f} GB; the limit is {limit_bytes / 1e9:,.1f} GB. "
            f"Pass --max-bytes {size.bytes} if you mean it, or narrow the grid / --select."
        )
