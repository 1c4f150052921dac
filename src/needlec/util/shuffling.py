"""`shuffle` and `random_floats`: `random.Random`'s shuffle and floats, the same values and draws, at less cost.

`Random.shuffle` swaps item i with item `_randbelow(i + 1)` for i from the last down to 1, and
`_randbelow(n)` draws `getrandbits(n.bit_length())` until the value is below n. Each of those is a
Python call; here the loop reads `getrandbits` once and does the rest inline, which takes about a third
of the time for a few hundred items (the depths of CWE's 300 needles, every item). A generator whose
class is not `random.Random` itself (one that overrides `random` or `getrandbits`) is left to its own
`shuffle`.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np


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


def random_floats(rng: random.Random, count: int) -> np.ndarray:
    """`[rng.random() for _ in range(count)]` as a float64 array, leaving `rng` as those calls do.

    `random()` is made of two 32-bit outputs of the generator, a >> 5 and b >> 6, as (a * 2**26 + b) / 2**53;
    `getrandbits(64 * count)` hands out the same outputs in the same order (its lowest 32 bits first), so the
    same floats are worked out here with numpy, each operation exact or rounded as in C."""
    import numpy as np

    if count <= 0:
        return np.zeros(0, dtype=np.float64)
    words = np.frombuffer(rng.getrandbits(64 * count).to_bytes(8 * count, "little"), dtype="<u4")
    high = (words[0::2] >> 5).astype(np.float64)
    low = (words[1::2] >> 6).astype(np.float64)
    floats: np.ndarray = (high * 67108864.0 + low) * (1.0 / 9007199254740992.0)
    return floats
