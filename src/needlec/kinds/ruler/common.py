"""Helpers shared by the RULER generators: the error type, distinct draws, list joining, spaced depths."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, TypeVar

from needlec.errors import NeedlecError
from needlec.util.absence import Absence
from needlec.util.shuffling import random_floats

if TYPE_CHECKING:
    import numpy as np

MAX_DRAW_ATTEMPTS = 10_000
"""Upper bound on rejected draws for one fresh value; reaching it means the space is too small."""


class RulerGenerationError(NeedlecError):
    """A RULER generator cannot satisfy its parameters (space of values too small, counts that tie...)."""


class Exclusion:
    """Strings no draw may use (e.g. every token of a haystack), prepared once for many draws: a set for
    exact lookups and one joined string for "is this inside any of them" checks (searched through
    `Absence`, so a drawn value that lacks one of its runs is answered without a scan)."""

    def __init__(self, words: Iterable[str]) -> None:
        self.words = frozenset(words)
        self.joined = "\n".join(sorted(self.words))
        self._search = Absence(self.joined)

    def __contains__(self, text: object) -> bool:
        return text in self.words

    def holds_inside(self, text: str) -> bool:
        """Whether `text` occurs inside (or equals) one of the strings."""
        return text in self._search


class DistinctPool:
    """Hands out strings that are distinct within one item (keys, values and names alike).

    RULER draws keys and values independently, so a distractor key can equal the queried key; every
    draw here goes through one pool, which rejects repeats and reports, instead of looping forever,
    when the space is exhausted.
    """

    def __init__(self, rng: random.Random, exclude: Sequence[str] | Exclusion = ()) -> None:
        self.rng = rng
        self.excluded = exclude if isinstance(exclude, Exclusion) else Exclusion(exclude)
        self.drawn: set[str] = set()

    @property
    def used(self) -> frozenset[str]:
        """Every string a draw may not repeat: the excluded ones and those drawn so far."""
        return self.excluded.words | self.drawn

    def holds_inside(self, text: str) -> bool:
        """Whether `text` occurs inside an excluded string or one drawn so far."""
        return self.excluded.holds_inside(text) or any(text in other for other in self.drawn)

    def draw(self, make: Callable[[random.Random], str], what: str, accept: Callable[[str], bool] | None = None) -> str:
        """Draw with `make` until a string not used before (and passing `accept`) comes out.

        Bounded by MAX_DRAW_ATTEMPTS, after which a RulerGenerationError names what could not be drawn.
        """
        excluded = self.excluded.words
        for _ in range(MAX_DRAW_ATTEMPTS):
            value = make(self.rng)
            if value not in self.drawn and value not in excluded and (accept is None or accept(value)):
                self.drawn.add(value)
                return value
        raise RulerGenerationError(
            f"could not draw a fresh {what} after {MAX_DRAW_ATTEMPTS} attempts "
            f"({len(self.drawn) + len(self.excluded.words)} already in use)"
        )

    def draw_all(self, make_many: Callable[[int], Sequence[str]], count: int, what: str) -> list[str]:
        """`count` strings, the ones `count` calls of `draw` would give when `make_many(n)` makes the next n
        candidates that n calls of `draw`'s `make` would (consuming the rng as they would): candidates are
        made in batches, the first of `count`, then one per candidate rejected so far.

        Bounded as `draw` is: MAX_DRAW_ATTEMPTS candidates in a row rejected raise a RulerGenerationError."""
        out: list[str] = []
        rejected = 0
        drawn, excluded, keep = self.drawn, self.excluded.words, out.append
        while len(out) < count:
            batch = make_many(count - len(out))
            fresh = set(batch)
            if len(fresh) == len(batch) and fresh.isdisjoint(drawn) and fresh.isdisjoint(excluded):
                drawn |= fresh  # none rejected (the usual case): the loop below would keep every one
                out += batch
                continue
            for value in batch:
                if value not in drawn and value not in excluded:
                    drawn.add(value)
                    keep(value)
                    rejected = 0
                    continue
                rejected += 1
                if rejected >= MAX_DRAW_ATTEMPTS:
                    raise RulerGenerationError(
                        f"could not draw a fresh {what} after {MAX_DRAW_ATTEMPTS} attempts "
                        f"({len(self.drawn) + len(self.excluded.words)} already in use)"
                    )
        return out


def random_letters(rng: random.Random, count: int, letters: str) -> str:
    """`count` characters of `letters`, those `rng.choices(letters, k=count)` draws, leaving the rng as it does:
    `choices` takes letters[floor(random() * len(letters))] (`random_floats`)."""
    if count <= 0:
        return ""
    import numpy as np

    picked = np.floor(random_floats(rng, count) * float(len(letters))).astype(np.intp)
    if letters.isascii():  # one byte a letter: the picked bytes are the text
        return np.frombuffer(letters.encode("ascii"), dtype=np.uint8)[picked].tobytes().decode("ascii")
    table = np.array(list(letters))
    return "".join(table[picked].tolist())


T = TypeVar("T")


def shuffled(rng: random.Random, items: Sequence[T]) -> list[T]:
    """`items` in a random order drawn from `rng` (`shuffle_order`). For long sequences: `random.shuffle`
    draws one number per item in Python, this one buffer, sorted by numpy."""
    import numpy as np

    picked = np.fromiter(items, dtype=object, count=len(items))  # the items as they are, tuples included
    return picked[shuffle_order(rng, len(items))].tolist()  # type: ignore[no-any-return]


def shuffle_order(rng: random.Random, count: int) -> np.ndarray:
    """A random order of `count` items drawn from `rng`, as the indexes of the items in it: the items sorted by
    64-bit keys from one `randbytes` call, read little-endian (ties, about one in 2^64 pairs, keep the earlier
    item first)."""
    import numpy as np

    return key_order(np.frombuffer(rng.randbytes(8 * count), dtype="<u8"))


SMALL_VALUE_BITS = 24
"""Bits of the largest value `shuffled_small` packs beside its random keys (the rest, at least 40, are random)."""


def shuffled_small(rng: random.Random, values: np.ndarray) -> np.ndarray:
    """`values` (non-negative integers, an FWE stream's ranks) in a random order drawn from `rng`, as an int64
    array. Each value is packed into the low bits of a 64-bit key from the raw stream of a PCG64 bit generator
    seeded from 128 bits of `rng` (the same bits in every numpy version, where the methods of
    `numpy.random.Generator`, its shuffle among them, may change), and the keys are sorted: equal keys hold equal
    values, so any correct sort gives the same result. Values of more than `SMALL_VALUE_BITS` bits are ordered
    by separate keys (`key_order`)."""
    import numpy as np

    keys = np.random.PCG64(rng.getrandbits(128)).random_raw(len(values))
    top = int(values.max()) if len(values) else 0
    if top < 0:
        raise ValueError("shuffled_small takes non-negative values")
    bits = max(1, top.bit_length())
    if bits > SMALL_VALUE_BITS:
        by_keys: np.ndarray = np.asarray(values, dtype=np.int64)[key_order(keys)]
        return by_keys
    low = np.uint64((1 << bits) - 1)
    # in place, in the one buffer of keys: each large temporary costs fresh pages and a pass over memory
    keys &= ~low
    values = np.asarray(values)
    keys |= values.view(np.uint64) if values.dtype == np.int64 else values.astype(np.uint64)
    keys.sort()
    keys &= low
    shuffled_values: np.ndarray = keys.view(np.int64)  # (values below 2^24: the same numbers)
    return shuffled_values


def key_order(keys: np.ndarray) -> np.ndarray:
    """The indexes of `keys` in ascending order, ties (about one in 2^64 pairs of random keys) with the earlier
    index first: the same order from any correct sort."""
    import numpy as np

    order = np.argsort(keys)  # a quicksort: the stable order wherever no two keys are equal
    ranked = keys[order]
    if len(keys) > 1 and bool((ranked[1:] == ranked[:-1]).any()):
        order = np.argsort(keys, kind="stable")  # equal keys: the earlier item first
    return order


def join_english(parts: Sequence[str], conjunction: str = "and") -> str:
    """Join as English prose: "A", "A and B", "A, B and C"."""
    if not parts:
        return ""
    if len(parts) == 1:
        return parts[0]
    return f"{', '.join(parts[:-1])} {conjunction} {parts[-1]}"


def spaced_depths(rng: random.Random, count: int, min_gap: float, low: float = 0.0, high: float = 100.0) -> list[float]:
    """Draw `count` sorted depths in [low, high], every two at least `min_gap` apart, uniformly.

    Placement rule "random per needle with minimum gap": draw `count` uniform points in the
    shortened interval [low, high - (count - 1) * min_gap], sort them and shift the i-th by
    i * min_gap. This is exact and needs no retry loop. Raises when the gaps do not fit.
    """
    if count <= 0:
        return []
    slack = (high - low) - (count - 1) * min_gap
    if min_gap < 0 or slack < 0:
        raise RulerGenerationError(
            f"{count} needles with a minimum gap of {min_gap} do not fit between depths {low} and {high}"
        )
    points = sorted(low + rng.random() * slack for _ in range(count))
    return [point + index * min_gap for index, point in enumerate(points)]
