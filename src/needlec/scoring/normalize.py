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

from pydantic import Field, StrictBool

from needlec.languages import words
from needlec.spec.base import StrictModel

_WS = re.compile(r"\s+")


class Normalization(StrictModel):
    """How a response and an answer are made comparable before matching."""

    nfkc: StrictBool = Field(
        default=True, description="Apply Unicode NFKC (full-width letters and digits become plain ones)."
    )
    casefold: StrictBool = Field(
        default=True, description="Ignore letter case (Unicode casefold; `ruler` uses `lower()`)."
    )
    lower_only: StrictBool = Field(
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


def find_word(haystack: str, needle: str, whole_word: bool = True) -> int:
    """Index of the first occurrence of `needle` in `haystack` that respects word boundaries, or -1.

    An occurrence is rejected when the character just before it and the needle's first character
    both belong to a word of a space-separated script, or likewise at its end; so "esi" is not
    found in "beside" but "东京" is found in "我去过东京两次". Both strings must be normalised alike.
    Word characters and the scripts written without spaces are the word table's
    (`languages/words.py`), which leak checks, filters and ranking use too.
    """
    return words.find_term(haystack, needle, whole_word)
