"""The Porter stemmer as `rouge-score` applies it, shared by overlap figures and filter cues.

NLTK's Porter stemmer (a dependency of `rouge-score`) is imported on first use only: NLTK takes
seconds to import, and most commands never stem.
"""

from __future__ import annotations

from typing import Any

_STEMS: dict[str, str] = {}  # token -> Porter stem; a pure function's memo, so no state leaks


def stem(token: str) -> str:
    """`token`'s Porter stem as `rouge-score` computes it (tokens of 3 characters or fewer, and
    non-ASCII tokens, are left as they are)."""
    if len(token) <= 3 or not token.isascii():
        return token
    found = _STEMS.get(token)
    if found is None:
        found = _porter().stem(token)
        _STEMS[token] = found
    return found


_STEMMER: list[Any] = []


def _porter() -> Any:
    """NLTK's Porter stemmer, loaded once."""
    if not _STEMMER:
        from nltk.stem.porter import PorterStemmer

        _STEMMER.append(PorterStemmer())
    return _STEMMER[0]
