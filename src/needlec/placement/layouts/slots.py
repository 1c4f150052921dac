"""How numbered documents are shown and where gold documents go: shared by `documents` and its chunks."""

from __future__ import annotations

import functools
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import overload

__all__ = ["DOCUMENT_JOINER", "DocumentLayout", "gold_slot", "gold_slots", "label_list", "labels_of"]

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
    return [first, *rng.sample(_Others(count, first), golds - 1)]


class _Others(Sequence[int]):
    """The slots `0` to `count - 1` but `first`, in order, without a list of them: `random.sample` reads only
    its length and the items it draws (a list would make one number per document shown, for one draw)."""

    def __init__(self, count: int, first: int) -> None:
        self.size, self.first = count, first

    def __len__(self) -> int:
        return max(0, self.size - 1)

    @overload
    def __getitem__(self, i: int) -> int: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[int]: ...
    def __getitem__(self, i: int | slice) -> int | Sequence[int]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        if not -len(self) <= i < len(self):
            raise IndexError(i)
        i %= len(self)
        return i if i < self.first else i + 1


def label_list(label: str, hi: int) -> list[str]:
    """The labels numbered 0 to at least `hi - 1`, as `labels_of` makes them (the same string objects): a list
    of a power of two of them, shared across items."""
    return _label_block(label, 1 << max(6, (hi - 1).bit_length()))


@functools.lru_cache(maxsize=16)
def _label_block(label: str, size: int) -> list[str]:
    formatted = labels_of(label)
    return [formatted(number) for number in range(size)]


@functools.lru_cache(maxsize=16)
def labels_of(label: str) -> Callable[[int], str]:
    """`label` formatted with a document number, one string per number (shared across items, so the
    seam counter's memo finds its count by a cached hash)."""

    @functools.lru_cache(maxsize=1 << 16)
    def formatted(number: int) -> str:
        return label.format(index=number)

    return formatted
