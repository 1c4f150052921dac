"""Substring searches of one long text, most answered without a scan: a term holding a run of five or
six characters that the text lacks cannot occur in it.

The text's runs of both lengths (`GRAMS`) are marked in a table of bits (a hash of each run's code
points picks its bit), built with numpy once the searches so far have scanned `BUILD_AFTER` times the
text's length: a text searched up to three times costs what it cost before, one searched for every
item of a compile is mostly answered from the table. Two runs on one bit can only make a term look as
if it might occur; the text is then searched as before. So `find` answers what `str.find` answers,
and `lacks` is True only when the term is not in the text.

Drawn names are the use: RULER's QA documents invent names that must not occur in the haystack, and
RAG-chunk contexts leave out every chunk that holds one. Invented names are built of English-like
syllables, so every five-character run of most of them occurs in an English haystack of a megabyte;
their six-character runs mostly do not, and a five-letter name is its own one run of five.
"""

from __future__ import annotations

from typing import Any

GRAMS = (5, 6)
"""Characters per run: a term is proved absent by a missing run of either length."""
BUILD_AFTER = 4
"""Searches, in whole lengths of the text, after which the table is built. Building it costs about as much
as 60 scans (34 ms for a text of a million characters, whose scan takes 0.55 ms), once per text; waiting
for that many scans before building, which would bound the cost at twice the scans' alone, would leave a
compile's first 20 to 70 items of RULER QA or RAG-chunk at 128K paying scans."""
BLOCK = 1 << 20
"""Characters hashed at a time while building (bounds the memory the build takes)."""
_MULTIPLIER = 0x100000001B3
_MIX = 0x9E3779B97F4A7C15
_MASK = (1 << 64) - 1

__all__ = ["BUILD_AFTER", "GRAMS", "Absence"]


def table_bits(length: int) -> int:
    """Bits (as a power of two) of the table for a text of `length` characters: about 16 per character, so
    that about one bit in eight is set by the text's runs of both lengths (the table is kept packed, two bytes a
    character)."""
    return max(16, min(29, (16 * length).bit_length()))


def _slot(codes: list[int], bits: int) -> int:
    """The bit of one run of code points, as `_table` works it out for every run of a text."""
    value = 0
    for code in codes:
        value = (value * _MULTIPLIER + code) & _MASK
    return ((value * _MIX) & _MASK) >> (64 - bits)


def _table(text: str, bits: int, block: int = BLOCK) -> Any:
    """The table of `text`, packed eight bits a byte (bit i of the table is bit i % 8 of byte i // 8): bit i set
    when a run of one of the `GRAMS` lengths has slot i; hashed `block` runs at a time."""
    import numpy as np

    marked = np.zeros(1 << bits, dtype=bool)
    multiplier, mix, shift = np.uint64(_MULTIPLIER), np.uint64(_MIX), np.uint64(64 - bits)
    longest = max(GRAMS)
    for begin in range(0, max(1, len(text) - min(GRAMS) + 1), block):
        part = text[begin : begin + block + longest - 1]
        codes = np.frombuffer(part.encode("utf-32-le"), dtype=np.uint32).astype(np.uint64)
        for gram in GRAMS:
            runs = min(block, len(codes) - gram + 1)  # the runs that start in this block
            if runs <= 0:
                continue
            value = np.zeros(runs, dtype=np.uint64)
            with np.errstate(over="ignore"):
                for offset in range(gram):
                    value = value * multiplier + codes[offset : offset + runs]
                marked[((value * mix) >> shift).astype(np.intp)] = True
    return np.packbits(marked, bitorder="little")


def _marked(table: Any, slot: int) -> bool:
    return bool(table[slot >> 3] >> (slot & 7) & 1)


class Absence:
    """Searches of `text` (see the module): `find` and `in` as for the string, `lacks` for a quick proof."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.bits = table_bits(len(text))
        self._scanned = 0  # characters searched so far, until the table is built
        self._marked: Any = None

    def lacks(self, term: str) -> bool:
        """True when `term` holds a run of one of the `GRAMS` lengths that the text does not (so it is not in
        the text); False when it may occur, and while the table is not built."""
        if self._marked is None or len(term) < min(GRAMS):
            return False
        codes = [ord(c) for c in term]
        table, bits = self._marked, self.bits
        return any(
            not _marked(table, _slot(codes[i : i + gram], bits)) for gram in GRAMS for i in range(len(codes) - gram + 1)
        )

    def find(self, term: str, start: int = 0, end: int | None = None) -> int:
        """`text.find(term, start, end)`, without the scan when the text lacks one of the term's runs."""
        if self.lacks(term):
            return -1
        stop = len(self.text) if end is None else end
        if self._marked is None:
            self._scanned += max(0, stop - start)
            if self._scanned >= BUILD_AFTER * len(self.text):
                self._marked = _table(self.text, self.bits)
        return self.text.find(term, start, stop)

    def __contains__(self, term: str) -> bool:
        return self.find(term) >= 0
