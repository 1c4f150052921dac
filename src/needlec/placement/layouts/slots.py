"""How numbered documents are shown and where gold documents go: shared by `documents` and its chunks."""

from __future__ import annotations

import random
from dataclasses import dataclass

__all__ = ["DOCUMENT_JOINER", "DocumentLayout", "gold_slot", "gold_slots"]

DOCUMENT_JOINER = "\n\n"


@dataclass(frozen=True)
class DocumentLayout:
    """How an item's documents are shown: the label of document i and the first number."""

    label: str = "Document {index}:\n"
    index_base: int = 1
    filler: str = " ."


def gold_slot(depth: float, count: int) -> int:
    """Slot (0-based) of the first gold document among `count` documents for a grid depth 0-100."""
    return round(max(0.0, min(100.0, depth)) / 100.0 * (count - 1))


def gold_slots(depth: float, count: int, golds: int, rng: random.Random) -> list[int]:
    """Slots of `golds` gold documents: the first at the depth's slot, the others drawn from `rng`."""
    first = gold_slot(depth, count)
    others = [slot for slot in range(count) if slot != first]
    return [first, *rng.sample(others, golds - 1)]
