"""`Lines` and `line_blocks`: blocks of lines written from a stream of word indexes, with their tallies."""

from __future__ import annotations

import pickle
from collections import Counter

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from needlec.util.lines import Lines, line_blocks, weighted_each


@given(
    words=st.lists(st.text("abcé.-字", min_size=1, max_size=5), min_size=1, max_size=8, unique=True),
    picks=st.lists(st.integers(0, 7), min_size=1, max_size=200),
    parts=st.integers(1, 30),
)
def test_blocks_are_the_stream_cut_into_runs_with_their_tallies(words: list[str], picks: list[int], parts: int) -> None:
    ids = np.array([p % len(words) for p in picks], dtype=np.int64)
    stream = [words[i] for i in ids]
    if parts > len(stream):
        with pytest.raises(ValueError, match="cannot make"):
            line_blocks(words, ids, parts)
        return
    blocks = line_blocks(words, ids, parts)
    sizes = [b.count("\n") + 1 for b in blocks]
    # runs in order, sizes differing by at most one, the longer ones first
    assert "\n".join(blocks) == "\n".join(stream)
    assert sum(sizes) == len(stream) and max(sizes) - min(sizes) <= 1 and sizes == sorted(sizes, reverse=True)
    at = 0
    for block, size in zip(blocks, sizes, strict=True):
        run = stream[at : at + size]
        at += size
        assert block == "\n".join(run)
        assert dict(zip(block.lines, block.counts, strict=True)) == Counter(run)
        assert list(block.lines) == [w for w in words if w in run]  # in the order of `words`
        assert Lines(str(block), block.lines, block.counts).consistent()  # the same tally, checked by hand


def test_a_block_pickles_as_a_lines_with_its_tally() -> None:
    block = line_blocks(["...", "qzvkel", "womtra"], np.array([0, 1, 0, 2, 0, 0]), 2)[1]
    back = pickle.loads(pickle.dumps(block))
    assert type(back) is Lines and back == block == "womtra\n...\n..."
    assert (list(back.lines), list(back.counts)) == (["...", "womtra"], [2, 1])


@pytest.mark.parametrize(
    ("lines", "counts", "fits"),
    [
        (["a", "bb"], [2, 1], True),
        (["bb", "a"], [1, 2], True),  # in any order
        (["a", "bb"], [1, 2], False),  # as many lines, too many characters
        (["a", "bb"], [3, 1], False),  # a line too many
        (["a\nb", "bb"], [1, 1], False),  # a line with a line break in it
        (["a"], [2, 1], False),  # lines and counts of different lengths
        (["ab", "b"], [2, 1], False),  # as many lines and characters, other lines
        (["a", "bb", "c"], [2, 1, 0], False),  # a line that is not there
        (["a", "a", "bb"], [1, 1, 1], False),  # a line listed twice
    ],
)
def test_a_tally_that_does_not_fit_its_text_is_found_out(lines: list[str], counts: list[int], fits: bool) -> None:
    assert Lines("a\nbb\na", lines, counts).consistent() is fits


@pytest.mark.parametrize(
    ("words", "ids", "message"),
    [(["a", "b"], [0, 2], "must lie in"), (["a", "b"], [0, -1], "must lie in"), (["a\nb", "c"], [0, 1], "line break")],
)
def test_blocks_refuse_indexes_outside_the_words_and_words_that_hold_a_line_break(
    words: list[str], ids: list[int], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        line_blocks(words, np.array(ids), 1)


@given(
    words=st.lists(st.text("abcé.-字", min_size=1, max_size=5), min_size=1, max_size=8, unique=True),
    picks=st.lists(st.integers(0, 7), min_size=1, max_size=200),
    parts=st.integers(1, 30),
)
def test_weights_of_blocks_are_their_lines_valued_and_counted(words: list[str], picks: list[int], parts: int) -> None:
    """`weighted` of a block (every block of a stream at once) is the sum over its lines, one by one, of the
    value of each; a negative value anywhere in the stream gives None for every block."""
    ids = np.array([p % len(words) for p in picks], dtype=np.int64)
    if parts > len(ids):
        return
    blocks = line_blocks(words, ids, parts)

    def length(line: str) -> int:
        return len(line) + 1

    def refuses_dots(line: str) -> int:
        return -1 if "." in line else 1

    for block in blocks:
        assert block.weighted(length) == sum(len(line) + 1 for line in block.split("\n"))
        # the same sums for a hand-made `Lines` of the block's text and tally
        assert Lines(str(block), block.lines, block.counts).weighted(length) == block.weighted(length)
    # another callable is valued anew, not answered from the sums kept for the first
    dotted = any("." in word for word in words)
    for block in blocks:
        assert block.weighted(refuses_dots) == (None if dotted else block.count("\n") + 1)
        assert block.weighted(length) == len(block) + 1


def test_weights_of_many_blocks_at_once_are_each_ones_own() -> None:
    """`weighted_each` over the blocks of two streams, a hand-made `Lines` and one whose tally does not fit its
    text: each stream's blocks valued as one by one (each line's length and line break, summed here from the
    text), the hand-made one too, and None for the one that does not fit."""
    first = line_blocks(["ab", "c", "..."], np.array([0, 1, 1, 2, 0, 2, 2, 1], dtype=np.int64), 3)
    second = line_blocks(["xyz", "字字"], np.array([1, 0, 0, 1, 1], dtype=np.int64), 2)
    made = Lines("q\nrr\nq", ["q", "rr"], [2, 1])
    wrong = Lines("q\nrr", ["q"], [2])
    texts = [second[1], first[0], made, first[2], wrong, second[0], first[1]]

    def length(line: str) -> int:
        return len(line) + 1

    expected: list[int | None] = [sum(len(line) + 1 for line in str(text).split("\n")) for text in texts]
    expected[4] = None
    assert weighted_each(texts, length) == expected
    assert weighted_each([], length) == []


def test_long_or_unusual_words_are_written_the_plain_way() -> None:
    # words too long for the numpy writer, and a NUL, take the join; the text is the same
    long = ["x" * 40, "...", "y" * 33]
    nul = ["a\0b", "..."]
    for words in (long, nul):
        ids = np.array([0, 1, 2 % len(words), 1, 0], dtype=np.int64)
        blocks = line_blocks(words, ids, 2)
        assert "\n".join(blocks) == "\n".join(words[i] for i in ids)


def test_sums_are_kept_for_one_callable_only() -> None:
    """The sums of a stream's blocks are kept per callable: the same object, or a method bound to the same object;
    callables that merely compare equal are valued anew."""

    class Valued:
        def __init__(self, value: int) -> None:
            self.value = value

        def __call__(self, line: str) -> int:
            return self.value

        def __eq__(self, other: object) -> bool:  # every one equal to every other
            return True

        __hash__ = object.__hash__

        def of(self, line: str) -> int:
            return self.value

    blocks = line_blocks(["...", "qzvkel"], np.array([0, 1, 0, 0, 1, 1], dtype=np.int64), 2)
    one, hundred = Valued(1), Valued(100)
    assert blocks[0].weighted(one) == 3 and blocks[0].weighted(hundred) == 300
    assert blocks[1].weighted(one.of) == 3 and blocks[1].weighted(one.of) == 3  # a method bound anew each time
    assert blocks[1].weighted(hundred.of) == 300
