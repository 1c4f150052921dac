"""Haystack text and its per-tokenizer index: token offsets, safe cut points and boundaries.

A haystack is tokenized once per tokenizer. *Safe points* are token starts across which the
tokens never depend on the text on the other side: the count of any text between two safe
points is the difference of their token indexes, so the placement engine counts a long assembled
context by index arithmetic plus tiny local re-encodes around each seam.

Which positions are safe depends on the tokenizer's pre-tokenization, so the index proposes
candidates in classes and keeps a class only if it verifies on the real text with the real
tokenizer (`SAFE_CLASSES`): a space between letters (every tokenizer that pre-splits on
whitespace), a line break after a word (word lists, line-based haystacks), the start of a line
that begins with an ASCII letter or digit, whatever ends the line before (tiktoken's pre-tokenization
keeps the break of a line of dots with the dots; o200k's also takes a `/` after it, so lines that
begin with other punctuation are left out), the start of a line that begins with a full stop (FWE's
lines of dots: a full stop opens a pre-token in tiktoken's and byte-level BPE's regexes), the point between a
letter or digit and the punctuation after it (Chinese and Japanese text, which has no spaces, and a
needle ending in a number: tiktoken's and byte-level BPE's regexes start a new pre-token at the
punctuation), and the point between two
CJK characters (WordPiece tokenizers split every CJK character). A tokenizer for which no class
verifies is counted by full re-encoding (exact, slower).
"""

from __future__ import annotations

import array
import bisect
import functools
import hashlib
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from needlec.tokenizer import Tokenizer

if TYPE_CHECKING:
    import numpy as np

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
LINE_CLASSES: dict[str, str] = {"line_start": "A-Za-z0-9", "dot_line": "."}
"""The classes of line starts, by the first characters of their lines (a character set's contents)."""
SAFE_CLASSES: dict[str, str] = {
    "space": r"(?<=\p{L}) (?=\p{L})",
    "line": r"(?<=[\p{L}\p{N}])\n(?=\S)",
    **{name: f"(?<=\\n)(?=[{first}])" for name, first in LINE_CLASSES.items()},
    "punctuation": r"(?<=[\p{L}\p{N}])(?=[\p{P}\p{S}])(?!['’ʼ])",
    "cjk": f"(?<=[{_CJK}])(?=[{_CJK}])",
}
"""Candidate safe points by class; each class is kept only where it verifies (see `HaystackIndex`)."""
CLASS_ANCHOR = re.compile(f"[^\\W_]|\n|[{_CJK}]")
"""A letter, a digit, a line break or a CJK character: every point of every class has one of them next to
it, so a stretch (with one character either side) in which this finds nothing holds no class point, and
the slow Unicode class patterns need not scan it (a pad of dots)."""
_BOUNDARY = {
    "sentence": re.compile(
        r"(?<=[.!?…।॥؟])[\"'”’»)\]]*\s+(?=\S)|(?<=[。！？])[”’」』)]*\s*(?=\S)"
        r"|\n[ \t]*\n\s*(?=\S)"
    ),
    "line": re.compile(r"\n\s*(?=\S)"),
    "paragraph": re.compile(r"\n[ \t]*\n\s*(?=\S)"),
}


@functools.cache
def class_pattern(name: str) -> Any:
    """A safe class's pattern, compiled by the standard `re` where its syntax allows (the same matches, found
    several times faster), else by `regex` (for the Unicode property classes)."""
    pattern = SAFE_CLASSES[name]
    try:
        return re.compile(pattern)
    except re.error:
        import regex

        return regex.compile(pattern)


LOCALITY_SAMPLES = 96
"""Spread pairs of candidate points checked per class (each pair spans a few of them)."""


@dataclass(frozen=True)
class Haystack:
    """One haystack document: its id, text and sha256 (of the text before any repetition)."""

    id: str
    text: str
    # passage haystacks: the spec source of each passage, in order (empty: one source, or not passages)
    groups: tuple[int, ...] = ()

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

    def __init__(
        self, haystack: Haystack, text: str, copies: int, tokenizer: Tokenizer, cache: Path | None = None
    ) -> None:
        """Tokenize `text` and find its safe points; with `cache`, a folder, read them from there when
        this text was indexed before with the same tokenizer (and store them there when not)."""
        self.haystack = haystack
        self.text = text
        self.copies = copies
        self.tokenizer = tokenizer
        path = cache / f"{_index_key(text, tokenizer)}.idx" if cache is not None else None
        stored = _load(path) if path is not None else None
        if stored is None:
            stored = self._segment()
            if path is not None:
                _store(path, stored)
        starts, self.safe, self.safe_tok, self.safe_classes = stored
        self.n_tokens = len(starts)
        self.tok_char: list[int] = [*starts, len(text)]
        self._boundaries: dict[str, list[int]] = {}
        self._arrays: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self._tok_array: np.ndarray | None = None
        self._safe_arrays: tuple[np.ndarray, np.ndarray] | None = None
        self._codes: np.ndarray | None = None
        self._safe_of: np.ndarray | None = None
        self._ends: dict[int, tuple[int, int]] = {}
        self._boundary_ends: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self.local = len(self.safe) >= 4

    def _segment(self) -> Segmentation:
        """Token starts, safe points (characters and token indexes) and the classes that verified."""
        import numpy as np

        text, tokenizer = self.text, self.tokenizer
        starts = tokenizer.token_starts(text)
        pretokens = tokenizer.pretoken_starts(text)
        kept_chars = []
        kept_toks = []
        classes: list[str] = []
        for name in SAFE_CLASSES:
            found = class_pattern(name).finditer(text)
            candidates = np.fromiter((m.start() for m in found), dtype=np.int64)
            if len(candidates) < 4:
                continue
            token_at = np.searchsorted(starts, candidates)
            clipped = np.minimum(token_at, max(len(starts) - 1, 0))
            is_start = (token_at < len(starts)) & (starts[clipped] == candidates)
            if pretokens is not None:  # a token start inside a pre-token is a merge, not a cut: never safe
                is_start &= np.isin(candidates, pretokens, assume_unique=True)
            chars, toks = candidates[is_start], token_at[is_start]
            if len(chars) >= 4 and self._verifies(chars, toks):
                kept_chars.append(chars)
                kept_toks.append(toks)
                classes.append(name)
        if not kept_chars:
            return starts.tolist(), [], [], classes
        merged = np.concatenate(kept_chars)
        order = np.argsort(merged, kind="stable")
        merged, tokens = merged[order], np.concatenate(kept_toks)[order]
        unique = np.concatenate(([True], merged[1:] != merged[:-1]))
        return starts.tolist(), merged[unique].tolist(), tokens[unique].tolist(), classes

    def _verifies(self, chars: np.ndarray, toks: np.ndarray) -> bool:
        """Do token counts add up across these candidate points on this text? Checked on a spread sample
        of short spans (each from one candidate to the third after it) and, to catch effects that
        reach further, of longer ones."""
        n = len(chars)
        step = max(1, n // LOCALITY_SAMPLES)
        for span in (3, 40):
            for i in range(0, max(1, n - span), step):
                j = min(n - 1, i + span)
                a, b = int(chars[i]), int(chars[j])
                if self.tokenizer.count(self.text[a:b]) != int(toks[j]) - int(toks[i]):
                    return False
            step *= 4
        return True

    def boundaries(self, snap: str) -> list[int]:
        if snap == "none":
            return self.tok_char[:-1]
        if snap not in self._boundaries:
            self._boundaries[snap] = boundary_positions(self.text, snap)
        return self._boundaries[snap]

    def arrays(self, snap: str) -> tuple[np.ndarray, np.ndarray]:
        """`tok_char` and the boundaries of `snap` as numpy arrays, made once (for placing many needles)."""
        got = self._arrays.get(snap)
        if got is None:
            import numpy as np

            if self._tok_array is None:
                self._tok_array = np.asarray(self.tok_char, dtype=np.int64)
            got = self._arrays[snap] = (self._tok_array, np.asarray(self.boundaries(snap), dtype=np.int64))
        return got

    def safe_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """`safe` and `safe_tok` as numpy arrays, made once (for counting hundreds of inserts at once)."""
        if self._safe_arrays is None:
            import numpy as np

            self._safe_arrays = (np.asarray(self.safe, dtype=np.int64), np.asarray(self.safe_tok, dtype=np.int64))
        return self._safe_arrays

    def safe_of(self) -> np.ndarray:
        """For each character position, the index of the safe point there in `safe`, or -1 where there is none
        (int32, one entry per character and one for the end), made once: hundreds of inserts are looked up at
        once without a binary search each."""
        if self._safe_of is None:
            import numpy as np

            safe, _ = self.safe_arrays()
            table = np.full(len(self.text) + 1, -1, dtype=np.int32)
            table[safe] = np.arange(len(safe), dtype=np.int32)
            self._safe_of = table
        return self._safe_of

    def codes(self) -> np.ndarray:
        """The text's code points as a numpy array, made once (to read the characters around hundreds of
        inserts at once)."""
        if self._codes is None:
            import numpy as np

            self._codes = np.frombuffer(self.text.encode("utf-32-le"), dtype=np.uint32)
        return self._codes

    def ends_at(self, q: int) -> tuple[int, int]:
        """The token index of character `q` and of the end of the text before it (`q` less the whitespace in
        front of it), memoised: a window search looks up the same sentence ends for many starts and items."""
        got = self._ends.get(q)
        if got is None:
            got = self._ends[q] = (self.token_at(q), self.token_at(_before_blanks(self.text, q)))
        return got

    def boundary_ends(self, snap: str) -> tuple[np.ndarray, np.ndarray]:
        """`ends_at` of every boundary of `snap` (in `boundaries(snap)` order) as two int64 arrays, made once: a
        window search that passes over hundreds of starts judges them all at once."""
        got = self._boundary_ends.get(snap)
        if got is None:
            import numpy as np

            text = self.text
            tok, bounds = self.arrays(snap)
            ends = [_before_blanks(text, q) for q in bounds.tolist()]
            at = np.maximum(np.searchsorted(tok, bounds, side="right") - 1, 0)
            before = np.maximum(np.searchsorted(tok, np.asarray(ends, dtype=np.int64), side="right") - 1, 0)
            got = self._boundary_ends[snap] = (at, before)
        return got

    def token_at(self, char: int) -> int:
        """Index of the token that contains character `char` (or the end)."""
        return max(0, bisect.bisect_right(self.tok_char, char) - 1)

    def safe_at_or_before(self, char: int) -> int | None:
        i = bisect.bisect_right(self.safe, char) - 1
        return i if i >= 0 else None

    def safe_at_or_after(self, char: int) -> int | None:
        i = bisect.bisect_left(self.safe, char)
        return i if i < len(self.safe) else None


def _before_blanks(text: str, q: int) -> int:
    """`q` less the whitespace in front of it: where the text before character `q` ends."""
    while q > 0 and text[q - 1].isspace():
        q -= 1
    return q


Segmentation = tuple[list[int], list[int], list[int], list[str]]
"""Token starts, safe points, their token indexes, and the safe classes that verified."""

INDEX_FORMAT = 2
"""Bump when what `HaystackIndex._segment` computes changes, so older cached indexes are not read."""


def _index_key(text: str, tokenizer: Tokenizer) -> str:
    identity = f"{INDEX_FORMAT}|{tokenizer.identity()}|{sorted(SAFE_CLASSES.items())}|{LOCALITY_SAMPLES}"
    digest = hashlib.sha256(identity.encode("utf-8"))
    digest.update(b"\0")
    digest.update(text.encode("utf-8"))
    return digest.hexdigest()


_MAGIC = b"needlec-index\n"


def _load(path: Path) -> Segmentation | None:
    """A cached segmentation, or None (absent or damaged).

    The file is a magic line, a header line (JSON: the three arrays' lengths and the classes) and
    the arrays as little-endian int64, read with the standard library: a small compile that finds
    its index here never imports numpy (about 0.1-0.3 CPU s).
    """
    try:
        data = path.read_bytes()
        if not data.startswith(_MAGIC):
            return None
        end = data.index(b"\n", len(_MAGIC))
        header = json.loads(data[len(_MAGIC) : end])
        lengths, classes = header["lengths"], header["classes"]
        arrays: list[list[int]] = []
        offset = end + 1
        for length in lengths:
            values = array.array("q")
            values.frombytes(data[offset : offset + 8 * length])
            if len(values) != length:
                return None
            if sys.byteorder != "little":
                values.byteswap()
            arrays.append(values.tolist())
            offset += 8 * length
        if offset != len(data) or len(arrays) != 3 or not all(isinstance(c, str) for c in classes):
            return None
        return arrays[0], arrays[1], arrays[2], list(classes)
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _store(path: Path, stored: Segmentation) -> None:
    from needlec.util.atomic import write_file_atomic

    starts, safe, safe_tok, classes = stored
    header = {"lengths": [len(starts), len(safe), len(safe_tok)], "classes": classes}
    parts = [_MAGIC, json.dumps(header).encode("utf-8"), b"\n"]
    for values in (starts, safe, safe_tok):
        packed = array.array("q", values)
        if sys.byteorder != "little":
            packed.byteswap()
        parts.append(packed.tobytes())
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_file_atomic(path, b"".join(parts))
    except OSError:
        pass  # a cache that cannot be written only costs the next compile the indexing
