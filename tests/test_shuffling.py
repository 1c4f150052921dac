"""`needlec.util.shuffling.shuffle` against the standard library's `random.Random.shuffle` itself."""

from __future__ import annotations

import random

import pytest

from needlec.util.shuffling import shuffle


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
