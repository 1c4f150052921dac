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
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np


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
    stream = names[ids].tolist()
    size, extra = divmod(n, parts)
    runs = np.full(parts, size, dtype=np.int64)
    runs[:extra] += 1
    source = _Runs(names, ids, runs)
    out: list[Lines] = []
    at = 0
    for k, step in enumerate(runs.tolist()):
        out.append(_RunLines("\n".join(stream[at : at + step]), source, k))
        at += step
    return out
