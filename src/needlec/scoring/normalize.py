"""Text normalisation and whole-word matching shared by every metric.

Every step is explicit and configurable, because the reference scorers disagree: RULER only
lowercases, NeedleBench compares case-sensitively after removing whitespace, MLNeedle strips
punctuation. The steps run in a fixed order: Unicode NFKC, casefold, punctuation policy,
whitespace policy. Matching is whole-word where the script separates words with spaces and
character-level for scripts written without spaces (Chinese, Japanese, Thai, Lao, Khmer, Myanmar).
"""

from __future__ import annotations

import re
import sys
import unicodedata
from functools import lru_cache
from typing import Literal

from pydantic import Field

from needlec.spec.base import StrictModel

_WS = re.compile(r"\s+")


class Normalization(StrictModel):
    """How a response and an answer are made comparable before matching."""

    nfkc: bool = Field(
        default=True, description="Apply Unicode NFKC (full-width letters and digits become plain ones)."
    )
    casefold: bool = Field(default=True, description="Ignore letter case (Unicode casefold; `ruler` uses `lower()`).")
    lower_only: bool = Field(
        default=False, description="Use `str.lower()` instead of casefold (RULER parity); only when `casefold` is true."
    )
    punctuation: Literal["keep", "space", "remove"] = Field(
        default="space",
        description="Unicode punctuation (categories P*): keep it, turn each mark into a space, or delete it.",
    )
    whitespace: Literal["keep", "collapse", "remove"] = Field(
        default="collapse",
        description="Runs of whitespace: keep them, collapse each run to one space (and trim), or delete them.",
    )


PRESETS: dict[str, Normalization] = {
    "standard": Normalization(),
    "ruler": Normalization(nfkc=False, casefold=True, lower_only=True, punctuation="keep", whitespace="keep"),
    "none": Normalization(nfkc=False, casefold=False, punctuation="keep", whitespace="keep"),
}
"""Named normalisations: `standard` (the default), `ruler` (lowercase only) and `none`."""

NormalizeSetting = Literal["standard", "ruler", "none"] | Normalization


def resolve(setting: NormalizeSetting) -> Normalization:
    """The `Normalization` a metric's `normalize:` value names."""
    return PRESETS[setting] if isinstance(setting, str) else setting


def normalize(text: str, norm: Normalization) -> str:
    """Apply `norm` to `text`. Idempotent: normalising twice gives the same string.

    Removing punctuation or whitespace can bring a base letter next to a combining mark that NFKC
    then composes ("A" + " \u0301", the NFKC form of an acute accent, becomes "A\u0301" and then
    "\u00c1"), so with `nfkc` the steps repeat until the text stops changing.
    """
    once = _normalize_once(text, norm)
    if not norm.nfkc or (norm.punctuation == "keep" and norm.whitespace == "keep"):
        return once
    for _ in range(8):  # each pass only composes; in practice one more pass reaches the fixed point
        again = _normalize_once(once, norm)
        if again == once:
            break
        once = again
    return once


def _normalize_once(text: str, norm: Normalization) -> str:
    """One pass of the normalisation steps, in their documented order."""
    if norm.nfkc:
        text = unicodedata.normalize("NFKC", text)
    if norm.casefold:
        text = text.lower() if norm.lower_only else text.casefold()
        if norm.nfkc:
            # casefold can produce characters NFKC would change again (e.g. final sigma forms stay,
            # but some ligatures expand); normalise once more so the result is a fixed point.
            text = unicodedata.normalize("NFKC", text)
    if norm.punctuation != "keep":
        text = _punctuation().sub(" " if norm.punctuation == "space" else "", text)
    if norm.whitespace == "collapse":
        text = _WS.sub(" ", text).strip()
    elif norm.whitespace == "remove":
        text = _WS.sub("", text)
    return text


@lru_cache(maxsize=1)
def _punctuation() -> re.Pattern[str]:
    """A character class of every Unicode punctuation mark (categories P*), built once."""
    ranges: list[tuple[int, int]] = []
    for cp in range(sys.maxunicode + 1):
        if unicodedata.category(chr(cp))[0] == "P":
            if ranges and ranges[-1][1] == cp - 1:
                ranges[-1] = (ranges[-1][0], cp)
            else:
                ranges.append((cp, cp))
    body = "".join(re.escape(chr(a)) if a == b else f"{re.escape(chr(a))}-{re.escape(chr(b))}" for a, b in ranges)
    return re.compile(f"[{body}]")


@lru_cache(maxsize=65536)
def normalize_cached(text: str, norm: Normalization) -> str:
    """`normalize` memoised, for strings that repeat across items (answers, aliases)."""
    return normalize(text, norm)


# Scripts written without spaces between words: a match there needs no word boundary.
_CONTINUOUS_RANGES: tuple[tuple[int, int], ...] = (
    (0x0E00, 0x0EFF),  # Thai, Lao
    (0x1000, 0x109F),  # Myanmar
    (0x1780, 0x17FF),  # Khmer
    (0x2E80, 0x2FDF),  # CJK radicals, Kangxi
    (0x3040, 0x30FF),  # Hiragana, Katakana
    (0x3100, 0x312F),  # Bopomofo
    (0x31F0, 0x31FF),  # Katakana extensions
    (0x3400, 0x4DBF),  # CJK extension A
    (0x4E00, 0x9FFF),  # CJK unified ideographs
    (0xF900, 0xFAFF),  # CJK compatibility ideographs
    (0xFF66, 0xFF9F),  # half-width Katakana
    (0x20000, 0x3FFFF),  # CJK extensions B and later
)


@lru_cache(maxsize=8192)
def is_continuous_script(ch: str) -> bool:
    """True for characters of scripts that do not separate words with spaces (CJK, Thai, ...)."""
    cp = ord(ch)
    return any(lo <= cp <= hi for lo, hi in _CONTINUOUS_RANGES)


@lru_cache(maxsize=8192)
def is_word_char(ch: str) -> bool:
    """Letters, digits and combining marks (Devanagari vowel signs belong to their word)."""
    return ch.isalnum() or unicodedata.category(ch)[0] == "M" or ch == "_"


def _joins(a: str, b: str) -> bool:
    """Whether characters `a` and `b`, side by side, belong to one word of a spaced script."""
    return is_word_char(a) and is_word_char(b) and not is_continuous_script(a) and not is_continuous_script(b)


def find_word(haystack: str, needle: str, whole_word: bool = True) -> int:
    """Index of the first occurrence of `needle` in `haystack` that respects word boundaries, or -1.

    An occurrence is rejected when the character just before it and the needle's first character
    both belong to a word of a space-separated script, or likewise at its end; so "esi" is not
    found in "beside" but "东京" is found in "我去过东京两次". Both strings must be normalised alike.
    """
    if not needle:
        return -1
    start = haystack.find(needle)
    while start != -1:
        end = start + len(needle)
        if not whole_word:
            return start
        left_ok = start == 0 or not _joins(haystack[start - 1], needle[0])
        right_ok = end == len(haystack) or not _joins(needle[-1], haystack[end])
        if left_ok and right_ok:
            return start
        start = haystack.find(needle, start + 1)
    return -1
