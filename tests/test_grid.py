"""Grid expansion: length and depth ranges, spacing rules, and Kamradt's multi-needle spread."""

from __future__ import annotations

import itertools

import pytest
from conftest import SPECS
from pydantic import ValidationError

from needlec.compile.plan import load_plan
from needlec.spec.grid import DepthRange, Grid, LengthRange


def test_log_lengths_are_geometric() -> None:
    assert LengthRange(min=1000, max=128000, count=8, spacing="log").expand() == [
        1000,
        2000,
        4000,
        8000,
        16000,
        32000,
        64000,
        128000,
    ]


def test_linear_lengths_include_both_ends() -> None:
    assert LengthRange(min=1000, max=5000, count=5).expand() == [1000, 2000, 3000, 4000, 5000]


def test_sigmoid_depths_cluster_at_both_ends_in_order() -> None:
    points = DepthRange(start=0, stop=100, count=11, spacing="sigmoid").expand()
    assert points[0] == 0 and points[-1] == 100
    assert points == sorted(points)
    gaps = [b - a for a, b in itertools.pairwise(points)]
    assert gaps[0] < gaps[len(gaps) // 2] and gaps[-1] < gaps[len(gaps) // 2]
    assert max(abs(a - b) for a, b in zip(gaps, gaps[::-1], strict=True)) < 1e-3  # symmetric


def test_bad_ranges_are_rejected() -> None:
    with pytest.raises(ValidationError):
        LengthRange(min=5000, max=1000, count=3)
    with pytest.raises(ValidationError):
        Grid(lengths=[1000], depths=[120])
    with pytest.raises(ValidationError):
        Grid(lengths=[])


def test_kamradt_spread_for_multi_needles() -> None:
    plan = load_plan(SPECS / "niah.yaml")
    multi = plan.config("multi")
    assert multi.needle_depths(10.0, 3) == [10.0, 40.0, 70.0]
    assert multi.needle_depths(0.0, 3) == [0.0, 33.3333, 66.6667]
