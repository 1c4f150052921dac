"""The one script-aware word table: word characters, unspaced scripts, folding, sentence ends, term search.

Leak checks, haystack filters, passage ranking, scoring and overlap all ask the same questions of
a text: is this character part of a word, does this script put spaces between words, do these two
spellings count as the same, where does a sentence end, and where does a term occur. They answer
them here, so that a Chinese leak the compile looks for is the one the scorer would see.

Rules:

* A *word character* is a letter, a combining mark (Devanagari and Arabic vowel signs belong to
  their word), a digit or `_`.
* Han (every CJK ideograph block, radicals, iteration marks), Hiragana, Katakana, Bopomofo, Thai,
  Lao, Khmer and Myanmar are written without spaces between words (*unspaced*). A term matches as a *whole word* when no
  character of a spaced script's word continues it on either side: the edge rule is checked per
  side, between the term's edge character and its neighbour in the text, and a side where either
  one is unspaced (or not a word character) needs no boundary. So 东京 is found in 我去过东京两次,
  1873 in 在1873年, but cat not in category.
* *Folding* is NFKC, then Unicode case folding, then NFKC again (case folding can produce
  characters NFKC changes, such as an `i` with a combining dot from `İ`); without case folding it
  is NFKC alone. `Straße` and `STRASSE` fold alike.
* Sentences end at `. ! ? …`, Hindi `। ॥` and Arabic `؟` followed by a space or the end (closing
  quotes and brackets belong to the sentence), and at `。！？` anywhere.

`FoldedText` folds a long text once and keeps a compact map from folded positions back to the
original, so that dozens of terms are each found with one C-level scan and every occurrence is
reported in the original text's offsets, even where folding changed the length (`ß` -> `ss`).
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import regex

__all__ = [
    "SENTENCE_END",
    "SENTENCE_ENDS",
    "SPACED_SENTENCE_ENDS",
    "UNSPACED_RANGES",
    "UNSPACED_SENTENCE_ENDS",
    "FoldedText",
    "contains_term",
    "find_term",
    "fold",
    "folded_text",
    "is_unspaced",
    "is_word_char",
    "joins",
    "term_regex",
    "unspaced_class",
    "word_token_regex",
]

UNSPACED_RANGES: tuple[tuple[int, int, str], ...] = (
    (0x0E00, 0x0E7F, "Thai"),
    (0x0E80, 0x0EFF, "Lao"),
    (0x1000, 0x109F, "Myanmar"),
    (0x1780, 0x17FF, "Khmer"),
    (0x19E0, 0x19FF, "Khmer symbols"),
    (0x2E80, 0x2FDF, "CJK radicals, Kangxi radicals"),
    (0x3000, 0x303F, "CJK symbols (iteration marks, ideographic zero)"),
    (0x3040, 0x309F, "Hiragana"),
    (0x30A0, 0x30FF, "Katakana"),
    (0x3100, 0x312F, "Bopomofo"),
    (0x31A0, 0x31BF, "Bopomofo extended"),
    (0x31F0, 0x31FF, "Katakana phonetic extensions"),
    (0x3400, 0x4DBF, "CJK extension A"),
    (0x4E00, 0x9FFF, "CJK unified ideographs"),
    (0xA9E0, 0xA9FF, "Myanmar extended B"),
    (0xAA60, 0xAA7F, "Myanmar extended A"),
    (0xF900, 0xFAFF, "CJK compatibility ideographs"),
    (0xFF66, 0xFF9F, "half-width Katakana"),
    (0x1B000, 0x1B2FF, "Kana supplement and extensions"),
    (0x20000, 0x3FFFF, "CJK extensions B and later"),
)
"""Code point ranges (inclusive) of scripts written without spaces between words."""

_UNSPACED_LOWS = [lo for lo, _, _ in UNSPACED_RANGES]

SPACED_SENTENCE_ENDS = ".!?…।॥؟"
"""Marks that end a sentence when a space or the end of the text follows (Latin, Hindi, Arabic)."""
UNSPACED_SENTENCE_ENDS = "。！？"
"""Marks that end a sentence wherever they stand (Chinese and Japanese)."""
SENTENCE_ENDS: dict[str, str] = {
    "Latin, Cyrillic, Greek": ".!?…",
    "Devanagari": "।॥",
    "Arabic": "؟",
    "Han, Kana": UNSPACED_SENTENCE_ENDS,
}
"""Sentence-ending marks per script (the union is what `SENTENCE_END` matches)."""
_CLOSERS_SPACED = "\"'”’»)\\]"
_CLOSERS_UNSPACED = "”’」』）)"
SENTENCE_END = re.compile(
    f"[{re.escape(SPACED_SENTENCE_ENDS)}][{_CLOSERS_SPACED}]*(?=\\s|$)"
    f"|[{re.escape(UNSPACED_SENTENCE_ENDS)}][{_CLOSERS_UNSPACED}]*"
)
"""A sentence's end mark with the closing quotes or brackets after it."""


@lru_cache(maxsize=16384)
def is_unspaced(ch: str) -> bool:
    """True for a character of a script written without spaces between words (Han, kana, Thai, ...)."""
    cp = ord(ch)
    i = bisect.bisect_right(_UNSPACED_LOWS, cp) - 1
    return i >= 0 and cp <= UNSPACED_RANGES[i][1]


@lru_cache(maxsize=16384)
def is_word_char(ch: str) -> bool:
    """Letters, combining marks, digits and `_`: the characters a word is made of."""
    return ch == "_" or unicodedata.category(ch)[0] in "LMN"


def joins(a: str, b: str) -> bool:
    """Whether characters `a` and `b`, side by side, belong to one word of a spaced script."""
    return is_word_char(a) and is_word_char(b) and not is_unspaced(a) and not is_unspaced(b)


def unspaced_class() -> str:
    """A regular-expression character class (brackets included) of every unspaced character."""
    parts = []
    for lo, hi, _ in UNSPACED_RANGES:
        parts.append(f"\\U{lo:08x}-\\U{hi:08x}")
    return "[" + "".join(parts) + "]"


@lru_cache(maxsize=1)
def _spaced_word_class() -> str:
    """A `regex` (V1) class of the word characters of spaced scripts."""
    return "[[\\p{L}\\p{M}\\p{N}_]--" + unspaced_class() + "]"


def term_regex(term: str, whole_word: bool = True) -> regex.Pattern[str]:
    """A compiled `regex` pattern that finds the already folded `term` in folded text by the
    module's rule: where the term's edge character is a word character of a spaced script, no such
    character may stand next to it; elsewhere (Chinese, Thai, punctuation) no boundary is needed."""
    import regex

    body = regex.escape(term)
    if whole_word and term:
        spaced = _spaced_word_class()
        if is_word_char(term[0]) and not is_unspaced(term[0]):
            body = f"(?<!{spaced})" + body
        if is_word_char(term[-1]) and not is_unspaced(term[-1]):
            body += f"(?!{spaced})"
    return regex.compile(body, regex.V1)


@lru_cache(maxsize=1)
def word_token_regex() -> regex.Pattern[str]:
    """Words as tokens: each word character of an unspaced script on its own, and runs of the word
    characters (letters, marks, digits) of spaced scripts."""
    import regex

    unspaced = unspaced_class()
    return regex.compile(
        f"[[\\p{{L}}\\p{{M}}\\p{{N}}]&&{unspaced}]|[[\\p{{L}}\\p{{M}}\\p{{N}}]--{unspaced}]+", regex.V1
    )


def fold(text: str, casefold: bool = True) -> str:
    """`text` in the form terms are compared in: NFKC and (by default) Unicode case folding."""
    text = unicodedata.normalize("NFKC", text)
    if not casefold:
        return text
    if text.isascii():
        return text.lower()
    return unicodedata.normalize("NFKC", text.casefold())


def _is_whole(folded: str, start: int, end: int, term: str) -> bool:
    """Whether `term` at [start, end) of `folded` is not continued by a spaced word on either side."""
    if start > 0 and joins(folded[start - 1], term[0]):
        return False
    return not (end < len(folded) and joins(term[-1], folded[end]))


def contains_term(folded: str, term: str, whole_word: bool = True) -> bool:
    """Whether the already folded `term` occurs in the already folded `folded` (see the module rules)."""
    return find_term(folded, term, whole_word) >= 0


def find_term(folded: str, term: str, whole_word: bool = True, start: int = 0) -> int:
    """Index of the first occurrence of the folded `term` in the folded text at or after `start`, or -1."""
    if not term:
        return -1
    at = folded.find(term, start)
    while at >= 0:
        if not whole_word or _is_whole(folded, at, at + len(term), term):
            return at
        at = folded.find(term, at + 1)
    return -1


# Characters that can combine with the character before them when normalised: combining marks and
# the Hangul jamo that compose into syllables (conjoining, compatibility and half-width forms).
# A piece of text never starts with one, so folding pieces one by one folds the whole text alike.
_JOINING = re.compile(r"[\uff9e\uff9f\u1100-\u11ff\u3130-\u318f\ua960-\ua97f\ud7b0-\ud7ff\uffa0-\uffdc]")
_PIECE = 4096  # characters per piece tried at once; a piece that does not fold one to one is halved


@lru_cache(maxsize=1)
def _joining_search() -> regex.Pattern[str]:
    """Finds a combining mark or a character of `_JOINING` (the `regex` module knows categories)."""
    import regex

    return regex.compile("[\\p{M}" + _JOINING.pattern[1:])


def _has_joining(text: str) -> bool:
    """Whether some character of `text` could combine with the one before it when normalised."""
    return _joining_search().search(text) is not None


def _starts_piece(text: str, i: int) -> bool:
    """Whether a piece may start at `i`: the character there cannot combine with the one before."""
    ch = text[i]
    return unicodedata.category(ch)[0] != "M" and not _JOINING.match(ch)


def _piece_end(text: str, start: int, end: int, want: int) -> int:
    """The first position at or after `want` (and before `end`) where a piece may start, else `end`."""
    i = min(max(want, start + 1), end)
    while i < end and not _starts_piece(text, i):
        i += 1
    return i


class FoldedText:
    """A text folded once (NFKC, and case folding unless `casefold` is off), searchable for terms.

    The folded text is made of *segments*: runs that fold one character to one character (their
    offsets map linearly) and *units*, single characters or clusters (a letter and its combining
    marks) whose folded form has another length (`ß` -> `ss`, `ﬁ` -> `fi`). An occurrence must
    start and end on a unit's edge, so every reported span of the original folds to the term.
    """

    def __init__(self, text: str, casefold: bool = True) -> None:
        self.text = text
        self.casefold = casefold
        self._seg_folded: list[int] = []  # folded start of each segment
        self._seg_original: list[int] = []  # original start of each segment
        self._seg_linear: list[bool] = []  # one to one (True) or a unit (False)
        parts: list[str] = []
        self._length = 0
        if text.isascii():
            parts.append(text.lower() if casefold else text)
            self._add(0, len(text), len(text), True)
        else:
            self._fold_range(0, len(text), parts)
        self.folded = "".join(parts)
        self._cache: dict[tuple[str, bool], list[tuple[int, int]]] = {}

    def _add(self, original: int, original_len: int, folded_len: int, linear: bool) -> None:
        """Append a segment, merging it into the previous one when both are linear."""
        if linear and self._seg_linear and self._seg_linear[-1]:
            self._length += folded_len
            return
        self._seg_folded.append(self._length)
        self._seg_original.append(original)
        self._seg_linear.append(linear)
        self._length += folded_len

    def _fold_range(self, start: int, end: int, parts: list[str]) -> None:
        """Fold text[start:end] in pieces that begin where no character combines with the previous one."""
        text = self.text
        pos = start
        while pos < end:
            stop = _piece_end(text, pos, end, pos + _PIECE)
            self._fold_piece(pos, stop, parts)
            pos = stop

    def _fold_piece(self, start: int, end: int, parts: list[str]) -> None:
        """Fold one piece: as one linear segment when it folds one to one, else by halves down to units."""
        piece = self.text[start:end]
        out = self._one_to_one(piece)
        if out is not None:
            parts.append(out)
            self._add(start, end - start, len(out), True)
            return
        middle = _piece_end(self.text, start, end, start + (end - start) // 2)
        if middle >= end:  # a single cluster: one unit
            out = fold(piece, self.casefold)
            parts.append(out)
            self._add(start, end - start, len(out), len(out) == 1 and end - start == 1)
            return
        self._fold_piece(start, middle, parts)
        self._fold_piece(middle, end, parts)

    def _one_to_one(self, piece: str) -> str | None:
        """The folded piece when folding maps each character to exactly one character, else None.

        Without combining marks or jamo nothing composes across characters, so NFKC maps each
        character on its own to one or more characters, and an unchanged length means one each
        (full-width punctuation in Chinese text, `，` -> `,`); case folding works character by
        character too. A piece with marks must already be in NFKC (as most text is)."""
        nfkc = piece
        if not unicodedata.is_normalized("NFKC", piece):
            if _has_joining(piece):
                return None
            nfkc = unicodedata.normalize("NFKC", piece)
            if len(nfkc) != len(piece):
                return None
        if not self.casefold:
            return nfkc
        out = nfkc.casefold()
        if len(out) != len(nfkc):
            return None
        if unicodedata.is_normalized("NFKC", out):
            return out
        if _has_joining(out):
            return None
        again = unicodedata.normalize("NFKC", out)
        return again if len(again) == len(out) else None

    def original(self, position: int) -> int | None:
        """The original offset of folded `position` (a start or an end), or None inside a unit."""
        if position >= self._length:
            return len(self.text) if position == self._length else None
        k = bisect.bisect_right(self._seg_folded, position) - 1
        offset = position - self._seg_folded[k]
        if offset == 0:
            return self._seg_original[k]
        return self._seg_original[k] + offset if self._seg_linear[k] else None

    def folded_at(self, position: int, after: bool = False) -> int:
        """The folded offset of original `position`: inside a unit, the unit's folded start, or with `after`
        its folded end; so every occurrence whose original span starts at or after `position` starts at or
        after `folded_at(position)`, and every one that ends at or before it ends at or before
        `folded_at(position, after=True)`."""
        if position >= len(self.text):
            return self._length
        k = bisect.bisect_right(self._seg_original, position) - 1
        if k < 0:
            return 0
        offset = position - self._seg_original[k]
        if self._seg_linear[k] or offset == 0:
            return self._seg_folded[k] + offset
        if not after:
            return self._seg_folded[k]
        return self._seg_folded[k + 1] if k + 1 < len(self._seg_folded) else self._length

    def find(self, term: str, whole_word: bool = True) -> list[tuple[int, int]]:
        """Every occurrence of `term` (folded here) as (start, end) in the original text, in order.

        Whole-word where the script has spaces, a plain substring where it does not (see the
        module rules); occurrences may overlap. Results are cached per term."""
        key = (term, whole_word)
        found = self._cache.get(key)
        if found is None:
            found = []
            needle = fold(term, self.casefold)
            at = find_term(self.folded, needle, whole_word)
            while at >= 0:
                start, end = self.original(at), self.original(at + len(needle))
                if start is not None and end is not None:
                    found.append((start, end))
                at = find_term(self.folded, needle, whole_word, at + 1)
            self._cache[key] = found
        return found

    def starts(self, term: str, whole_word: bool = True) -> list[int]:
        """The original start offsets of `find(term)`."""
        return [start for start, _ in self.find(term, whole_word)]

    def __contains__(self, term: object) -> bool:
        return isinstance(term, str) and bool(self.find(term))


@lru_cache(maxsize=16)
def folded_text(text: str, casefold: bool = True) -> FoldedText:
    """The `FoldedText` of `text`, shared by every caller that searches the same text (a haystack's
    leak checks across items), so a long text is folded once."""
    return FoldedText(text, casefold)
