"""Helpers shared by the RULER generators: the error type, distinct draws, list joining, spaced depths."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from needlec.errors import NeedlecError

MAX_DRAW_ATTEMPTS = 10_000
"""Upper bound on rejected draws for one fresh value; reaching it means the space is too small."""


class RulerGenerationError(NeedlecError):
    """A RULER generator cannot satisfy its parameters (space of values too small, counts that tie...)."""


class DistinctPool:
    """Hands out strings that are distinct within one item (keys, values and names alike).

    RULER draws keys and values independently, so a distractor key can equal the queried key; every
    draw here goes through one pool, which rejects repeats and reports, instead of looping forever,
    when the space is exhausted.
    """

    def __init__(self, rng: random.Random, exclude: Sequence[str] = ()) -> None:
        self.rng = rng
        self.used: set[str] = set(exclude)

    def draw(self, make: Callable[[random.Random], str], what: str, accept: Callable[[str], bool] | None = None) -> str:
        """Draw with `make` until a string not used before (and passing `accept`) comes out.

        Bounded by MAX_DRAW_ATTEMPTS, after which a RulerGenerationError names what could not be drawn.
        """
        for _ in range(MAX_DRAW_ATTEMPTS):
            value = make(self.rng)
            if value not in self.used and (accept is None or accept(value)):
                self.used.add(value)
                return value
        raise RulerGenerationError(
            f"could not draw a fresh {what} after {MAX_DRAW_ATTEMPTS} attempts ({len(self.used)} already in use)"
        )


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
