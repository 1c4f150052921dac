"""`round_many` against Python's own `round`, float for float."""

from __future__ import annotations

import math
import random
import warnings

from hypothesis import given
from hypothesis import strategies as st

from needlec.util.rounding import round_many


def _same(got: list[float], want: list[float]) -> bool:
    return all(math.copysign(1.0, g) == math.copysign(1.0, w) and g == w for g, w in zip(got, want, strict=True))


@given(st.lists(st.floats(allow_nan=False, allow_infinity=False, min_value=-1e12, max_value=1e12), min_size=40))
def test_any_floats_round_as_python_rounds_them(values: list[float]) -> None:
    assert _same(round_many(values), [round(x, 4) for x in values])


def test_halves_and_depths_round_as_python_rounds_them() -> None:
    rng = random.Random(7)
    # decimal halves at the fifth place (stored a little above or below), the percentages of token offsets
    # that depths are, and values near zero of both signs
    halves = [k / 10_000 + 0.00005 for k in range(-2000, 2000)]
    depths = [100.0 * t / total for total in (4093, 131_000) for t in rng.sample(range(total), 300)]
    tiny = [rng.uniform(-1e-4, 1e-4) for _ in range(300)]
    for values in (halves, depths, tiny, [0.12345] * 40, [2.675] * 40):
        for digits in (2, 4):
            assert _same(round_many(values, digits), [round(x, digits) for x in values])
    # short lists and other digit counts go to Python directly
    short = [0.00005, 0.00015, 0.00025, 2.67505]
    assert _same(round_many(short), [round(x, 4) for x in short])
    assert round_many([1.23456789] * 40, 10) == [round(1.23456789, 10)] * 40
    # infinities, a NaN and floats too large to scale are left to Python, without a warning
    odd = [math.inf, -math.inf, 1e305, -1e300, 123456.78905] * 8 + [math.nan]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = round_many(odd)
    assert math.isnan(got[-1]) and _same(got[:-1], [round(x, 4) for x in odd[:-1]])
