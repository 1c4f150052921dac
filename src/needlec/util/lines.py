"""`Lines`: a text of lines that knows its distinct lines and how often each occurs.

A needle kind that makes a long text out of a few distinct lines (RULER FWE's blocks of coded words)
knows their multiplicities from its own draw; handing them on as a `Lines` lets a token counter add up
per-line counts instead of splitting and tallying the text again. The runs `line_blocks` writes are
tallied by numpy from the stream their text was written from, and trusted; a tally given by hand is
checked against its text once (`Lines.consistent`: a split and a tally, what it would save), so a wrong
one is never used. A `Lines` is a `str` in every other respect: it compares, hashes, slices and
serialises as its text (and every `str` method returns a plain `str`).
"""

from __future__ import annotations

import itertools
import operator
from collections import Counter
from collections.abc import Callable, Sequence
from types import MethodType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

Many = Callable[[list[str]], list[int]]
"""The values of a list of lines at once (`Lines.weighted`'s `many`)."""


class Lines(str):
    """`text`, made of the lines `lines` (without line breaks), `counts[k]` times `lines[k]`, joined by line
    breaks in some order (no line break at the end). The two sequences are kept as given (not copied)."""

    _lines: Sequence[str]
    _counts: Sequence[int]
    _consistent: bool

    def __new__(cls, text: str, lines: Sequence[str], counts: Sequence[int]) -> Lines:
        made = str.__new__(cls, text)
        made._lines, made._counts = lines, counts
        return made

    def tally(self) -> tuple[Sequence[str], Sequence[int]]:
        """The distinct lines and their counts."""
        return self._lines, self._counts

    @property
    def lines(self) -> Sequence[str]:
        return self.tally()[0]

    @property
    def counts(self) -> Sequence[int]:
        return self.tally()[1]

    def weighted(self, value_of: Callable[[str], int], many: Many | None = None) -> int | None:
        """The sum of `value_of(line)` over the lines, each distinct line's value times its count (a line's
        token count with its line break makes the text's count); None where a value is negative (a line that
        cannot be counted so). `value_of` must give a line the same value at every call; `many`, where given,
        gives the values of a list of lines at once, each as `value_of` would (a token counter encodes them
        together)."""
        lines, counts = self.tally()
        values = many(list(lines)) if many is not None else list(map(value_of, lines))
        if any(value < 0 for value in values):
            return None
        total: int = sum(map(operator.mul, values, counts))
        return total

    def __reduce__(self) -> tuple[type[Lines], tuple[str, Sequence[str], Sequence[int]]]:
        return (Lines, (str(self), self.lines, self.counts))

    def consistent(self) -> bool:
        """Whether the lines and counts are this text's: its lines tallied, checked once (a `line_blocks` run's
        tally is made from the stream its text was written from, and is not checked)."""
        got = self.__dict__.get("_consistent")
        if got is None:
            lines, counts = self.tally()
            got = len(lines) == len(counts) == len(set(lines)) and all(n > 0 for n in counts)
            got = got and Counter(self.split("\n")) == dict(zip(lines, counts, strict=True))
            self._consistent = got
        return got


class _Runs:
    """The tallies of the runs of one stream (`line_blocks`), worked out for all runs when one is first read."""

    def __init__(self, names: np.ndarray, ids: np.ndarray, runs: np.ndarray) -> None:
        self.names, self.ids, self.runs = names, ids, runs
        self._tallies: list[tuple[list[str], list[int]]] | None = None
        self._weights: list[tuple[Callable[[str], int], list[int] | None]] = []  # `weighted`'s last few

    KEPT_WEIGHTS = 4
    """Sums kept for that many `value_of`s (a compile counts the blocks and judges them against the question
    with and without stemming, each asking for every block in turn)."""

    def weighted(self, value_of: Callable[[str], int], many: Many | None = None) -> list[int] | None:
        """`Lines.weighted` of every run at once: each word of the stream valued once (by `many` where given), the
        values summed over each run's lines by numpy. The sums are kept for the next calls with the same `value_of`
        (the same object, or a method bound to the same object: a counter asks for each run in turn with its own
        bound method, whose values never change for a line)."""
        for kept, sums in self._weights:
            if _same_callable(kept, value_of):
                return sums
        names = self.names.tolist()
        values = many(names) if many is not None else list(map(value_of, names))
        sums = None
        if all(value >= 0 for value in values):
            import numpy as np

            sums = np.add.reduceat(np.array(values, dtype=np.int64)[self.ids], _run_starts(self.runs)).tolist()
        self._weights = [(value_of, sums), *self._weights[: self.KEPT_WEIGHTS - 1]]
        return sums

    def tally(self, k: int) -> tuple[list[str], list[int]]:
        if self._tallies is None:
            import numpy as np

            parts, width = len(self.runs), len(self.names)
            tally = np.bincount(np.repeat(np.arange(parts) * width, self.runs) + self.ids, minlength=parts * width)
            present = np.flatnonzero(tally)  # run k's entries: k * width + the index of a word it holds
            lines = self.names[present % width].tolist()
            counts = tally[present].tolist()
            bounds = np.searchsorted(present, np.arange(parts + 1) * width).tolist()
            self._tallies = [(lines[lo:hi], counts[lo:hi]) for lo, hi in itertools.pairwise(bounds)]
        return self._tallies[k]


def _same_callable(a: Callable[[str], int], b: Callable[[str], int]) -> bool:
    """Whether `a` and `b` are one callable: the same object, or the same function bound to the same object (a
    bound method is made anew at each attribute lookup). A callable's own `__eq__` is not asked."""
    if a is b:
        return True
    if isinstance(a, MethodType) and isinstance(b, MethodType):
        return a.__self__ is b.__self__ and a.__func__ is b.__func__
    return False


class _RunLines(Lines):
    """A run of `line_blocks`: its tally read from the stream's `_Runs` when first needed."""

    _runs: _Runs
    _k: int

    def __new__(cls, text: str, runs: _Runs, k: int) -> _RunLines:
        made = str.__new__(cls, text)
        made._runs, made._k = runs, k
        return made

    def tally(self) -> tuple[Sequence[str], Sequence[int]]:
        return self._runs.tally(self._k)

    def consistent(self) -> bool:
        """True: the tally was made from the stream this text was written from."""
        return True

    def weighted(self, value_of: Callable[[str], int], many: Many | None = None) -> int | None:
        """`Lines.weighted`, from the sums of every run of the stream (`_Runs.weighted`), without a tally: a
        word the run lacks weighs nothing in its sum, but a negative value anywhere in the stream gives None."""
        sums = self._runs.weighted(value_of, many)
        return None if sums is None else sums[self._k]


def weighted_each(texts: Sequence[Lines], value_of: Callable[[str], int], many: Many | None = None) -> list[int | None]:
    """`text.weighted(value_of, many)` for each text, or None for one whose tally is not its text's
    (`Lines.consistent`). The runs of one stream (`line_blocks`) are read from its sums (`_Runs.weighted`), worked out
    once for all of them, without a call per run (FWE's hundred blocks an item)."""
    got: list[int | None] = []
    sums: list[int] | None = None
    source: _Runs | None = None
    for text in texts:
        if type(text) is _RunLines:
            if text._runs is not source:
                source = text._runs
                sums = source.weighted(value_of, many)
            got.append(None if sums is None else sums[text._k])
        else:
            got.append(text.weighted(value_of, many) if text.consistent() else None)
    return got


def line_blocks(words: Sequence[str], ids: np.ndarray, parts: int) -> list[Lines]:
    """The stream of `words[i]` for `i` in `ids`, cut into `parts` consecutive runs whose sizes differ by at
    most one (the longer ones first), each run written one word per line (its words joined by line breaks), as a
    `Lines` with the run's distinct words and their counts (in the order of `words`). The counts are tallied
    by numpy, for all runs at once, when one is first read (a short run may never need them)."""
    import numpy as np

    n = len(ids)
    if parts < 1 or n < parts:
        raise ValueError(f"{n} lines cannot make {parts} blocks")
    if n and (int(ids.min()) < 0 or int(ids.max()) >= len(words)):
        raise ValueError(f"word indexes must lie in [0, {len(words)})")
    if any("\n" in word for word in words):
        raise ValueError("a word holds a line break")
    names = np.array(words, dtype=object)
    size, extra = divmod(n, parts)
    runs = np.full(parts, size, dtype=np.int64)
    runs[:extra] += 1
    source = _Runs(names, ids, runs)
    written = _written_ascii(words, ids, runs)
    if written is not None:  # one buffer for the whole stream, each run a slice of it
        text, ends = written
        at = 0
        out: list[Lines] = []
        for k, end in enumerate(ends):
            out.append(_RunLines(text[at : end - 1], source, k))  # (without the line break after its last line)
            at = end
        return out
    stream = names[ids].tolist()
    out = []
    at = 0
    for k, step in enumerate(runs.tolist()):
        out.append(_RunLines("\n".join(stream[at : at + step]), source, k))
        at += step
    return out


WRITE_WIDTH = 32
"""The longest line (with its line break, in bytes) that `_written_ascii` writes through numpy."""


def _written_ascii(words: Sequence[str], ids: np.ndarray, runs: np.ndarray) -> tuple[str, list[int]] | None:
    """The stream of `words[i]` for `i` in `ids`, every word followed by a line break, written by numpy, and the
    character offset where each run ends (after its last line break); None where a word is not ASCII, holds a NUL
    or is longer than `WRITE_WIDTH` allows (the caller then joins the words in Python).

    Each word is a row of a byte table padded with NULs after its line break; the stream's rows are gathered and
    the padding dropped."""
    import numpy as np

    if not all(word.isascii() and "\0" not in word for word in words):
        return None
    width = -(-(max(map(len, words)) + 1) // 8) * 8  # rows of whole 8-byte words: gathered as integers
    if width > WRITE_WIDTH:
        return None
    table = b"".join((word + "\n").encode("ascii").ljust(width, b"\0") for word in words)
    rows = np.frombuffer(table, dtype=np.uint64).reshape(len(words), width // 8)[ids]
    text = rows.tobytes().translate(None, b"\0").decode("ascii")
    sizes = np.array([len(word) + 1 for word in words], dtype=np.int64)[ids]
    ends = np.cumsum(np.add.reduceat(sizes, _run_starts(runs))).tolist()
    return text, ends


def _run_starts(runs: np.ndarray) -> np.ndarray:
    """The index in the stream where each run begins, from the runs' sizes."""
    import numpy as np

    starts = np.zeros(len(runs), dtype=np.int64)
    np.cumsum(runs[:-1], out=starts[1:])
    return starts
