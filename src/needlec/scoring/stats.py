"""Means and confidence intervals: Wilson for 0/1 scores, a seeded bootstrap otherwise."""

from __future__ import annotations

import math
from collections.abc import Sequence

Z95 = 1.959963984540054
BOOTSTRAP_SEED = 20240601
BOOTSTRAP_RESAMPLES = 1000


def wilson(successes: float, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval of a proportion, as fractions in [0, 1]."""
    if n == 0:
        return (0.0, 0.0)
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def bootstrap(
    scores: Sequence[float], seed: int = BOOTSTRAP_SEED, resamples: int = BOOTSTRAP_RESAMPLES
) -> tuple[float, float]:
    """Percentile bootstrap 95% interval of the mean, from a fixed seed (deterministic)."""
    import numpy as np

    values = np.asarray(scores, dtype=float)
    if len(values) == 0:
        return (0.0, 0.0)
    rng = np.random.default_rng(seed)
    # Resampling n values with replacement only matters through how often each distinct value is
    # drawn: a multinomial draw over the distinct values gives the same distribution of means and
    # costs O(distinct values) per resample instead of O(n).
    distinct, counts = np.unique(values, return_counts=True)
    n = len(values)
    draws = rng.multinomial(n, counts / n, size=resamples)
    means = draws @ distinct / n
    lo, hi = np.percentile(means, [2.5, 97.5])
    return (float(lo), float(hi))


def summarize(scores: Sequence[float]) -> dict[str, object]:
    """`{"n", "mean", "ci95", "ci_method"}` with mean and interval in points (0-100), rounded to 4 places."""
    n = len(scores)
    if n == 0:
        return {"n": 0, "mean": None, "ci95": None, "ci_method": None}
    mean = sum(scores) / n
    if all(s in (0.0, 1.0) for s in scores):
        lo, hi = wilson(sum(scores), n)
        method = "wilson"
    else:
        lo, hi = bootstrap(scores)
        method = "bootstrap"
    return {"n": n, "mean": points(mean), "ci95": [points(lo), points(hi)], "ci_method": method}


def points(fraction: float) -> float:
    """A [0, 1] fraction as points on a 0-100 scale, rounded to 4 decimals (stable JSON)."""
    return round(100 * fraction, 4)


def least_squares_slope(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    """Slope of the least-squares line through (xs, ys); None with fewer than two distinct xs."""
    if len(set(xs)) < 2:
        return None
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True))
    return sxy / sxx
