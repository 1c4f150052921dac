"""The size of a compile, computed from the plan by arithmetic alone (nothing is built or listed).

Every grid axis is filtered by `--select` on its own, so the item count is a product of axis
lengths and a grid of billions of cells is sized instantly. A compile is refused only when its
estimated output does not fit the free disk space (with a margin for the estimate's error and
the shards written on the way), or exceeds a ceiling the user set (`--max-items`, `--max-bytes`):
a whole shipped benchmark compiles with a plain command.
"""

from __future__ import annotations

import json
import math
import random
import shutil
from dataclasses import asdict, dataclass
from pathlib import Path

from needlec.compile.plan import ConfigPlan, Plan
from needlec.errors import NeedlecError
from needlec.haystacks.builders import haystack_builder
from needlec.kinds.base import needle_kind
from needlec.spec.models import Spec

DISK_MARGIN = 1.25
"""The estimate is multiplied by this before it is compared with the free space (estimates are within 20%)."""
DISK_RESERVE = 200 * 10**6
"""Bytes left free on the disk besides the compile's own (200 MB)."""
BYTES_PER_TOKEN = 4.3
"""Estimated JSONL bytes per context token (the text, its escapes and the chat copy)."""
BYTES_PER_ITEM = 1200
"""Estimated JSONL bytes of an item's fixed fields (id, seed, scoring, haystack, length records)."""
SAMPLE_CASES = 32
"""Cases drawn per config (spread over the case list) to measure what the needle kind adds to an item."""


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
    """Size of one config after `--select`, by multiplying the filtered axis lengths.

    Bytes per item: the fixed fields, what the needle kind's draws add (measured on a sample of
    drawn cases: needles, question, options, structure, values), and the context: its tokens at
    `BYTES_PER_TOKEN` where the length counts a haystack, or the needles' texts once more (the
    chat copy) where it counts the needles alone (ATC).
    """
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
    if items == 0:
        return Size(0, 0, 0)
    drawn, texts = draw_bytes(config)
    per_item = BYTES_PER_ITEM + drawn
    if spec.length.counted == "needles":
        per_item += 2 * texts  # the context is the needles: in the messages and the context record
        context = 0
    else:
        context = math.ceil(tokens * BYTES_PER_TOKEN)
    return Size(items, tokens, context + math.ceil(items * per_item))


def draw_bytes(config: ConfigPlan) -> tuple[float, float]:
    """Mean JSON bytes of a config's draws, and mean bytes of their texts (needles, distractors, question).

    Cases are drawn with fixed seeds, spread evenly over the case list, so the figure is the same
    on every run and follows cases that grow (ATC's chains of 2 to 512 steps).
    """
    kind = needle_kind(config.spec.needle)
    cases = kind.cases()
    if not cases:
        return 0.0, 0.0
    step = max(1, math.ceil(len(cases) / SAMPLE_CASES))
    picked = cases[::step]
    drawn = texts = 0
    count = 0
    for i, case in enumerate(picked):
        try:
            draw = kind.draw(case, random.Random(i))
        except NeedlecError:
            continue
        count += 1
        drawn += len(json.dumps(asdict(draw), ensure_ascii=False, default=str).encode("utf-8"))
        texts += sum(len(t.encode("utf-8")) for t in (*draw.needles, *draw.distractors, draw.question))
    return (drawn / count, texts / count) if count else (0.0, 0.0)


def plan_size(plan: Plan, select: dict[str, set[str]]) -> Size:
    """Size of the whole compile after `--select`."""
    sizes = [config_size(c, select) for c in plan.configs]
    return Size(sum(s.items for s in sizes), sum(s.tokens for s in sizes), sum(s.bytes for s in sizes))


def check_size(size: Size, max_items: int | None, max_bytes: int | None, target: Path | None = None) -> None:
    """Refuse a compile that selects nothing, exceeds a ceiling the user set, or does not fit the disk.

    `target` is the output folder; the free space is read on the nearest folder of it that exists.
    """
    if size.items == 0:
        raise NeedlecError("--select matches no item; nothing would be compiled (check the values against `inspect`)")
    if max_items is not None and size.items > max_items:
        raise NeedlecError(
            f"this compile would write {size.items:,} items; the limit you set (--max-items) is {max_items:,}. "
            "Raise it or narrow the grid / --select."
        )
    if max_bytes is not None and size.bytes > max_bytes:
        raise NeedlecError(
            f"this compile would write about {human_bytes(size.bytes)}; the limit you set (--max-bytes) is "
            f"{human_bytes(max_bytes)}. Raise it or narrow the grid / --select."
        )
    if target is None:
        return
    free = free_bytes(target)
    needed = math.ceil(size.bytes * DISK_MARGIN) + DISK_RESERVE
    if needed > free:
        raise NeedlecError(
            f"this compile would write about {human_bytes(size.bytes)} ({size.items:,} items), and the disk of "
            f"{target} has {human_bytes(free)} free; the limit is the free space less a margin "
            f"({DISK_MARGIN:g} x the estimate + {human_bytes(DISK_RESERVE)}). "
            "Free some space, write elsewhere with -o, or narrow the grid / --select."
        )


def free_bytes(target: Path) -> int:
    """Free bytes on the file system that would hold `target` (its nearest existing folder)."""
    folder = Path(target).expanduser().absolute()
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    return shutil.disk_usage(folder).free


def human_bytes(count: int) -> str:
    """A byte count for people: `31.2 MB`, `10.9 GB`, `1.2 TB`."""
    for unit, scale in (("TB", 10**12), ("GB", 10**9), ("MB", 10**6), ("kB", 10**3)):
        if count >= scale:
            return f"{count / scale:,.1f} {unit}"
    return f"{count} bytes"
