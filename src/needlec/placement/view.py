"""What an item's layout needs of one haystack for one tokenizer: its index, counter and lookups.

A view is prepared once per (haystack, tokenizer, longest length) by the compile and shared by every
item built over it (forked workers inherit it): the token index, the seam counter, the sentence
starts a window may open at, the passage table of a `passages`/`documents` haystack, its rankings,
and the occurrence lists of the leak check.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from needlec.haystacks.index import HaystackIndex
from needlec.placement.engine import Counter

__all__ = ["HaystackView"]

_RUN = re.compile(r"[^\W_]+")
"""A run of letters and digits; the lookup checks every candidate by the word table's own rule."""
FEW_CANDIDATES = 256
"""A term asked again whose first run occurs at more places than this is searched for once in the whole
haystack (`HaystackView._fresh_hit`); below it, its places are checked each time."""
WINDOW_BUDGET = 2
"""How much of the folded haystack first asks may search, in windows, before the index of its runs is built
(`HaystackView._fresh_hit`), in lengths of the haystack: the index costs a pass over the whole haystack that
builds a list per word (about 2 s for RULER's 128K-token essays), which only many asks earn back, while a
search of a window is one `str.find` over it. A few items (`inspect`'s sample, a small selection, short
lengths) are done before the budget is spent; after it, every ask goes through the index, and a compile of
many items pays at most twice a plain search of the haystack more than it did. The answers are the same
either way."""


@dataclass
class HaystackView:
    """What an item needs of a haystack: its index for one tokenizer and where windows may start."""

    index: HaystackIndex
    counter: Counter
    starts: list[int]  # sentence starts in the first copy (for `start: random`)
    base_chars: int
    _occurrences: dict[str, list[int]] = field(default_factory=dict)
    _asked: set[str] = field(default_factory=set)
    _words: dict[str, list[int]] | None = None  # folded alphanumeric run -> its start offsets (built on demand)
    _spans: dict[str, tuple[list[int], list[int]]] = field(default_factory=dict)  # see `_fresh_hit`
    _folded: Any = None  # the haystack's FoldedText, looked up once per view
    _searched: int = 0  # characters of windows that first asks have searched (see `WINDOW_BUDGET`)
    passages: Any = None  # PassageTable of a `passages` haystack, built on first use
    rankers: dict[str, Any] = field(default_factory=dict)  # PassageRanker by rank settings (haystacks/ranking.py)
    chunks: dict[Any, Any] = field(default_factory=dict)  # ChunkTable by chunk size (placement/layouts/chunks.py)

    def _fresh_hit(self, term: str, start: int, end: int, again: bool = False) -> bool:
        """Whether a term occurs in [start, end), without a scan of the haystack where it can.

        The word table's rule (`languages/words.py`: a whole word where the script has spaces) means an
        occurrence of a term that starts with a word character of a spaced script starts where a run of
        such characters starts in the folded text; the term's first run is looked up in an index of those
        runs (built once per view, on the first such term) and each candidate is checked in place. Other
        terms (Chinese, Thai, punctuation first), and a term asked `again` whose first run is common (more
        than `FEW_CANDIDATES` places to check), are found by the full search, which is cached: a rare name
        drawn by item after item is checked at its few places on its first ask, and from its second on its
        places are kept (as spans in the original text) and looked up by bisection, never searched for in
        the whole haystack.
        """
        spans = self._spans.get(term)
        if spans is None:
            from needlec.languages.words import fold, is_unspaced, is_word_char

            needle = fold(term)
            first = _RUN.match(needle)
            if first is None or first.start() or is_unspaced(needle[0]) or not is_word_char(needle[0]):
                return self._window_hit(self.occurrences(term), term, start, end)
            if (
                self._words is None
                and not again
                and self._searched + end - start <= WINDOW_BUDGET * len(self.index.text)
            ):
                self._searched += end - start
                return self._window_search(needle, first.group(), start, end)
            if self._words is None:
                words: dict[str, list[int]] = {}
                for match in _RUN.finditer(self.folded().folded):
                    words.setdefault(match.group(), []).append(match.start())
                self._words = words
            candidates = self._words.get(first.group(), [])
            if not again:  # the first ask: the places in turn, until one lies in the window
                return any(start <= a and b <= end for a, b in self._places(needle, candidates))
            if len(candidates) > FEW_CANDIDATES:
                return self._window_hit(self.occurrences(term), term, start, end)
            places = list(self._places(needle, candidates))
            spans = self._spans[term] = ([a for a, _ in places], [b for _, b in places])
        # the spans grow together (the term's folded length is the same at every place), so the first one
        # from `start` on has the smallest end of those: the term lies within [start, end) iff that one does
        i = bisect.bisect_left(spans[0], start)
        return i < len(spans[0]) and spans[1][i] <= end

    def _window_search(self, needle: str, head: str, start: int, end: int) -> bool:
        """What a first ask through the run index answers (a place of the folded `needle` where a run equal to
        its first run, `head`, starts, whole there, within [start, end) of the original text), found by
        searching the window's stretch of the folded text instead."""
        text = self.folded()
        folded = text.folded
        hi = text.folded_at(end, after=True)
        at = folded.find(needle, text.folded_at(start), hi)
        while at >= 0:
            run = _RUN.match(folded, at)
            starts_run = at == 0 or _RUN.match(folded, at - 1, at) is None  # as `_RUN.finditer` finds runs
            is_candidate = starts_run and run is not None and run.group() == head  # a place the run index lists
            if is_candidate and any(start <= a and b <= end for a, b in self._places(needle, [at])):
                return True
            at = folded.find(needle, at + 1, hi)
        return False

    def _places(self, needle: str, candidates: list[int]) -> Iterator[tuple[int, int]]:
        """The spans in the original text of the candidates (run starts in the folded text) where the folded
        `needle` occurs as a whole word, in order."""
        from needlec.languages.words import _is_whole

        text = self.folded()
        for at in candidates:
            after = at + len(needle)
            if not text.folded.startswith(needle, at) or not _is_whole(text.folded, at, after, needle):
                continue
            a, b = text.original(at), text.original(after)
            if a is not None and b is not None:
                yield a, b

    def _window_hit(self, spots: list[int], term: str, start: int, end: int) -> bool:
        i = bisect.bisect_left(spots, start)
        return i < len(spots) and spots[i] + len(term) <= end

    def folded(self) -> Any:
        """The haystack's `FoldedText` (`languages/words.py`), kept on the view: the shared cache it comes
        from is keyed by the text, and another view's equal text (another task over the same haystack)
        is a different string object, so every lookup there would compare the whole text."""
        if self._folded is None:
            from needlec.languages.words import folded_text

            self._folded = folded_text(self.index.text)
        return self._folded

    def occurrences(self, term: str) -> list[int]:
        """Start offsets of `term` as a whole word or phrase (a substring in scripts without spaces),
        in any letter case and Unicode form (cached)."""
        if term not in self._occurrences:
            # the script-aware word table: whole words where the script has spaces, substrings in
            # Chinese or Thai, NFKC and case folding with offsets kept in the original text
            self._occurrences[term] = self.folded().starts(term)
        return self._occurrences[term]

    def leaks(self, terms: tuple[str, ...], start: int, end: int) -> list[str]:
        """Terms that occur in the haystack window [start, end) (needles are not part of it).

        A term is looked up without a whole-haystack search where `_fresh_hit` can (items of some
        families draw fresh values every time, and a scan per value would dominate their cost); one it
        cannot is searched once in the whole haystack and looked up from then on.
        """
        found = []
        for term in terms:
            if not term:
                continue
            if term in self._occurrences:
                hit = self._window_hit(self._occurrences[term], term, start, end)
            else:
                hit = self._fresh_hit(term, start, end, again=term in self._asked)
                self._asked.add(term)
            if hit:
                found.append(term)
        return found
