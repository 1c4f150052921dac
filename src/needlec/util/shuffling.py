"""`shuffle`: `random.Random.shuffle` of a list, the same permutation and the same draws, at less cost.

`Random.shuffle` swaps item i with item `_randbelow(i + 1)` for i from the last down to 1, and
`_randbelow(n)` draws `getrandbits(n.bit_length())` until the value is below n. Each of those is a
Python call; here the loop reads `getrandbits` once and does the rest inline, which takes about a third
of the time for a few hundred items (the depths of CWE's 300 needles, every item). A generator whose
class is not `random.Random` itself (one that overrides `random` or `getrandbits`) is left to its own
`shuffle`.
"""

from __future__ import annotations

import random
from typing import Any


def shuffle(rng: random.Random, items: list[Any]) -> None:
    """`rng.shuffle(items)`: the same order, and `rng` left in the same state."""
    if type(rng) is not random.Random:
        rng.shuffle(items)
        return
    getrandbits = rng.getrandbits
    for i in range(len(items) - 1, 0, -1):
        n = i + 1
        bits = n.bit_length()
        j = getrandbits(bits)
        while j >= n:
            j = getrandbits(bits)
        items[i], items[j] = items[j], items[i]
