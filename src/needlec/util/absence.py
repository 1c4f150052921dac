"""Substring searches of one long text, most answered without a scan: a term holding a run of GRAM
characters that the text lacks cannot occur in it.

The text's runs are kept as 64-bit polynomial hashes of their code points, sorted (numpy), and built
once the text has been searched `BUILD_AFTER` times, so a text searched a few times costs no more than
before. Two runs with one hash can only make a term look as if it might occur; the text is then searched
as before. So `find` answers what `str.find` answers, and `lacks` is True only when the term is not in
the text.

Drawn names are the use: RULER's QA documents invent names that must not occur in the haystack, and
RAG-chunk contexts leave out every chunk that holds one. Invented names lack some five-character run
of an English haystack far more often than not, where each search would otherwise scan a megabyte.
"""

from __future__ import annotations

from typing import Any

GRAM = 5
"""Characters per run."""
BUILD_AFTER = 16
"""Searches of a text before its runs are worked out (a few-item compile never pays for them)."""
BLOCK = 1 << 20
"""Characters hashed at a time while building (bounds the memory the build takes)."""
_MULTIPLIER = 0x100000001B3
_MASK = (1 << 64) - 1

__all__ = ["BUILD_AFTER", "GRAM", "Absence"]


def _hash(codes: list[int]) -> int:
    """The hash of one run of code points, as `_hashes` works it out for every run of a text."""
    value = 0
    for code in codes:
        value = (value * _MULTIPLIER + code) & _MASK
    return value


def _hashes(text: str, block: int = BLOCK) -> Any:
    """The sorted distinct hashes of every run of GRAM characters of `text`, hashed `block` runs at a time."""
    import numpy as np

    found = []
    multiplier = np.uint64(_MULTIPLIER)
    for begin in range(0, max(1, len(text) - GRAM + 1), block):
        part = text[begin : begin + block + GRAM - 1]
        if len(part) < GRAM:
            break
        codes = np.frombuffer(part.encode("utf-32-le"), dtype=np.uint32).astype(np.uint64)
        runs = len(codes) - GRAM + 1
        value = np.zeros(runs, dtype=np.uint64)
        with np.errstate(over="ignore"):
            for offset in range(GRAM):
                value = value * multiplier + codes[offset : offset + runs]
        found.append(np.unique(value))
    if not found:
        return np.zeros(0, dtype=np.uint64)
    return np.unique(np.concatenate(found))


class Absence:
    """Searches of `text` (see the module): `find` and `in` as for the string, `lacks` for a quick proof."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._searches = 0
        self._runs: Any = None

    def lacks(self, term: str) -> bool:
        """True when `term` holds a run of GRAM characters that the text does not (so it is not in the text);
        False when it may occur. Before the runs are built (the first `BUILD_AFTER` asks), always False."""
        if len(term) < GRAM:
            return False
        if self._runs is None:
            self._searches += 1
            if self._searches <= BUILD_AFTER:
                return False
            self._runs = _hashes(self.text)
        import numpy as np

        codes = [ord(c) for c in term]
        wanted = np.array([_hash(codes[i : i + GRAM]) for i in range(len(codes) - GRAM + 1)], dtype=np.uint64)
        runs = self._runs
        at = np.searchsorted(runs, wanted)
        held = at < len(runs)
        held[held] = runs[at[held]] == wanted[held]
        return not bool(held.all())

    def find(self, term: str, start: int = 0, end: int | None = None) -> int:
        """`text.find(term, start, end)`, without the scan when the text lacks one of the term's runs."""
        if self.lacks(term):
            return -1
        return self.text.find(term, start, len(self.text) if end is None else end)

    def __contains__(self, term: str) -> bool:
        return self.find(term) >= 0
