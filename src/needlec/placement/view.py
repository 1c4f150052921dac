"""What an item's layout needs of one haystack for one tokenizer: its index, counter and lookups.

A view is prepared once per (haystack, tokenizer, longest length) by the compile and shared by every
item built over it (forked workers inherit it): the token index, the seam counter, the sentence
starts a window may open at, the passage table of a `passages`/`documents` haystack, its rankings,
and the occurrence lists of the leak check.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from typing import Any

from needlec.haystacks.index import HaystackIndex
from needlec.placement.engine import Counter

__all__ = ["HaystackView"]

_RUN = re.compile(r"[^\W_]+")
"""A maximal run of alphanumeric characters (what `str.isalnum` calls one), the unit of whole words."""


@dataclass
class HaystackView:
    """What an item needs of a haystack: its index for one tokenizer and where windows may start."""

    index: HaystackIndex
    counter: Counter
    starts: list[int]  # sentence starts in the first copy (for `start: random`)
    base_chars: int
    _occurrences: dict[str, list[int]] = field(default_factory=dict)
    _folded: str | None = None
    _asked: set[str] = field(default_factory=set)
    _words: dict[str, list[int]] | None = None  # folded alphanumeric run -> its start offsets (built on demand)
    passages: Any = None  # PassageTable of a `passages` haystack, built on first use
    rankers: dict[str, Any] = field(default_factory=dict)  # PassageRanker by rank settings (compile/ranking.py)

    def _folded_text(self) -> str:
        if self._folded is None:
            folded_text = self.index.text.lower()
            # lower() keeps offsets only if no character changes length; else match exactly
            self._folded = folded_text if len(folded_text) == len(self.index.text) else self.index.text
        return self._folded

    def _find(self, term: str, lo: int, hi: int) -> list[int]:
        """Start offsets of `term` as a whole word or phrase, in any letter case, inside [lo, hi)."""
        folded = self._folded_text()
        needle = term.lower() if folded is not self.index.text else term
        spots = []
        at = folded.find(needle, lo, hi)
        while at >= 0:
            end = at + len(needle)
            if (at == 0 or not folded[at - 1].isalnum()) and (end >= len(folded) or not folded[end].isalnum()):
                spots.append(at)
            at = folded.find(needle, at + 1, hi)
        return spots

    def _fresh_hit(self, term: str, start: int, end: int) -> bool:
        """Whether a term asked about once occurs in [start, end), without a scan of the haystack.

        A whole-word occurrence starts where an alphanumeric run of the text starts, so the term's first
        run is looked up in an index of the text's runs (built once per view, on the first such term)
        and each candidate is checked in place; terms the index cannot serve are searched in the window.
        """
        folded = self._folded_text()
        needle = term.lower() if folded is not self.index.text else term
        first = _RUN.match(needle)
        if first is None or not needle[:1].isalnum():
            return bool(self._find(term, start, end))
        if self._words is None:
            words: dict[str, list[int]] = {}
            for match in _RUN.finditer(folded):
                words.setdefault(match.group(), []).append(match.start())
            self._words = words
        spots = self._words.get(first.group(), [])
        i = bisect.bisect_left(spots, start)
        while i < len(spots) and spots[i] + len(needle) <= end:
            at = spots[i]
            after = at + len(needle)
            if folded.startswith(needle, at) and (after >= len(folded) or not folded[after].isalnum()):
                return True
            i += 1
        return False

    def occurrences(self, term: str) -> list[int]:
        """Start offsets of `term` as a whole word or phrase, in any letter case (cached)."""
        if term not in self._occurrences:
            self._occurrences[term] = self._find(term, 0, len(self.index.text))
        return self._occurrences[term]

    def leaks(self, terms: tuple[str, ...], start: int, end: int) -> list[str]:
        """Terms that occur in the haystack window [start, end) (needles are not part of it).

        A term asked about for the first time is searched in the window only (items of some families
        draw fresh values every time, and a whole-haystack scan per value would dominate their cost);
        a term asked again is searched once in the whole haystack and looked up from then on.
        """
        found = []
        for term in terms:
            if not term:
                continue
            if term in self._occurrences or term in self._asked:
                spots = self.occurrences(term)
                i = bisect.bisect_left(spots, start)
                hit = i < len(spots) and spots[i] + len(term) <= end
            else:
                self._asked.add(term)
                hit = self._fresh_hit(term, start, end)
            if hit:
                found.append(term)
        return found
