"""Haystack text and its per-tokenizer index: token offsets, safe cut points and boundaries.

A haystack is tokenized once per tokenizer. *Safe points* are token starts where the text reads
letter, space, letter: every tokenizer that pre-splits on whitespace (tiktoken's regexes,
byte-level and Metaspace BPE) must start a new pre-token there, so the tokens on either side of
a safe point never depend on the text across it. That lets the placement engine count a long
assembled context by index arithmetic plus tiny local re-encodes around each seam. The index
verifies this property on a sample of the real text and falls back to full re-encoding for a
tokenizer that does not have it.
"""

from __future__ import annotations

import bisect
import functools
import hashlib
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from needlec.tokenizer import Tokenizer

if TYPE_CHECKING:
    pass

_SAFE = re.compile(r"(?<=[^\W\d_]) (?=[^\W\d_])")
_BOUNDARY = {
    "sentence": re.compile(
        r"(?<=[.!?…।॥؟])[\"'”’»)\]]*\s+(?=\S)|(?<=[。！？])[”’」』)]*\s*(?=\S)"
        r"|\n[ \t]*\n\s*(?=\S)"
    ),
    "line": re.compile(r"\n\s*(?=\S)"),
    "paragraph": re.compile(r"\n[ \t]*\n\s*(?=\S)"),
}
LOCALITY_SAMPLES = 64


@dataclass(frozen=True)
class Haystack:
    """One haystack document: its id, text and sha256 (of the text before any repetition)."""

    id: str
    text: str

    @functools.cached_property
    def sha256(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()


def repeat_to(text: str, joiner: str, min_chars: int) -> tuple[str, int]:
    """`text` repeated (joined by `joiner`, a paragraph break by default) to at least `min_chars`."""
    copies = 1
    if len(text) < min_chars:
        copies = -(-(min_chars + len(joiner)) // (len(text) + len(joiner)))
    return joiner.join([text] * copies), copies


def boundary_positions(text: str, snap: str) -> list[int]:
    """Character offsets where a needle may be inserted for the given snap mode (always includes 0)."""
    pattern = _BOUNDARY[snap]
    return [0] + [m.end() for m in pattern.finditer(text)]


class HaystackIndex:
    """A haystack text tokenized once by one tokenizer, with lookups the placement engine needs."""

    def __init__(self, haystack: Haystack, text: str, copies: int, tokenizer: Tokenizer) -> None:
        import numpy as np

        self.haystack = haystack
        self.text = text
        self.copies = copies
        self.tokenizer = tokenizer
        starts = tokenizer.token_starts(text)
        self.n_tokens = len(starts)
        self.tok_char: list[int] = [*starts.tolist(), len(text)]
        candidates = np.fromiter((m.start() for m in _SAFE.finditer(text)), dtype=np.int64)
        token_at = np.searchsorted(starts, candidates)
        token_at_clipped = np.minimum(token_at, max(len(starts) - 1, 0))
        is_start = (token_at < len(starts)) & (starts[token_at_clipped] == candidates) if len(starts) else token_at < 0
        self.safe: list[int] = candidates[is_start].tolist()
        self.safe_tok: list[int] = token_at[is_start].tolist()
        self._boundaries: dict[str, list[int]] = {}
        self.local = self._check_locality()

    def _check_locality(self) -> bool:
        """Do token counts add up across safe points on this text? Checked on a spread sample."""
        n = len(self.safe)
        if n < 4:
            return False
        step = max(1, n // LOCALITY_SAMPLES)
        for i in range(0, n - 3, step):
            j = min(n - 1, i + 3)
            a, b = self.safe[i], self.safe[j]
            if self.tokenizer.count(self.text[a:b]) != self.safe_tok[j] - self.safe_tok[i]:
                return False
        return True

    def boundaries(self, snap: str) -> list[int]:
        if snap == "none":
            return self.tok_char[:-1]
        if snap not in self._boundaries:
            self._boundaries[snap] = boundary_positions(self.text, snap)
        return self._boundaries[snap]

    def token_at(self, char: int) -> int:
        """Index of the token that contains character `char` (or the end)."""
        return max(0, bisect.bisect_right(self.tok_char, char) - 1)

    def safe_at_or_before(self, char: int) -> int | None:
        i = bisect.bisect_right(self.safe, char) - 1
        return i if i >= 0 else None

    def safe_at_or_after(self, char: int) -> int | None:
        i = bisect.bisect_left(self.safe, char)
        return i if i < len(self.safe) else None
