"""`needlec.util.shuffling` against the standard library's `random.Random` itself: `shuffle` against its
`shuffle`, `random_floats` against its `random`, and the depths drawn with them (`random_depths`) against the
depths drawn one call at a time."""

from __future__ import annotations

import random

import pytest

from needlec.compile import plan
from needlec.compile.plan import random_depths
from needlec.spec.models import RandomDepthsRule
from needlec.util.shuffling import random_floats, shuffle


@pytest.mark.parametrize("size", [0, 1, 2, 3, 7, 64, 255, 256, 257, 300, 1000, 5000])
def test_same_order_and_same_state_as_random_shuffle(size: int) -> None:
    for seed in range(25):
        ours, theirs = random.Random(seed), random.Random(seed)
        mine, stdlib = list(range(size)), list(range(size))
        shuffle(ours, mine)
        theirs.shuffle(stdlib)
        assert mine == stdlib
        assert ours.getstate() == theirs.getstate()  # the draws after it are the same too


def test_any_items_and_a_generator_drawn_from_before() -> None:
    ours, theirs = random.Random("needlec"), random.Random("needlec")
    for rng in (ours, theirs):
        rng.random()
        rng.getrandbits(77)
    mine = [("a", 1), None, 2.5, "b", ("a", 1)] * 40
    stdlib = list(mine)
    shuffle(ours, mine)
    theirs.shuffle(stdlib)
    assert mine == stdlib
    assert ours.random() == theirs.random()


class _Counted(random.Random):
    """A generator of another class (it counts its draws): left to its own `shuffle`."""

    calls = 0

    def random(self) -> float:
        self.calls += 1
        return super().random()


def test_another_generator_class_uses_its_own_shuffle() -> None:
    ours, theirs = _Counted(5), _Counted(5)
    mine, stdlib = list(range(50)), list(range(50))
    shuffle(ours, mine)
    theirs.shuffle(stdlib)
    assert mine == stdlib
    assert ours.getstate() == theirs.getstate()


@pytest.mark.parametrize("count", [0, 1, 2, 31, 32, 300, 1000])
def test_random_floats_are_the_floats_random_draws(count: int) -> None:
    for seed in range(10):
        ours, theirs = random.Random(seed), random.Random(seed)
        ours.getrandbits(13)
        theirs.getrandbits(13)
        floats = random_floats(ours, count)
        assert floats.tolist() == [theirs.random() for _ in range(count)]
        assert ours.getstate() == theirs.getstate()


@pytest.mark.parametrize(("count", "low", "high", "gap"), [(32, 0, 100, 0), (300, 0, 100, 0), (100, 5.5, 95, 0.25)])
def test_random_depths_with_numpy_are_those_of_the_loop(
    count: int, low: float, high: float, gap: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    rule = RandomDepthsRule(low=low, high=high, min_gap=gap)
    for seed in range(20):
        ours, theirs = random.Random(seed), random.Random(seed)
        vector = random_depths(rule, count, ours)
        with monkeypatch.context() as patched:
            patched.setattr(plan, "RANDOM_DEPTHS_VECTOR", 10**9)
            loop = random_depths(rule, count, theirs)
        assert vector == loop
        assert all(type(depth) is float for depth in vector)
        assert ours.getstate() == theirs.getstate()
