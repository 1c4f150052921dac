"""Sentences, words and edits of plain text: the pure helpers every filter shares.

Filters decide which sentences go; this module decides exactly which characters that means, so
the text outside a removal stays byte-identical whatever the filter. Sentence splitting is
deliberately simple and script-aware: Latin, CJK, Devanagari and Arabic end marks, and line
breaks, end a sentence. Sentence ends, folding and the whole-word rule come from the word table
(`languages/words.py`) that leak checks, ranking and scoring use too.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from needlec.languages.words import SENTENCE_END, fold, term_regex

if TYPE_CHECKING:
    import regex

_END = SENTENCE_END
_LINE = re.compile(r"[^\n]+")
_HSPACE = " \t\u3000"
CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]")


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of every sentence, without the whitespace around it, in text order."""
    spans = []
    for line in _LINE.finditer(text):
        base, body, pos = line.start(), line.group(), 0
        cuts = [m.end() for m in _END.finditer(body)]
        if not cuts or cuts[-1] < len(body):
            cuts.append(len(body))
        for cut in cuts:
            piece = body[pos:cut]
            stripped = piece.strip()
            if stripped:
                lead = len(piece) - len(piece.lstrip())
                spans.append((base + pos + lead, base + pos + lead + len(stripped)))
            pos = cut
    return spans


def covering(spans: list[tuple[int, int]], start: int, end: int) -> list[tuple[int, int]]:
    """The sentences that overlap [start, end)."""
    first = bisect.bisect_right([s[1] for s in spans], start)
    out = []
    for span in spans[first:]:
        if span[0] >= end:
            break
        out.append(span)
    return out


def normalize(text: str, case_sensitive: bool) -> str:
    """NFKC (full-width forms, ligatures) and, unless case matters, Unicode case folding (the word
    table's `fold`)."""
    return fold(text, casefold=not case_sensitive)


def term_pattern(term: str, whole_words: bool) -> regex.Pattern[str]:
    """A regex for an already normalized term: a whole word where the script has spaces, a
    substring in scripts without them (the word table's rule)."""
    return term_regex(term, whole_words)


def merge(ranges: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for start, end in sorted(ranges):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def removal_range(text: str, start: int, end: int) -> tuple[int, int]:
    """The characters to delete so that a sentence disappears without leaving a gap.

    Inside a line, the spaces after the sentence go with it (or, at the end of a line, the
    spaces before it). A sentence that is a whole line takes its line break and blank lines
    with it, so paragraphs stay separated by exactly what separated them before.
    """
    after = end
    while after < len(text) and text[after] in _HSPACE:
        after += 1
    before = start
    while before > 0 and text[before - 1] in _HSPACE:
        before -= 1
    line_start = before == 0 or text[before - 1] == "\n"
    line_end = after == len(text) or text[after] == "\n"
    if not line_end:
        return start, after
    if not line_start:
        return before, after
    if after < len(text):  # a whole line with text after it: take the blank lines that follow
        while after < len(text) and text[after].isspace():
            after += 1
        return before, after
    while before > 0 and text[before - 1].isspace():  # the last line: take the breaks before it
        before -= 1
    return before, after


@dataclass(frozen=True)
class Edit:
    """One applied change: `text[start:end]` (input coordinates) became `replacement`."""

    start: int
    end: int
    replacement: str


def plan_edits(text: str, spans: Iterable[tuple[int, int]], action: str, redaction: str) -> list[Edit]:
    """Non-overlapping edits, in order, that remove or redact the given sentence spans."""
    merged = merge(spans)
    if action == "redact":
        return [Edit(s, e, redaction) for s, e in merged]
    return [Edit(s, e, "") for s, e in merge(removal_range(text, s, e) for s, e in merged)]


class EditedText:
    """A text after edits, with a map from its positions back to the original's."""

    def __init__(self, original: str, edits: list[Edit]) -> None:
        parts = []
        self._new_starts: list[int] = []
        self._old_starts: list[int] = []
        self.seams: list[int] = []
        old = new = 0
        for edit in edits:
            parts.append(original[old : edit.start])
            self._new_starts.append(new)
            self._old_starts.append(old)
            new += edit.start - old
            self.seams.append(new)
            parts.append(edit.replacement)
            new += len(edit.replacement)
            old = edit.end
        parts.append(original[old:])
        self._new_starts.append(new)
        self._old_starts.append(old)
        self.text = "".join(parts)
        self._edits = edits

    def to_original(self, position: int) -> int:
        """Original offset of the character at `position` (kept text maps exactly)."""
        i = bisect.bisect_right(self._new_starts, position) - 1
        offset = position - self._new_starts[i]
        if i < len(self._edits):  # the copied run before edit i, or inside its replacement
            run = self._edits[i].start - self._old_starts[i]
            if offset >= run:
                return self._edits[i].start
        return self._old_starts[i] + offset


def apply(text: str, edits: list[Edit]) -> str:
    return EditedText(text, edits).text
