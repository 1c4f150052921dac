"""`round_many`: Python's `round(x, digits)` of many floats at once, with the same results.

Python rounds a float to `digits` decimals exactly: the decimal value of the float, rounded half to even,
then the float nearest to that decimal. Scaling by 10**digits in floating point can land on the other side
of a half (0.12345 is stored a little below 0.12345, but its product with 10**4 rounds up to 1234.5), so
numpy's `round` differs from it now and then. Here the scaled values are rounded by numpy where the product
is clearly away from a half, which is exact: the product is within half a unit in its last place of the
true value, so both round to the same integer n, and n / 10**digits (an exact division, correctly rounded)
is the float nearest to the decimal n * 10**-digits, which is what Python returns. Values near a half, and
any that are not finite or too large for that margin, are rounded by Python itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

NEAR_HALF = 1e-6
"""How close to a half (in units of the last decimal kept) a scaled value must be to be left to Python."""

LARGEST = 1e9
"""Scaled values from this size on are left to Python (their last place is no longer far below the margin)."""


def round_many(values: Sequence[float] | np.ndarray, digits: int = 4) -> list[float]:
    """`[round(x, digits) for x in values]` for floats (a list, or a float64 array), worked out by numpy where that
    gives the same floats (an int comes back as a float)."""
    if len(values) < 32 or not 0 <= digits <= 8:
        listed = values.tolist() if not isinstance(values, Sequence) else values  # (an array's floats as Python's)
        return [round(x, digits) for x in listed]
    import numpy as np

    given = np.asarray(values, dtype=np.float64)
    scale = float(10**digits)
    with np.errstate(invalid="ignore", over="ignore"):
        scaled = given * scale
        whole = np.rint(scaled)
        risky = ~(np.abs(scaled) < LARGEST) | (np.abs(np.abs(scaled - whole) - 0.5) < NEAR_HALF)
    out: list[float] = (whole / scale).tolist()
    for i in np.flatnonzero(risky).tolist():
        out[i] = round(float(given[i]), digits)
    return out
