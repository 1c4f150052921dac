"""The placement engine: cut a haystack window and insert needles so the count is exact.

The assembled context is `H[start:q1] + n1 + H[q1:q2] + n2 + ... + H[qk:end]` for haystack text
H, boundary positions q and needle texts n. Its token count is computed without re-encoding it:
around every seam (start, each insertion, end) a small window between two safe points is
re-encoded, and the tokens between windows come from the haystack's single tokenization. The
window end (or start, when a needle must be the last text) is then solved to the exact target.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import math
import operator
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple, overload

from needlec.errors import ContractError
from needlec.haystacks.index import CLASS_ANCHOR, LINE_CLASSES, SAFE_CLASSES, HaystackIndex, class_pattern
from needlec.tokenizer import BLANKS, Tokenizer
from needlec.util.lines import Lines, weighted_each
from needlec.util.rounding import round_many

if TYPE_CHECKING:
    import numpy as np

MARGIN_TOKENS = 8
ANCHORED_ROOM_TOKENS = 4
"""Haystack tokens kept after the last needle when the window is chosen around the needle."""
CUT_ATTEMPTS = 16
"""Window starts (or, with needles at depth 100, ends) tried, boundary after boundary, when no cut of the other
end gives the exact count: in CJK text a character can be several tokens, so the count can step over the target."""
MAX_STEPS = 12
EDGE_ATTEMPTS = 24
"""Window starts (boundaries from the drawn one on) tried for a window of whole sentences with exactly the
length; with sentences of about 25 tokens about one start in 25 gives it, so about a third of windows
find one. Otherwise (and always in a
haystack that repeats a few sentences, whose starts have few phases) the closest window is made up to the
length with line breaks between its last sentences (`_fill_with_breaks`)."""
DEEP_DEPTH = 90.0
"""From this target depth on, the deepest needle may also end a whole-sentence window (no sentence after
it), which a short context with long sentences needs to reach depths near 100."""
FILL_ATTEMPTS = 16
"""Short windows made up with line breaks, at most, in the search for one within the depth tolerance."""
PREDICT_SLACK = 3
"""A whole-sentence window start is counted only when, at some sentence end, its predicted count is within
this many tokens of the target, or short of it by less than the closest window found so far and this many
(`_place_on_boundaries`). The prediction is index arithmetic plus the seam correction of the last start
counted, which moves by 0-2 tokens from start to start in English and Chinese text."""
STEADY_STARTS = 4
"""Starts counted in a row, each with the seam correction of the one before it, after which a window predicted no
closer than the closest found is passed over without `PREDICT_SLACK`'s margin (RULER's key-value lines, whose
correction never moves)."""
MOVE_MARGIN = 1
"""The slack of a start's prediction once a start of the item has been counted: the largest move of the
correction seen so far in the item (0 until it moves) and this many tokens, at most `PREDICT_SLACK`. In 450
items of RULER's essay NIAH tasks, 714 starts were counted whose nearest sentence end was predicted 2-3
tokens off, more than the correction had moved so far and this margin: none was exact (one of 14 was where
the correction had moved by 2, which this slack still counts). A heuristic like `PREDICT_SLACK`:
`tests/test_start_prediction.py` checks that it picks the windows that counting every start picks.

See `ROTATED_STARTS` for word lists."""
ROTATED_STARTS = True
"""Where every start counted so far had each insert as its own rotated window (`Counter._line_counts`: a word
list's lines, FWE's blocks of lines) and the correction has not moved, the slack is none, and a start predicted
no closer than the closest window found is passed over (as after `STEADY_STARTS`): such a count is index
arithmetic and each insert's own tokens, and only the window's two edges can move the correction. In 720
CWE and FWE items (60 a length, 4K to 128K) this picked the windows counting every start picks, with a third
to a half of the starts counted. The same holds for a tokenizer that discards whitespace (`Tokenizer.drops_blanks`)
where every insert meets the text at blanks (`_blank_seams`: needles at sentence starts after a space), as each then
adds its own tokens: 792 items of RULER's and NeedleBench's rows with all-MiniLM-L6-v2's WordPiece were the same,
and ten 128K passkey items, whose noise sentences leave nearly every start one token short, counted 18 starts
instead of 2,076.
A heuristic like the others; False (with both margins beyond any count) counts every start."""
LINED_STEMS = True
"""Where an item has many inserts (`SNAP_VECTOR_MIN`) that each read as their own rotated window at any boundary
of the haystack (a word list's lines: CWE's words, FWE's blocks), a window start is counted by arithmetic, with no
step per insert (`_LinedItem`); every count is the one the general way gives (`tests/test_lined_stems.py`
compares the items). False counts every start the general way."""
PASSED_IN_A_ROW = 24
"""Starts passed over in a row (none worth counting), after which the search judges the next ones at once
(`_worth_counting_many`). One by one a start costs a few microseconds; a numpy pass, 60-130 microseconds for
32 to 500 starts, costs as much as a dozen or more, so it pays only for the long runs of a search that seldom
meets its target (a WordPiece file over RULER's repeated filler sentences passes over hundreds of starts an
item)."""
PASSED_CHUNK = 64
"""Starts judged in the first numpy pass of such a run; each further pass judges four times as many."""
DEPTH_ATTEMPTS = 512
"""Window starts tried, once exact windows exist, for one whose needles are all within the depth tolerance
(short contexts with long sentences and several needles need many: each start lays the sentences anew)."""


class Insert(NamedTuple):
    """Text inserted into the haystack at character `pos` (inserts at one pos keep list order). A named
    tuple, which is made faster than a frozen dataclass: a documents context makes thousands per item."""

    pos: int
    text: str


class InsertColumns(Sequence[Insert]):
    """Inserts kept as two lists, their positions and their texts, read as a sequence of `Insert`s. A
    documents context has thousands of label inserts: they are assembled from the two lists, and a record
    is made only where one is read (by the tuple constructor itself, without a Python call per record).

    `hay`, where the layout has it, is the haystack text around the inserts as strings it already holds,
    for one window: (start, end, pieces), the pieces being the text from `start` to the first position, from
    each position to the next and from the last to `end`. `assemble` over that window joins them instead of
    slicing the haystack anew (a 128K documents context's 1,860 documents); it is left out of a slice."""

    __slots__ = ("hay", "positions", "texts")

    def __init__(self, positions: list[int], texts: list[str], hay: tuple[int, int, list[str]] | None = None) -> None:
        if len(positions) != len(texts):
            raise ValueError(f"{len(positions)} positions for {len(texts)} insert texts")
        if hay is not None and len(hay[2]) != len(positions) + 1:
            raise ValueError(f"{len(hay[2])} haystack pieces around {len(positions)} inserts")
        self.positions = positions
        self.texts = texts
        self.hay = hay

    def __len__(self) -> int:
        return len(self.positions)

    @overload
    def __getitem__(self, i: int) -> Insert: ...
    @overload
    def __getitem__(self, i: slice) -> InsertColumns: ...
    def __getitem__(self, i: int | slice) -> Insert | InsertColumns:
        if isinstance(i, slice):
            return InsertColumns(self.positions[i], self.texts[i])
        return Insert(self.positions[i], self.texts[i])

    def __iter__(self) -> Iterator[Insert]:
        return map(tuple.__new__, itertools.repeat(Insert), zip(self.positions, self.texts, strict=True))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, str):
            return NotImplemented
        return len(self) == len(other) and all(map(operator.eq, self, other))

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return f"InsertColumns({len(self)} inserts)"


class _Short:
    """A whole-sentence window `gap` tokens short of its target: haystack `begin` to `end` with the needle
    inserts, `end` being boundary `j` (or the text end before it). `stem` is the window start's stem, whose first
    `shared` inserts are these inserts' first (`_fill_with_breaks`). A window over a word list (`_LinedStart`)
    gives `laid` instead, which makes both when one is first read: most short windows are never filled."""

    __slots__ = ("_inserts", "_laid", "_stem", "begin", "end", "gap", "j", "shared")

    def __init__(
        self,
        gap: int,
        begin: int,
        end: int,
        inserts: list[Insert] | None,
        j: int,
        stem: _Stem | None = None,
        shared: int = 0,
        laid: Callable[[int, int], tuple[list[Insert], _Stem]] | None = None,
    ) -> None:
        self.gap, self.begin, self.end, self.j, self.shared = gap, begin, end, j, shared
        self._inserts, self._stem, self._laid = inserts, stem, laid

    def _lay(self) -> None:
        if self._inserts is None and self._laid is not None:
            self._inserts, self._stem = self._laid(self.end, self.shared)
            self._laid = None

    @property
    def inserts(self) -> list[Insert]:
        self._lay()
        assert self._inserts is not None
        return self._inserts

    @property
    def stem(self) -> _Stem | None:
        self._lay()
        return self._stem


@dataclass(frozen=True)
class Placement:
    """Where an item's context comes from and how many tokens it has."""

    start: int
    end: int
    inserts: tuple[Insert, ...] | InsertColumns
    total_tokens: int  # count of prefix + context + suffix, the solved quantity
    context_tokens: int
    needle_tokens: tuple[int, ...]  # token offset of each needle inside the context
    needle_chars: tuple[int, ...]  # character offset of each needle inside the context

    _depths: tuple[float, ...] | None = field(default=None, init=False, repr=False, compare=False)
    _error: float | None = field(default=None, init=False, repr=False, compare=False)
    """`_depth_error` of the placement for the item that made it, where its layout worked it out (`_LinedStart`)."""

    def context(self, text: str, prefix: str = "", suffix: str = "") -> str:
        """The assembled context, after `prefix` and before `suffix` (a message's text around it)."""
        return assemble(text, self.start, self.end, self.inserts, prefix, suffix)

    def depths(self) -> tuple[float, ...]:
        """Each needle's achieved depth in percent, to 4 decimals (worked out once: CWE has 300)."""
        if self._depths is None:
            total = self.context_tokens
            depths = (
                tuple(round_many([100.0 * t / total for t in self.needle_tokens]))
                if total
                else (0.0,) * len(self.needle_tokens)
            )
            object.__setattr__(self, "_depths", depths)
        return self._depths  # type: ignore[return-value]


def assemble(text: str, start: int, end: int, inserts: Sequence[Insert], prefix: str = "", suffix: str = "") -> str:
    """The haystack from `start` to `end` with the inserts put in at their positions (those outside it left
    out), after `prefix` and before `suffix`: one join of the pieces, so a long context is copied once."""
    if not inserts:
        return prefix + text[start:end] + suffix
    columns = isinstance(inserts, InsertColumns)
    if columns and inserts.hay is not None and inserts.hay[:2] == (start, end):  # type: ignore[attr-defined]
        around = inserts.hay[2]  # type: ignore[attr-defined]
        pieces = [prefix] * (2 * len(around) + 1)
        pieces[1 : 2 * len(around) : 2] = around
        pieces[2 : 2 * len(around) - 1 : 2] = inserts.texts  # type: ignore[attr-defined]
        pieces[-1] = suffix
        return "".join(pieces)
    cuts = [start, *(inserts.positions if columns else map(_POS, inserts))]  # type: ignore[attr-defined]
    if min(cuts) >= start and max(cuts) <= end:  # every insert inside: the same pieces, sliced without a loop
        n = len(cuts)
        pieces = [prefix] * (2 * n + 1)
        pieces[1 : 2 * n - 1 : 2] = map(text.__getitem__, map(slice, cuts, cuts[1:]))
        pieces[2 : 2 * n : 2] = inserts.texts if columns else map(_TEXT, inserts)  # type: ignore[attr-defined]
        pieces[-2] = text[cuts[-1] : end]
        pieces[-1] = suffix
        return "".join(pieces)
    pieces = [prefix]
    cursor = start
    for ins in inserts:
        if start <= ins.pos <= end:
            pieces.append(text[cursor : ins.pos])
            pieces.append(ins.text)
            cursor = ins.pos
    pieces.append(text[cursor:end])
    pieces.append(suffix)
    return "".join(pieces)


_POS = operator.attrgetter("pos")
_TEXT = operator.attrgetter("text")


def merge_spans(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Sorted spans with overlapping or touching ones joined."""
    merged: list[list[int]] = []
    for a, b in sorted(spans):
        if merged and a <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    return [(a, b) for a, b in merged]


_NO_CHAR = 0x1FFFFF
"""Past every code point: a joint's third character, where there is none (and the mask of one of 21 bits)."""

Window = tuple[int, int, int, int, int, str]
"""A seam window (`Counter._windows`): characters a to b, inserts first:last, the tokens before it, and the
text of its rotated insert (empty for a window of haystack text)."""

SNAP_VECTOR_MIN = 32
"""Needles from which a window's positions are worked out with numpy (`_snap_vector`): CWE's 300 words."""
SAFE_TABLE_CHARS = 64_000_000
"""Longest haystack text whose safe points are looked up by a table of one int32 per character
(`HaystackIndex.safe_of`, at most 256 MB) when hundreds of inserts are checked at once; longer ones search."""
PROMPT_APART = 512
"""Characters from which a prompt's text is cut at a class point of its own to count it apart from a window
(`Counter._frame_apart`): a shorter one costs less encoded with the window than its cut's check."""
PROMPT_TRIES = 4
"""Class points tried at each end of a prompt's text for a cut that counts apart (`_prompt_points`)."""
PROMPT_SCAN = 256
"""Characters of a prompt's text searched at a time, back from its end, for its last class point (`_prompt_points`)."""
LINE_BATCH = 16
"""Fewest uncounted lines of a block that a counter encodes together rather than one by one."""
LONG_INSERT = 256
"""Inserts of at least this many characters are cut inside (see `Counter`)."""
INSERT_EDGE = 64
"""Characters of a long insert kept with the seam on either side of its cut interior."""
CUT_CHECK_CHARS = 64
"""Each cut of a long insert is checked on the text this many characters either side of it."""
CUT_SEARCH = 4096
"""Characters searched for a class point to cut a long insert at, inward from each of its two edges."""
CUT_TRIES = 32
"""Places tried inward from an edge, where no class point is near it, for a cut where the text adds up."""


class Counter:
    """Exact token counts of assembled contexts over one haystack index.

    A count splits the assembled text at safe points of the haystack (`HaystackIndex.safe`): the
    stretches between seams are counted by index arithmetic, and only a small window around each
    seam (the window's start and end, each insertion) is encoded. Window texts repeat across the
    Newton steps of one placement and across items, so their counts are memoised (bounded).

    A long insert (FWE's blocks of lines, a passage) is itself cut at two points of the classes that
    verified on the haystack, `INSERT_EDGE` characters in from its ends (or, with no such point near
    an end, as a pad of dots has none, at the nearest place where the text adds up): its interior is
    counted once per insert text, and the seams see only its two edges. So trying another window
    start, which moves every insert, re-encodes short seam windows rather than every insert whole.
    A cut at a line start of a verified line class (a block of lines: FWE's) stands as the interior's own
    line starts do; any other cut is also checked where it is (the text around it counts as its two sides
    do), and an insert whose cut fails the check is counted whole. The outcome depends on the insert's
    text alone, never on which items came before.
    """

    MEMO_LIMIT = 200_000
    LONG_MEMO_CHARS = 64_000_000
    """Most characters of long insert texts kept as keys of the cut and interior memos (they are
    emptied past it): a long insert may be a whole context of half a megabyte."""

    def __init__(self, index: HaystackIndex) -> None:
        self.index = index
        self.tokenizer = index.tokenizer
        self._blanks = self.tokenizer.drops_blanks()  # counts add up across a blank (`joined`)
        self._memo: dict[str, int] = {}
        self._cuts: dict[str, tuple[int, int] | None] = {}
        self._interiors: dict[str, int] = {}
        self._totals: dict[str, int] = {}  # `tokens` of long insert texts
        self._inners: dict[str, int] = {}  # `_interior_of` by the interior's own text
        self._long_chars = 0  # characters of the keys of the long-insert memos (`_cuts`, `_interiors`, `_inners`)
        self._cut_pattern: Any = None
        self._split_pattern: Any = None  # the class points as a lookahead, to split an interior at them
        self._other_line: Any = None  # a line break not at a verified line start (False: no such class verified)
        self._line_start: Any = None  # a line break and a verified line start after it (False: no such class)
        self._joints: dict[str, bool] = {}
        self._per_line: dict[str, int] = {}  # `_lines_tokens`: a line's tokens with its line break (-1: not verified)
        self._first_chars: Any = None  # the first characters of the verified line classes' lines
        self._joint_codes: dict[int, bool] = {}  # `_joints` of three characters, keyed by their code points
        self._apart: dict[str, bool] = {}  # `_ends_apart`, by the two characters around a safe point
        self._prompt_cuts: dict[tuple[str, bool], int] = {}  # `_prompt_points`, by the prompt's text and end
        self._lined_views: dict[str, tuple[frozenset[int], frozenset[int]] | None] = {}  # `_lined_view` per snap
        self._no_breaks: dict[tuple[str, frozenset[str]], bool] = {}  # `breaks_add_nothing`
        # per snap, the characters after its boundaries where the tokenizer splits at every one (else None)
        self._split_boundaries: dict[str, frozenset[str] | None] = {}
        self._lined_joints: dict[tuple[str, frozenset[int]], bool] = {}  # `_lined_texts`, per set of last characters
        # `_line_counts`' last result: start, inserts, checkpoints, running counts, gaps
        self._last_lines: tuple[int, list[Insert], list[int], list[int], list[int]] | None = None
        self._last_texts: tuple[list[str], tuple[np.ndarray, np.ndarray, np.ndarray]] | None = None  # `_text_codes`

    def _remember_long(self, text: str) -> None:
        """Account for a long insert text about to be kept as a memo key, emptying the memos past the limits."""
        self._long_chars += len(text)
        if (
            self._long_chars > self.LONG_MEMO_CHARS
            or max(len(self._cuts), len(self._interiors), len(self._totals)) >= self.MEMO_LIMIT
        ):
            self._cuts.clear()
            self._interiors.clear()
            self._inners.clear()
            self._totals.clear()
            self._long_chars = len(text)

    def _cut(self, text: str) -> tuple[int, int] | None:
        """(head, tail) of a long insert: it is counted as `text[:head]` with the seam before it, the
        interior `text[head:tail]` on its own (`_interior_of`) and `text[tail:]` with the seam after it;
        None: counted whole."""
        if len(text) < LONG_INSERT or not self.index.safe_classes:
            return None
        if text in self._cuts:
            return self._cuts[text]
        forward, backward = self._patterns()

        def point(pattern: Any, lo: int, hi: int) -> Any:
            """A class point in `text[lo:hi]`, or None (at once where nothing could be one)."""
            return pattern.search(text, lo, hi) if CLASS_ANCHOR.search(text, max(0, lo - 1), hi + 1) else None

        n = len(text)
        head = point(forward, INSERT_EDGE, min(n - INSERT_EDGE, INSERT_EDGE + CUT_SEARCH))
        a = head.start() if head is not None else self._any_cut(text, range(INSERT_EDGE, INSERT_EDGE + CUT_TRIES))
        got = None
        if a is not None and n - INSERT_EDGE > a + 1:
            tail = point(backward, max(a + 1, n - INSERT_EDGE - CUT_SEARCH), n - INSERT_EDGE)
            if tail is not None:
                b: int | None = tail.start()
            else:  # no class point near the end (a pad of dots): a cut where the text adds up
                b = self._any_cut(text, range(n - INSERT_EDGE, max(a, n - INSERT_EDGE - CUT_TRIES), -1))
            if b is not None:  # a point before a line break moves past it, to a line start where one is verified
                a, b = self._to_line_start(text, a), self._to_line_start(text, b)
            if b is not None and a < b and self._holds(text, a) and self._holds(text, b):
                got = (a, b)
        self._remember_long(text)
        self._cuts[text] = got
        return got

    def _line_starts(self) -> Any:
        """A line break and the first character of a verified line class's line (False: no such class)."""
        if self._line_start is None:
            firsts = "".join(LINE_CLASSES[c] for c in LINE_CLASSES if c in self.index.safe_classes)
            self._line_start = re.compile(f"\\n[{firsts}]") if firsts else False
        return self._line_start

    def _to_line_start(self, text: str, at: int) -> int:
        """`at`, or the line start just after it where `at` is a line break before a verified line start."""
        starts = self._line_starts()
        return at + 1 if starts and starts.match(text, at) is not None else at

    def _holds(self, text: str, at: int) -> bool:
        """Whether a long insert may be cut at `at`: a line start of a verified line class (`LINE_CLASSES`),
        the points that `_interior` splits an interior at, holds as they do; any other cut is checked where it
        is (`_adds_up`)."""
        starts = self._line_starts()
        if starts and at > 0 and starts.match(text, at - 1) is not None:
            return True
        return self._adds_up(text, at)

    def _interior_of(self, text: str, head: int, tail: int) -> int:
        """Tokens of a long insert's interior `text[head:tail]` (memoised per insert text, and per interior: a
        needle counted alone after it was counted with its joiner has the same interior). Counted only when a
        count needs it: a frame's delta does not, as the interior is the same with the frame."""
        got = self._interiors.get(text)
        if got is None:
            got = self._lines_interior(text, head, tail)
            if got is None:
                inner = text[head:tail]
                got = self._inners.get(inner)
                if got is None:
                    got = self._interior(inner)
                    self._remember_long(inner)
                    self._inners[inner] = got
            self._remember_long(text)
            self._interiors[text] = got
        return got

    def _lines_interior(self, text: str, head: int, tail: int) -> int | None:
        """A `Lines` block's interior between two of its line starts, from its lines' counts (`_lines_tokens`: the
        block with a line break after it, split at every line start), less its lines before `head` and after
        `tail` (with that line break): FWE's blocks, whose interiors would otherwise be split and tallied line by
        line. None where the block is not counted by its lines or a cut is not at a line start."""
        if not isinstance(text, Lines) or not 0 < head < tail or text[head - 1] != "\n" or text[tail - 1] != "\n":
            return None
        whole = self._lines_tokens(text)
        if whole is None:
            return None
        return whole - self.encoded(text[:head]) - self.encoded(text[tail:] + "\n")

    def _patterns(self) -> tuple[Any, Any]:
        """The verified classes' points as one pattern, searching forwards and backwards."""
        if self._cut_pattern is None:
            import regex

            alternatives = "|".join(SAFE_CLASSES[c] for c in self.index.safe_classes)
            self._cut_pattern = (regex.compile(alternatives), regex.compile(alternatives, flags=regex.REVERSE))
        return self._cut_pattern  # type: ignore[no-any-return]

    def _joins(self, left: str, right: str) -> bool:
        """Whether seam window `right` may be counted in one encode after seam window `left`: where they meet
        (the last character of `left`, the first two of `right`, as far as any class looks) is a point of a
        class that verified on the haystack. Memoised by those three characters."""
        probe = left[-1:] + right[:2]
        got = self._joints.get(probe)
        if got is None:
            got = self._joints[probe] = self._patterns()[0].match(probe, 1) is not None
        return got

    def _ends_apart(self, text: str, s: int) -> bool:
        """Whether the text up to safe point `s` and the one character after it count apart when nothing follows
        that character: a verified class's pattern marks `s` with only those two characters around it (the
        punctuation class at a Chinese full stop, whose pattern looks one character ahead). The count of a
        context up to a rotated insert that shares that one character with the haystack is then the count up to
        `s` and the character's own (`offsets`); a class that looks further (a space between words) is not
        trusted there. Memoised by the two characters."""
        probe = text[s - 1 : s + 1]
        got = self._apart.get(probe)
        if got is None:
            got = self._apart[probe] = len(probe) == 2 and self._patterns()[0].match(probe, 1) is not None
        return got

    def _any_cut(self, text: str, places: range) -> int | None:
        """The first of `places` where the text adds up (`_adds_up`), for a long insert with no point of a
        verified class near an end."""
        return next((at for at in places if 0 < at < len(text) and self._adds_up(text, at)), None)

    def _adds_up(self, text: str, at: int) -> bool:
        """Whether the text around `at` counts as its two sides do."""
        a, b = max(0, at - CUT_CHECK_CHARS), at + CUT_CHECK_CHARS
        return self.encoded(text[a:b]) == self.encoded(text[a:at]) + self.encoded(text[at:b])

    def _interior(self, text: str) -> int:
        """Tokens of a long insert's interior: split at points of the verified classes and counted piece by
        piece (memoised) when its pieces repeat, as a word list's lines do; else one encode.

        Where every line break inside it is followed by a character that begins a line of a verified class
        (`LINE_CLASSES`: FWE's blocks, word lists), every line is a piece, split by `str.split`. Else the
        points are the line starts where that class verified (found by the standard `re`, many times
        faster than the Unicode classes), else every class's points: the class pattern as a lookahead,
        which splits where its matches start without a Python step per piece. Any subset of the points
        splits the count exactly."""
        from collections import Counter as Tally

        if self._other_line is None:
            firsts = "".join(LINE_CLASSES[c] for c in LINE_CLASSES if c in self.index.safe_classes)
            # a line break before a character that begins no verified class's lines
            self._other_line = re.compile(f"\\n(?=[^{firsts}])") if firsts else False
        if self._other_line and self._other_line.search(text) is None:
            lines = text.split("\n")
            last = lines.pop()
            tally = Tally(lines)
            if 2 * len(tally) <= len(lines) + 1:  # the lines repeat: count each once (else one encode, below)
                encoded = self.encoded
                return encoded(last) + sum(n * encoded(line + "\n") for line, n in tally.items())
        if self._split_pattern is None:
            if "line_start" in self.index.safe_classes:
                # line starts alone: a subset of the points, which the standard `re` finds many times faster
                self._split_pattern = class_pattern("line_start")
            else:
                import regex

                self._split_pattern = regex.compile(f"(?=(?:{self._patterns()[0].pattern}))")
        parts = self._split_pattern.split(text)
        pieces = Tally(parts)
        pieces.pop("", None)  # a point at the very start
        if 2 * len(pieces) > len(parts) + 1:  # mostly distinct pieces: one encode costs less
            return self._count(text)
        memo = self._memo
        counts = list(map(memo.get, pieces))
        if None in counts:
            counts = [self.encoded(piece) if got is None else got for piece, got in zip(pieces, counts, strict=True)]
        return sum(map(operator.mul, pieces.values(), counts))

    def tokens(self, text: str) -> int:
        """Token count of `text` alone: encoded, but a long one through its cut (`_cut`) or, a `Lines` block,
        from its lines' counts (`_lines_tokens`), and kept per text (every window start counted asks for each
        insert's count again)."""
        if len(text) < LONG_INSERT:
            return self.encoded(text)  # a short insert (a needle, which recurs across items) is memoised
        got = self._totals.get(text)
        if got is not None:
            return got
        if isinstance(text, Lines):  # its lines' counts, less the line break its last line lacks
            whole = self._lines_tokens(text)
            if whole is not None:
                last = text[text.rfind("\n") + 1 :]
                got = whole - self.encoded(last + "\n") + self.encoded(last)
                self._remember_long(text)
                self._totals[str(text)] = got  # (a plain key: a `Lines` may hold its stream's tallies)
                return got
        cut = self._cut(text)
        if cut is None:  # counted whole (a text of no cut is not kept: it may be a whole context)
            return self._count(text)
        head, tail = cut
        got = self._totals[text] = (
            self.encoded(text[:head]) + self._interior_of(text, head, tail) + self.encoded(text[tail:])
        )  # kept as `_cuts` keeps the text, and emptied with it (`_remember_long`)
        return got

    def breaks_add_nothing(self, snap: str, endings: Iterable[str]) -> bool:
        """Whether no break (`BREAKS`, all blanks) put at a boundary of `snap` can add a token, for inserts whose
        texts are among `endings` (only their last characters are read): the tokenizer discards whitespace and
        splits at every boundary, between the characters around it and between each insert's last character and
        the character after it (`Tokenizer.splits_at`), so each break's delta is zero (`_break_delta`'s first
        case) and every fill fails. Worked out once per snap and set of last characters."""
        if not (self._blanks and _BLANK_BREAKS):
            return False
        lasts = frozenset(text[-1:] for text in endings)
        rights = self._split_boundaries.get(snap, ())
        if rights == ():  # once per snap: the characters after its boundaries, where it splits at every one
            text, splits = self.index.text, self.tokenizer.splits_at
            pairs = {(text[q - 1], text[q]) for q in self.index.boundaries(snap) if 0 < q < len(text)}
            rights = self._split_boundaries[snap] = (
                frozenset(right for _, right in pairs) if all(splits(left, right) for left, right in pairs) else None
            )
        if rights is None:
            return False
        key = (snap, lasts)
        got = self._no_breaks.get(key)
        if got is None:
            splits = self.tokenizer.splits_at
            got = self._no_breaks[key] = all(splits(last, right) for last in lasts for right in rights)
        return got

    def know(self, texts: Sequence[str], counts: Sequence[int]) -> None:
        """Keep the `tokens` of long insert texts that the caller has counted (each text's own count, made the way
        `tokens` makes it): FWE's blocks of lines are counted from their lines' tallies without being hashed, and a
        window filled with line breaks counts its inserts again by their texts."""
        totals = self._totals
        for text, count in zip(texts, counts, strict=True):
            if len(text) >= LONG_INSERT and text not in totals:
                self._remember_long(text)
                totals[text] = count

    def joined_tokens(self, text: str, joiner: str, whole: str | None = None) -> int:
        """`tokens(text + joiner)`, for a `Lines` text whose last line the joiner ends (a line break) added up
        from its lines (`_lines_tokens`) where that holds. `whole`, where the caller has it, is `text + joiner`
        (the one string kept: its hash is worked out once)."""
        if whole is None:
            whole = text + joiner
        if isinstance(text, Lines) and joiner == "\n" and len(whole) >= LONG_INSERT:
            got = self._totals.get(whole)
            if got is None:
                got = self._lines_tokens(text)
                if got is None:
                    return self.tokens(whole)
                self._remember_long(whole)
                self._totals[whole] = got
            return got
        return self.tokens(whole)

    def _lines_tokens(self, text: Lines) -> int | None:
        """Tokens of `text` and a line break after it: each distinct line's count with its line break, times how
        often it occurs, where every line begins with a character of a line class verified on the haystack and
        ends with no whitespace (the text then splits at each of its line starts as `_interior` splits a block
        of lines; a byte-level BPE can join a space before a line break with it alone but not before a line);
        None otherwise, or where the tally is not the text's (`Lines.consistent`)."""
        return self._lines_tokens_each([text])[0]

    def _lines_tokens_each(self, texts: Sequence[Lines]) -> list[int | None]:
        """`_lines_tokens` of each text, the blocks of one stream added up together (`weighted_each`)."""
        if len(self._per_line) >= self.MEMO_LIMIT:
            self._per_line.clear()
        if not self._first_line_chars():
            return [None] * len(texts)
        return weighted_each(texts, self._line_tokens, self._lines_tokens_many)

    def _first_line_chars(self) -> Any:
        """The first characters of the verified line classes' lines, as a pattern (False: no such class)."""
        first = self._first_chars
        if first is None:
            firsts = "".join(LINE_CLASSES[c] for c in LINE_CLASSES if c in self.index.safe_classes)
            first = self._first_chars = re.compile(f"[{firsts}]") if firsts else False
        return first

    def _verified_line(self, line: str) -> bool:
        """Whether a line of a block can be counted alone: it begins with a character of a verified line class
        and does not end with whitespace."""
        first = self._first_chars
        return bool(first and line and first.match(line) and not line[-1].isspace())

    def _line_tokens(self, line: str) -> int:
        """A line's tokens with its line break after it (`_lines_tokens`), or -1 where a line of a block cannot be
        counted alone (`_verified_line`)."""
        per_line = self._per_line
        got = per_line.get(line)
        if got is None:
            got = per_line[line] = self.encoded(line + "\n") if self._verified_line(line) else -1
        return got

    def _lines_tokens_many(self, lines: list[str]) -> list[int]:
        """`_line_tokens` of each line, the verified lines not counted before encoded together
        (`_count_lines_together`) where there are `LINE_BATCH` or more of them (FWE's fresh coded words: a hundred
        and more an item)."""
        per_line = self._per_line
        fresh = [line for line in dict.fromkeys(lines) if line not in per_line and self._verified_line(line)]
        if len(fresh) >= LINE_BATCH:
            self._count_lines_together(fresh)
        return list(map(self._line_tokens, lines))

    def _count_lines_together(self, lines: list[str]) -> None:
        """Count verified lines (`_verified_line`) by one encode of them all, each followed by a line break: a line
        start of a verified line class is a safe point, where the tokens on either side do not depend on the other
        (`HaystackIndex`), so the tokens that begin within a line's stretch of the joined text are the line's own,
        as one encode of it alone gives them. Kept only where a token begins at every line's start, as that
        implies; nothing is kept otherwise (the lines are then encoded one by one)."""
        import numpy as np

        if len(self._per_line) + len(lines) >= self.MEMO_LIMIT:
            self._per_line.clear()
        starts = self.tokenizer.token_starts("\n".join(lines) + "\n")
        sizes = np.fromiter(map(len, lines), dtype=np.int64, count=len(lines)) + 1
        begins = np.zeros(len(lines), dtype=np.int64)
        np.cumsum(sizes[:-1], out=begins[1:])
        first = np.searchsorted(starts, begins)  # each line's first token
        if first[-1] >= len(starts) or (starts[first] != begins).any():
            return
        counts = np.diff(first, append=len(starts))
        self._per_line.update(zip(lines, counts.tolist(), strict=True))

    def piece(
        self,
        a: int,
        b: int,
        inserts: list[Insert] | tuple[Insert, ...],
        prefix: str = "",
        suffix: str = "",
        interiors: bool = True,
    ) -> int:
        """Tokens of `prefix + assemble(text, a, b, inserts) + suffix`, a seam window's text: encoded
        (memoised), but a long insert's interior counted once per insert text (`_cut`); with
        `interiors=False` the long inserts' interiors are left out (for differences in which they cancel)."""
        text = self.index.text
        if len(inserts) == 1:  # the usual seam: one short insert inside the window
            ins = inserts[0]
            if a <= ins.pos <= b and len(ins.text) < LONG_INSERT:
                return self.framed(prefix, text[a : ins.pos] + ins.text + text[ins.pos : b], suffix)
        total = 0
        parts: list[str] = []
        head = prefix  # the prefix before the first stretch, the suffix after the last (`framed`)
        cursor = a
        for ins in inserts:
            if not a <= ins.pos <= b:
                continue
            parts.append(text[cursor : ins.pos])
            cut = self._cut(ins.text)
            if cut is None:
                parts.append(ins.text)
            else:
                start, tail = cut
                parts.append(ins.text[:start])
                total += self.framed(head, "".join(parts), "")
                head = ""
                if interiors:
                    total += self._interior_of(ins.text, start, tail)
                parts = [ins.text[tail:]]
            cursor = ins.pos
        parts.append(text[cursor:b])
        return total + self.framed(head, "".join(parts), suffix)

    def framed(self, prefix: str, body: str, suffix: str) -> int:
        """`encoded(prefix + body + suffix)`, a window's text with the prompt around it (`_frame_apart`)."""
        total, text = self._frame_apart(prefix, body, suffix)
        return total + self.encoded(text)

    def _frame_apart(self, prefix: str, body: str, suffix: str) -> tuple[int, str]:
        """The count of the prompt's text that counts apart from a window's `body`, and the text left to encode
        with it. The prompt meets the body at a point of a class that verified on the haystack (`_joins`), or
        holds such a point itself, at least two characters from the body (`_prompt_points`): the counts add up
        there, and the part of the prompt beyond it counts alone (memoised: it is the same for every window an
        item tries, and it is long beside a seam window)."""
        if not (prefix or suffix) or not self.index.safe_classes:
            return 0, prefix + body + suffix
        total = 0
        if prefix:
            if body and self._joins(prefix, body):
                total, prefix = self.encoded(prefix), ""
            elif len(prefix) >= PROMPT_APART:
                cut = self._prompt_points(prefix, last=True)
                if cut:
                    total, prefix = self.encoded(prefix[:cut]), prefix[cut:]
        if suffix:
            if body and self._joins(body, suffix):
                total, suffix = total + self.encoded(suffix), ""
            elif len(suffix) >= PROMPT_APART:
                cut = self._prompt_points(suffix, last=False)
                if cut:
                    total, suffix = total + self.encoded(suffix[cut:]), suffix[:cut]
        return total, prefix + body + suffix

    def _prompt_points(self, text: str, last: bool) -> int:
        """The last (`last`) or the first point of a verified class in a prompt's text where the text counts as its
        two sides do (`_adds_up`), with the characters its pattern looks at inside the text (one before it, two
        after), or 0 where there is none. The classes were verified on the haystack, not on the prompt: a chat's
        added tokens (`<|im_start|>`, `[CLS]`) hold points of them that split no pre-token but one added token, so
        each point is checked where it is, the nearest few to that end tried. Memoised by the text and the end."""
        got = self._prompt_cuts.get((text, last))
        if got is None:
            pattern, n = self._patterns()[0], len(text)
            got, lo = 0, n
            if last:
                while lo > 1 and not got:  # back from the end, a stretch at a time
                    lo = max(1, lo - PROMPT_SCAN)
                    found = [m.start() for m in pattern.finditer(text, lo) if m.start() <= n - 2]
                    got = next((k for k in reversed(found[-PROMPT_TRIES:]) if self._adds_up(text, k)), 0)
                    if found and not got:
                        break  # the nearest points to the end fail: the prompt is counted with the window
            else:
                firsts = itertools.islice((m.start() for m in pattern.finditer(text, 1)), PROMPT_TRIES)
                got = next((k for k in firsts if k <= n - 2 and self._adds_up(text, k)), 0)
            if len(self._prompt_cuts) >= 1024:
                self._prompt_cuts.clear()
            self._prompt_cuts[(text, last)] = got
        return got

    def joined(self, left: str, right: str) -> int:
        """`encoded(left + right)`; for a tokenizer that discards whitespace (`Tokenizer.drops_blanks`), where
        they meet at a point it splits at (`Tokenizer.splits_at`: a blank, or for BERT's files punctuation or a
        CJK ideograph), the two counts added (each memoised: the haystack's edge stretches recur, the
        prompt around the context is the same for every end an item tries). The normaliser works character by
        character and keeps a blank a blank, so the pre-tokenizer splits there and drops it: the pieces the
        model sees are those of each side in turn. Where they meet at a point of a class that verified on the
        haystack (`_joins`: a word list's line start before a needle that ends the context), the counts add up
        for any tokenizer."""
        if self._blanks and self.tokenizer.splits_at(left[-1:], right[:1]):
            return self.encoded(left) + self.encoded(right)
        if left and right and self.index.safe_classes and self._joins(left, right):
            return self.encoded(left) + self.encoded(right)
        return self.encoded(left + right)

    def remember(self, pieces: Sequence[str], counts: Sequence[int] | None = None) -> None:
        """Put the counts of `pieces` in the memo `encoded` reads, counted here in one batch
        (`Tokenizer.count_many`) unless `counts` gives them (this tokenizer's counts of the same texts).
        A layout that knows which pieces its items will ask for (`Layout.prepare`) then pays for them once,
        before a compile's workers fork, instead of in every worker on first use; `encoded` finds the
        same counts either way. Nothing is kept where the memo would be emptied on the way."""
        fresh = [piece for piece in dict.fromkeys(pieces) if piece not in self._memo] if counts is None else pieces
        if len(self._memo) + len(fresh) > self.MEMO_LIMIT:
            return
        self._memo.update(zip(fresh, self.tokenizer.count_many(list(fresh)) if counts is None else counts, strict=True))

    def encoded(self, piece: str) -> int:
        """Token count of a seam window's text (memoised)."""
        got = self._memo.get(piece)
        if got is None:
            if len(self._memo) >= self.MEMO_LIMIT:
                self._memo.clear()
            got = self._memo[piece] = self._count(piece)
        return got

    def _count(self, text: str) -> int:
        """The tokenizer's count of `text`; for one that discards whitespace (`Tokenizer.drops_blanks`: a
        WordPiece's), from the counts of the pieces it counts apart at (`Tokenizer.count_pieces`), as a seam
        window, a prompt or a window's edge repeats the words of the haystack and of the templates."""
        if not self._blanks:
            return self.tokenizer.count(text)
        return self.tokenizer.count_pieces(text)

    def _bounds(self, start: int, end: int) -> tuple[Callable[[int], int], Callable[[int], int]]:
        """The nearest safe point at or after x (else `end`) and at or before x (else `start`), within the
        window [start, end): the edges of a seam window around position x."""
        idx = self.index
        safe = idx.safe

        def right(x: int) -> int:
            j = idx.safe_at_or_after(x)
            return safe[j] if j is not None and safe[j] < end else end

        def left(x: int) -> int:
            i = idx.safe_at_or_before(x)
            return safe[i] if i is not None and safe[i] > start else start

        return right, left

    def _windows(
        self, start: int, end: int, inserts: list[Insert], rotate: bool = True, for_offsets: bool = False
    ) -> list[Window]:
        """The seam windows of the assembled context, merged where they overlap or touch, in order.

        Each is (a, b, first, last, gap, rotated): the window's characters [a, b), the inserts `first:last`
        inside it, and the tokens of the haystack stretch between the previous window and this one (counted by
        index arithmetic: both ends are safe points). One pass over the inserts, which are in position
        order: the window of an insert at x runs from the safe point at or before x - 2 to the one at or
        after x + 1 (clipped to the context), and every insert lies in its own window.

        With `rotate`, an insert whose last characters are the haystack's just before it needs no window of
        haystack text (`_rotated`): it becomes a window of no characters at the safe point s before those
        characters (a == b == s) whose text is `rotated`, the insert as it reads from s on; a run of inserts
        at one position becomes one such window per insert, all at s. Else `rotated` is empty. `offsets`
        asks for windows `for_offsets`: no run is rotated whose shared characters are one (see `offsets`).
        """
        safe, safe_tok = self.index.safe, self.index.safe_tok
        n_safe = len(safe)
        after, before = bisect.bisect_left, bisect.bisect_right
        out: list[Window] = []
        j = after(safe, start + 1)
        a, b = start, (safe[j] if j < n_safe and safe[j] < end else end)
        first = 0
        gap = 0
        b_at = j  # the safe index of b (while b is not `end`)
        rotated = ""  # the text of the current window when it is a rotated insert
        n = len(inserts)
        done = 0  # inserts before this one were rotated together with an earlier one
        if rotate and n > 8 and b_at < n_safe and b < end:
            fast = self._all_rotated(inserts, start, b, b_at, end)
            if fast is not None:  # the windows the loop below makes for such inserts, made at once
                out, gaps, ats = fast
                a = b = inserts[-1].pos
                first, gap, b_at, done = n - 1, gaps[-1], ats[-1], n
                rotated = inserts[-1].text
        for k, ins in enumerate(inserts):
            if k < done:
                continue
            pos = ins.pos
            if rotate and b_at >= 0 and pos > b:
                at = before(safe, pos) - 1  # the last safe point at or before the insert
                if safe[at] >= b:
                    m = k + 1  # the run of inserts at this position: k to m - 1
                    while m < n and inserts[m].pos == pos:
                        m += 1
                    if (
                        for_offsets
                        and pos - safe[at] == 1
                        and (m > k + 1 or not self._ends_apart(self.index.text, safe[at]))
                    ):
                        turned = None  # (a run of several: the later ones' joint with nothing after it is not checked)
                    else:
                        turned = self._rotated(inserts[k:m], safe[at], inserts[m].pos if m < n else end, end)
                    if turned is None and m > k + 1 and pos - safe[at] > 1:  # the first alone (the others 2 on)
                        m = k + 1
                        turned = self._rotated(inserts[k:m], safe[at], pos, end)
                    if turned is not None:
                        for r, piece in enumerate(turned, start=k):
                            out.append((a, b, first, r, gap, rotated))
                            gap = safe_tok[at] - safe_tok[b_at]
                            a = b = safe[at]
                            first, b_at, rotated = r, at, piece
                        done = m
                        continue
            i = before(safe, pos - 2) - 1
            left = safe[i] if i >= 0 and safe[i] > start else start
            if left <= b:
                rotated = ""  # an insert joins the window of a rotated one: counted as written
                j = after(safe, pos + 1)
                if j < n_safe and safe[j] < end:
                    if safe[j] > b:
                        b, b_at = safe[j], j
                else:
                    b, b_at = end, -1
                continue
            out.append((a, b, first, k, gap, rotated))
            gap = safe_tok[i] - safe_tok[b_at]
            a, first, rotated = left, k, ""
            j = after(safe, pos + 1)
            b, b_at = (safe[j], j) if j < n_safe and safe[j] < end else (end, -1)
        i = before(safe, end - 2) - 1
        left = safe[i] if i >= 0 and safe[i] > start else start
        if left <= b:
            out.append((a, end, first, n, gap, ""))
        else:
            out.append((a, b, first, n, gap, rotated))
            out.append((left, end, n, n, safe_tok[i] - safe_tok[b_at], ""))
        return out

    def _all_rotated(
        self, inserts: list[Insert], start: int, b: int, b_at: int, end: int
    ) -> tuple[list[Window], list[int], list[int]] | None:
        """`_windows`' windows, but for its last, when every insert is its own rotated window at a safe point
        (`_rotation`): then they follow from the positions alone, with no call per insert; None where any
        insert is not so (the loop decides then). Also the gap before each insert's window and the safe
        index of its position."""
        got = self._rotation(inserts, b, b_at, end)
        if got is None:
            return None
        positions, texts, gaps, ats = got
        n = len(inserts)
        out: list[Window] = [(start, b, 0, 0, 0, "")]
        out += zip(positions, positions, range(n - 1), range(1, n), gaps, texts, strict=False)
        return out, gaps, ats

    def _rotation(
        self, inserts: Sequence[Insert], b: int, b_at: int, end: int
    ) -> tuple[list[int], list[str], list[int], list[int]] | None:
        """The inserts' positions, texts, gaps and safe indexes when every insert is at a safe point after `b`
        (the first window's end from the context's start, safe point `b_at`), each position two characters or
        more after the one before it and before `end`, and the inserts at each read as their own windows
        (`_rotated` with no tail: every joint before, between and after them is a point of a verified class):
        a word list's lines (CWE's hundreds); None otherwise. The gap before insert r is the haystack's tokens
        from the safe point before it (b, or insert r - 1's position) to its position. Worked out with numpy
        and one check per distinct joint, as `_windows`' loop would find them one insert at a time."""
        import numpy as np

        positions = list(map(_POS, inserts))
        texts = list(map(_TEXT, inserts))
        if positions[0] <= b or positions[0] < 1 or positions[-1] + 2 > end or not all(texts):
            return None
        got = self._rotated_at(np.array(positions, dtype=np.int64), texts, b_at)
        if got is None:
            return None
        gaps, ats = got
        return positions, texts, gaps.tolist(), ats.tolist()

    def _rotated_at(self, at: np.ndarray, texts: list[str], b_at: int) -> tuple[np.ndarray, np.ndarray] | None:
        """`_rotation`'s checks and gaps for inserts at positions `at` (a numpy array, in order) with `texts`, the
        first after safe point `b_at`, the last two characters or more before the context's end and every text
        non-empty (which the caller has checked): the gap before each insert and the safe index of its position,
        as arrays; None where they do not all read as their own rotated windows."""
        import numpy as np

        steps = at[1:] - at[:-1]
        if len(steps) and (steps.min() < 0 or (steps == 1).any()):
            return None
        safe, safe_tok = self.index.safe_arrays()
        if len(self.index.text) <= SAFE_TABLE_CHARS:  # each position's safe point read off a table
            ats = self.index.safe_of()[at].astype(np.int64)
            if (ats < 0).any():
                return None
        else:  # (a text too long for the table: a binary search each)
            ats = np.searchsorted(safe, at)
            if ats[-1] >= len(safe) or (safe[ats] != at).any():
                return None
        # the joints `_rotated` checks, before each insert (after the one before it at its place, if any) and
        # after the last at each place: each three characters (the left one and the two after it; two where an
        # insert is one character long), keyed by their code points, checked once and memoised
        ids, last, heads = self._text_codes(texts)
        codes = self.index.codes()
        lefts = codes[at - 1].astype(np.int64)
        same = steps == 0  # same[r]: insert r + 1 is at insert r's place
        if same.any():
            lefts[1:][same] = last[ids[:-1][same]]
        ends = np.ones(len(at), dtype=bool)  # the last insert at each place
        ends[:-1] = ~same
        after = at[ends]
        rights = (last[ids[ends]] << 42) | (codes[after].astype(np.int64) << 21) | codes[after + 1]
        if not self._all_joints(set(np.concatenate((rights, (lefts << 42) | heads[ids])).tolist())):
            return None
        gaps = safe_tok[ats]
        gaps[1:] -= gaps[:-1].copy()
        gaps[0] -= self.index.safe_tok[b_at]
        return gaps, ats

    def _lined_view(self, snap: str) -> tuple[frozenset[int], frozenset[int]] | None:
        """For `_LinedItem`, once per snap: where every boundary but the text's first character is a safe point
        two characters or more after the one before it, the code points just before the boundaries and the pairs
        at them (the first two characters, keyed as `_rotated_at` keys them); None otherwise."""
        if snap in self._lined_views:
            return self._lined_views[snap]
        import numpy as np

        index = self.index
        _, bounds = index.arrays(snap)
        at = bounds[(bounds > 0) & (bounds + 1 < len(index.text))]
        got = None
        if len(at) and not (np.diff(at) < 2).any() and (index.safe_of()[at] >= 0).all():
            codes = index.codes()
            lefts = frozenset(codes[at - 1].tolist())
            pairs = frozenset(((codes[at].astype(np.int64) << 21) | codes[at + 1]).tolist())
            got = (lefts, pairs)
        self._lined_views[snap] = got
        return got

    def _lined_texts(self, snap: str, needles: list[str], joiner: str) -> bool:
        """Whether the inserts `needles` make (each with `joiner` after it) read as their own rotated windows at any
        boundary of `snap` (`_rotated_at`'s joints for every character that can come before one and every pair that
        can follow it), where the boundaries allow it (`_lined_view`). The joints after the texts are checked once
        per set of last characters (every pair of the haystack's), the joints before them once each
        (`_joint_codes`)."""
        view = self._lined_view(snap) if len(self.index.text) <= SAFE_TABLE_CHARS else None
        if view is None:
            return False
        lefts, pairs = view
        # each insert text's first two characters and its last, read off the needles (each distinct one once where
        # they are short, CWE's 300 being ten words; FWE's long blocks are not hashed for it)
        distinct = set(needles) if max(map(len, needles)) < LONG_INSERT else needles
        ends = {((n[:2] if len(n) > 1 else (n + joiner)[:2]), (joiner or n)[-1]) for n in distinct}
        lasts = frozenset(ord(last) for _, last in ends)
        heads = {ord(h[0]) << 21 | (ord(h[1]) if len(h) > 1 else _NO_CHAR) for h, _ in ends}
        after = self._lined_joints.get((snap, lasts))
        if after is None:
            after = self._lined_joints[(snap, lasts)] = self._all_joints(
                {last << 42 | pair for last in lasts for pair in pairs}
            )
        return after and self._all_joints({left << 42 | head for left in lefts | lasts for head in heads})

    def _all_joints(self, probes: set[int]) -> bool:
        """Whether every joint of `probes` (three characters keyed by their code points, as `_rotated_at` keys
        them) is a point of a verified class, each checked once (`_joint_codes`)."""
        joints = self._joint_codes
        match = self._patterns()[0].match
        for k in probes - joints.keys():
            chars = chr(k >> 42) + chr(k >> 21 & _NO_CHAR) + ("" if k & _NO_CHAR == _NO_CHAR else chr(k & _NO_CHAR))
            joints[k] = match(chars, 1) is not None
        return all(map(joints.__getitem__, probes))

    def _text_codes(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """For `_rotation`: each text's rank among the distinct texts, and per distinct text its last
        character's code point and its first two's (the second `_NO_CHAR` where there is none). Kept for the
        last list of texts: every start of an item places the same texts in the same order."""
        import numpy as np

        last = self._last_texts
        if last is not None and last[0] == texts:
            return last[1]
        distinct = list(dict.fromkeys(texts))
        rank = {t: r for r, t in enumerate(distinct)}
        ids = np.array(list(map(rank.__getitem__, texts)), dtype=np.int64)
        ends = np.array([ord(t[-1]) for t in distinct], dtype=np.int64)
        heads = np.array([ord(t[0]) << 21 | (ord(t[1]) if len(t) > 1 else _NO_CHAR) for t in distinct], dtype=np.int64)
        self._last_texts = (list(texts), (ids, ends, heads))  # (a copy: the caller keeps the list it gave)
        return ids, ends, heads

    def _line_counts(
        self, start: int, end: int, inserts: list[Insert], prefix: str
    ) -> tuple[list[int], list[int], list[int]] | None:
        """Where `_windows` makes every insert its own rotated window at once (`_rotation`), the context's
        checkpoints and counts without its windows: the end of the first window (the haystack from `start`
        to its first safe point, after `prefix`) and each insert's position; the count up to each (the one
        before it, the haystack's tokens between by index arithmetic, and the insert's own tokens, as `_sum`
        adds them); and the gap before each insert. None where `_windows` takes no such fast path."""
        safe = self.index.safe
        j = bisect.bisect_left(safe, start + 1)
        m = len(inserts)
        if m <= 8 or j >= len(safe) or safe[j] >= end:
            return None
        last = self._last_lines
        if last is not None and last[0] == start and m <= len(last[1]):
            # the last context's first m inserts (the window's, after a start's stem with its deepest needle
            # moved to the end): the same checkpoints and counts, shifted by the head, where the prefix's last
            # insert was one at its place there too (its joint after it was checked) and ends before `end`
            _, known, points, running, gaps = last
            if (m == len(known) or known[m].pos != known[m - 1].pos) and points[m] + 2 <= end and known[:m] == inserts:
                shift = self.encoded(prefix + self.index.text[start : safe[j]]) - running[0]
                return points[: m + 1], [t + shift for t in running[: m + 1]], gaps[:m]
        got = self._rotation(inserts, safe[j], j, end)
        if got is None:
            return None
        positions, texts, gaps, _ = got
        head = self.encoded(prefix + self.index.text[start : safe[j]])
        own = {t: self.encoded(t) if len(t) < LONG_INSERT else self.tokens(t) for t in set(texts)}
        counts = list(map(own.__getitem__, texts))
        running = list(itertools.accumulate(map(operator.add, gaps, counts), initial=head))
        points = [safe[j], *positions]
        self._last_lines = (start, list(inserts), points, running, gaps)
        return list(points), list(running), list(gaps)

    def _rotated(self, run: list[Insert], s: int, following: int, end: int) -> list[str] | None:
        """The texts of a run of inserts at one position read from safe point `s` (at or before it) on, when
        none needs a seam window there.

        The haystack characters between s and the inserts (the tail) must be the last characters of each
        (a sentence's closing punctuation and space before a needle that ends the same way; a word list's
        line break before a line). Then the context reads, from s on, one `rotated` text per insert (the
        tail and the insert less its same last characters), followed by the haystack from s as it was:
        the tail and the first insert, then each insert's tail (the next one's start), then the last one's,
        which the haystack from s repeats. Every joint, before the first text, between two and after the
        last, must be a point of a verified class, with the characters on both sides as far as a class looks
        (the next insert and the end at least two characters past s): the context then splits at each, and
        each insert adds the tokens of its rotated text alone (a long one through its cut, `tokens`). None
        otherwise."""
        pos = run[0].pos
        d = pos - s
        if following < s + 2 or end < s + 2 or s < 1:
            return None
        hay = self.index.text
        tail = hay[s:pos]
        turned: list[str] = []
        left = hay[s - 1]
        for ins in run:
            text = ins.text
            if d >= len(text) or (d and not text.endswith(tail)):
                return None
            piece = tail + text[: len(text) - d]
            if not self._joins(left, piece):
                return None
            turned.append(piece)
            left = piece
        if not self._joins(left, hay[s : s + 2]):
            return None
        return turned

    def _in_order(self, start: int, end: int, inserts: list[Insert]) -> bool:
        """Whether the inserts are in position order and inside [start, end] (what `_windows` needs)."""
        previous = start
        for pos in inserts.positions if isinstance(inserts, InsertColumns) else map(_POS, inserts):
            if pos < previous:
                return False
            previous = pos
        return previous <= end

    def count(self, start: int, end: int, inserts: list[Insert], prefix: str = "", suffix: str = "") -> int:
        text = self.index.text
        if not self.index.local or not self._in_order(start, end, inserts):
            return self._count(prefix + assemble(text, start, end, inserts) + suffix)
        return self._sum(self._windows(start, end, inserts), inserts, start, end, prefix, suffix)

    def _sum(
        self,
        windows: list[Window],
        inserts: list[Insert],
        start: int,
        end: int,
        prefix: str = "",
        suffix: str = "",
    ) -> int:
        """The tokens of `windows` (seam windows of a context from `start` to `end`, as `_windows` gives them)
        and of the haystack stretches before each (their gaps): the count of the context when the windows
        are all of its windows, and of a stretch of it between two checkpoints when they are a run of them.

        A window whose text was counted before adds its memoised count. The others are encoded together, in
        runs whose joints are points of a verified class (`_joins`): one encode for a run of windows rather
        than one per window, which is most of a count's cost when there are hundreds of inserts (a word
        list's). Each window begins and ends at a safe point, with the haystack's own characters on either
        side of it as far as any class looks, so a run splits where its windows meet as the context splits
        at their edges. A window with a long insert is counted by `piece`, as before.
        """
        text = self.index.text
        memo = self._memo
        total = 0
        run: list[str] = []  # uncounted window texts, to be encoded together

        def flush() -> int:
            got = self.encoded(run[0]) if len(run) == 1 else self._count("".join(run))
            run.clear()
            return got

        for a, b, first, last, gap, rotated in windows:
            total += gap
            if rotated:  # an insert with no seam window: its own tokens (`_rotated`)
                total += self.encoded(rotated) if len(rotated) < LONG_INSERT else self.tokens(rotated)
                continue
            head = prefix if a == start else ""
            tail = suffix if b == end else ""
            if last - first == 1 and len(inserts[first].text) < LONG_INSERT:
                ins = inserts[first]
                piece = text[a : ins.pos] + ins.text + text[ins.pos : b]
            elif last == first:
                piece = text[a:b]
            elif all(len(ins.text) < LONG_INSERT for ins in inserts[first:last]):
                piece = assemble(text, a, b, inserts[first:last])
            else:
                total += self.piece(a, b, inserts[first:last], head, tail)
                continue
            if head or tail:  # the prompt around the context: counted apart where a class point allows
                apart, piece = self._frame_apart(head, piece, tail)
                total += apart
            known = memo.get(piece)
            if known is not None:
                total += known
                continue
            if run and not self._joins(run[-1], piece):
                total += flush()
            run.append(piece)
        if run:
            total += flush()
        return total

    def plain(self, start: int, end: int, suffix: str = "") -> int:
        """`count(start, end, [], "", suffix)`, the haystack alone with a suffix, by the same two edge
        windows and index arithmetic between them, without the machinery for inserts: a window end search
        calls it once per end tried."""
        index = self.index
        if not index.local:
            return self.count(start, end, [], "", suffix)
        safe, text, encoded = index.safe, index.text, self.encoded
        j = bisect.bisect_left(safe, start + 1)
        if j >= len(safe) or safe[j] >= end:
            return encoded(text[start:end] + suffix)
        i = bisect.bisect_right(safe, end - 2) - 1
        if i < 0 or safe[i] <= safe[j]:  # the two edge windows touch: one window
            return encoded(text[start:end] + suffix)
        between = index.safe_tok[i] - index.safe_tok[j]
        head = self._stretch(start, safe[j], None, j)
        if head is None:
            head = encoded(text[start : safe[j]])
        if self._blanks and (not suffix or self.tokenizer.splits_at(text[end - 1 : end], suffix[:1])):
            tail = self._stretch(safe[i], end, i, None)
            if tail is not None:
                return head + between + tail + (encoded(suffix) if suffix else 0)
        return head + between + self.joined(text[safe[i] : end], suffix)

    def _stretch(self, a: int, b: int, safe_a: int | None, safe_b: int | None) -> int | None:
        """Tokens of the haystack's `text[a:b]` from its token starts, without an encode, for a tokenizer that
        discards whitespace (`drops_blanks`) where the text splits at both ends: each is a safe point (`safe_a`,
        `safe_b`: its index in `safe`, where the caller knows it is one), the text's edge, or next to a blank. The
        tokens of the whole haystack that begin in the stretch are then the stretch's own: none crosses an end,
        and the pieces between are cut as they are in the haystack. None where that does not hold (a seam
        window's edge fragment of a UUID, counted here, is a piece no other text holds)."""
        if not self._blanks:
            return None
        index, text = self.index, self.index.text
        n = len(text)
        for x, known in ((a, safe_a), (b, safe_b)):
            if known is None and 0 < x < n and text[x - 1] not in BLANKS and text[x] not in BLANKS:
                return None
        starts = index.tok_char
        first = index.safe_tok[safe_a] if safe_a is not None else bisect.bisect_left(starts, a)
        last = index.safe_tok[safe_b] if safe_b is not None else bisect.bisect_left(starts, b)
        return last - first

    def frame_delta(self, start: int, end: int, inserts: list[Insert], prefix: str, suffix: str) -> int:
        """count(prefix + C + suffix) - count(C) for the assembled context C, from its two edge windows only.

        The seam windows split C where counts add up, so only the first and the last window see the frame;
        they are found by merging, from each edge inwards, just the insert windows that touch them (a
        context of thousands of inserts costs a few lookups here, not a pass over all of them).
        """
        if not prefix and not suffix:
            return 0
        text = self.index.text
        if not self.index.local or not self._in_order(start, end, inserts):
            context = assemble(text, start, end, inserts)
            return self._count(prefix + context + suffix) - self._count(context)
        right, left = self._bounds(start, end)

        head_end = right(start + 1)
        for ins in inserts:
            if left(ins.pos - 2) > head_end:
                break
            head_end = max(head_end, right(ins.pos + 1))
        tail_start = left(end - 2)
        for ins in reversed(inserts):
            if right(ins.pos + 1) < tail_start:
                break
            tail_start = min(tail_start, left(ins.pos - 2))
        positions = inserts.positions if isinstance(inserts, InsertColumns) else list(map(_POS, inserts))

        def framed(a: int, b: int, before: str, after: str) -> int:
            within = inserts[bisect.bisect_left(positions, a) : bisect.bisect_right(positions, b)]
            # a long insert's interior is the same with the frame and without: left out of both
            return self.piece(a, b, within, before, after, False) - self.piece(a, b, within, interiors=False)

        if tail_start <= head_end:  # one window holds both edges
            return framed(start, end, prefix, suffix)
        return framed(start, head_end, prefix, "") + framed(tail_start, end, "", suffix)

    def offsets(self, start: int, end: int, inserts: list[Insert]) -> list[int]:
        """Tokens of the context before each insert (the count of the assembled text from `start` up to the
        insert's first character), all in one pass over the seam windows: per insert, the count up to the
        window that holds it plus one encode of that window's part before the insert.

        A rotated insert needs no encode: the text before it is the count up to its rotated text plus the
        shared characters that text starts with (none when the insert sits at the safe point itself). The
        joint before the rotated text was checked with those characters after it, as many as a class looks
        at, so the prefix splits there too; that needs two of them or none, and a run whose shared
        characters are one is not rotated here."""
        text = self.index.text
        if not self.index.local or not self._in_order(start, end, inserts):
            return [
                self._count(assemble(text, start, ins.pos, list(inserts[:rank]))) if ins.pos > start or rank else 0
                for rank, ins in enumerate(inserts)
            ]
        # inserts rotated at safe points (a word list's lines): the count up to each and the gap before it; the
        # inserts that end the context (a deepest needle moved there) from the last such point on
        m = len(inserts)
        while m and inserts[m - 1].pos + 2 > end:
            m -= 1
        if m > 8 and (m == len(inserts) or inserts[m].pos >= inserts[m - 1].pos + 2):
            lines = self._line_counts(start, end, inserts[:m], "")
            if lines is not None:
                points, running, gaps = lines
                found = list(map(operator.add, running, gaps))
                if m < len(inserts):
                    found += [running[m] + t for t in self.offsets(points[-1], end, inserts[m:])]
                return found
        out: list[int] = []
        before = 0  # tokens of the assembled text before the current window
        for a, b, first, last, gap, rotated in self._windows(start, end, inserts, for_offsets=True):
            before += gap
            if rotated:  # one insert, read from a == b == s: the shared characters, then the insert
                shared = inserts[first].pos - a
                out.append(before + self.encoded(rotated[:shared]) if shared else before)
                before += self.encoded(rotated) if len(rotated) < LONG_INSERT else self.tokens(rotated)
                continue
            for rank in range(first, last):
                pos = inserts[rank].pos
                earlier = inserts[first:rank]
                out.append(before + self.piece(a, pos, earlier) if pos > a or earlier else before)
            before += self.piece(a, b, inserts[first:last])
        return out


class _Stem:
    """The running count of one window start's context with its inserts, kept at the safe points between
    its seam windows: checkpoint k is `count(begin, points[k], inserts[:r], prefix)` with the r inserts
    before that point.

    Another count from the same start whose first r inserts are the stem's, and whose other inserts and
    end lie at least two characters past a checkpoint (where the counter's seam windows begin), is that
    checkpoint's count plus the count from it on: the counter splits exactly at a safe point outside every
    seam window. So the end searches of one window start (every end tried, the deepest needles moved to
    the end, line breaks added near it) count the context once and then only what lies after the last
    checkpoint each shares.

    A checkpoint's count is worked out when a count first needs it, from the nearest one known (before or
    after it: counts add up across checkpoints), its windows counted together (`Counter._sum`). The end
    searches need the last few checkpoints only, so a context of hundreds of inserts costs one run. Where
    every insert is its own rotated window at a safe point (a word list's lines), every checkpoint's count
    is known at once, without windows (`Counter._line_counts`).
    """

    def __init__(self, counter: Counter, begin: int, inserts: list[Insert], prefix: str) -> None:
        self.counter = counter
        self.begin = begin
        self.inserts = inserts
        self.prefix = prefix
        self.windows: list[Window] = []
        self.points: list[int] = []  # checkpoint k: the end of window k
        self.before: list[int] = []  # checkpoint k: the inserts before it
        self._known: dict[int, int] = {-1: 0}  # checkpoint -> count up to it (-1: the start, nothing counted)
        self.lines = False  # every insert its own rotated window (`Counter._line_counts`)
        index = counter.index
        limit = len(index.text)
        if not index.local:
            return  # no checkpoints: every count is the counter's own
        lines = counter._line_counts(begin, limit, inserts, prefix)  # (it checks the inserts' order itself)
        self.lines = lines is not None
        if lines is not None:  # a word list's lines: every checkpoint's count at once, without windows
            self.points, running, _ = lines
            i = bisect.bisect_right(index.safe, limit - 2) - 1
            if (index.safe[i] if i >= 0 and index.safe[i] > begin else begin) <= self.points[-1]:
                self.points.pop()  # the last insert's window reaches the text's end: `_windows` makes it the last
            self.before = list(range(len(self.points)))
            self._known.update(zip(self.before, running, strict=False))  # running: one more (the popped)
            return
        if not counter._in_order(begin, limit, inserts):
            return
        self.windows = counter._windows(begin, limit, inserts)[:-1]
        self.points = [w[1] for w in self.windows]
        self.before = [w[3] for w in self.windows]

    def _through(self, k: int) -> int:
        """The count of the context up to checkpoint k, from the nearest checkpoint known."""
        known = self._known
        got = known.get(k)
        if got is not None:
            return got
        near = min(known, key=lambda j: abs(j - k))
        counter, begin, inserts = self.counter, self.begin, self.inserts
        # end -1: no window of a run between checkpoints ends the context, so none takes a suffix
        if near < k:  # count the windows after it, up to k
            got = known[near] + counter._sum(self.windows[near + 1 : k + 1], inserts, begin, -1, self.prefix)
        else:  # take away the windows after k, up to it
            got = known[near] - counter._sum(self.windows[k + 1 : near + 1], inserts, begin, -1, self.prefix)
        known[k] = got
        return got

    def count(self, end: int, inserts: list[Insert], shared: int, suffix: str = "") -> int:
        """`counter.count(begin, end, inserts, prefix, suffix)` for inserts whose first `shared` are the stem's."""
        counter = self.counter
        k = bisect.bisect_right(self.points, end - 2) - 1
        while k >= 0:
            r = self.before[k]
            point = self.points[k]
            if r < shared or (r == shared and (r == len(inserts) or inserts[r].pos >= point + 2)):
                rest = inserts[r:]
                if not rest:
                    return self._through(k) + counter.plain(point, end, suffix)
                if len(rest) == 1 and rest[0].pos == end and len(rest[0].text) < LONG_INSERT:
                    # one insert that ends the window (a deepest needle moved to the end): its seam window
                    # is the window's last, so it reads as part of the suffix
                    return self._through(k) + counter.plain(point, end, rest[0].text + suffix)
                if counter._in_order(point, end, rest):
                    return self._through(k) + counter.count(point, end, rest, "", suffix)
                break
            k -= 1
        return counter.count(self.begin, end, inserts, self.prefix, suffix)

    def count_ending(self, end: int, ending: list[str], suffix: str = "") -> int:
        """`count(end, inserts, shared, suffix)` for the stem's inserts but its last `len(ending)`, which are the
        texts `ending` at `end` instead (the deepest needles moved to the window's end, `_end_with_deepest`),
        without making that list of inserts for every end tried."""
        counter, inserts = self.counter, self.inserts
        shared = len(inserts) - len(ending)
        k = bisect.bisect_right(self.points, end - 2) - 1
        while k >= 0:
            r = self.before[k]
            point = self.points[k]
            if r < shared or (r == shared and (not ending or end >= point + 2)):
                if r == shared and len(ending) == 1 and len(ending[0]) < LONG_INSERT:
                    # one insert that ends the window: its seam window is the window's last, so it reads as part
                    # of the suffix
                    return self._through(k) + counter.plain(point, end, ending[0] + suffix)
                rest = [*inserts[r:shared], *(Insert(end, text) for text in ending)]
                if not rest:
                    return self._through(k) + counter.plain(point, end, suffix)
                if counter._in_order(point, end, rest):
                    return self._through(k) + counter.count(point, end, rest, "", suffix)
                break
            k -= 1
        moved = [*inserts[:shared], *(Insert(end, text) for text in ending)]
        return counter.count(self.begin, end, moved, self.prefix, suffix)


@dataclass(frozen=True)
class _Placed:
    """What every window start of an item places (`_place_on_boundaries`): the needles, their order by depth, their
    insert texts and own tokens in that order, their aims from a start's token index, the joiner, the prompt
    around the context and the target count, their depths; and what a window is judged by (each needle's tokens,
    the depth tolerance, the number of targets)."""

    needles: list[str]
    order: list[int]
    texts: list[str]
    own: list[int]
    aimed: list[int]
    joiner: str
    prefix: str
    suffix: str
    target: int
    depths: list[float]
    needle_tokens: list[int]
    tolerance: float | None
    targets: int


class _LinedItem:
    """An item's inserts over a word list (`LINED_STEMS`): many inserts, each of which reads as its own rotated
    window at any boundary of the haystack where it may go (`Counter._lined_view`, checked once per view and once
    per item). A window start's count is then its first stretch, the haystack's tokens by index arithmetic and the
    inserts' own tokens, wherever the inserts are, so a start (`_LinedStart`) is counted with no step per insert:
    only the first and the deepest positions are worked out (the snap of the needles' running maximum aim, as the
    positions are the running maximum of a snap that grows with the aim), and every position only where a window is
    taken or filled. Every count is the one the general way gives (`tests/test_lined_stems.py`)."""

    def __init__(self, counter: Counter, snap: str, placed: _Placed) -> None:
        import numpy as np

        self.counter, self.snap = counter, snap
        self.texts, self.needles, self.order, self.joiner = placed.texts, placed.needles, placed.order, placed.joiner
        self.prefix, self.suffix, self.target, self.depths = placed.prefix, placed.suffix, placed.target, placed.depths
        # what a window is judged by: each needle's tokens, the depth tolerance and the number of targets
        self.needle_tokens, self.tolerance, self.targets = placed.needle_tokens, placed.tolerance, placed.targets
        depths = placed.depths
        self.ending = sum(depth >= 100.0 for depth in depths) if max(depths) >= 100.0 else 0  # needles ending it
        self.bounds = counter.index.boundaries(snap)
        self.aims = np.asarray(placed.aimed, dtype=np.int64)
        self.top: list[int] = np.maximum.accumulate(self.aims).tolist()  # the largest aim of the first k + 1
        self.own = _own_tokens(placed.own)  # the inserts' own tokens, summed from 0
        self.owns: list[int] = self.own.tolist()
        self.own_each = placed.own  # each insert's own tokens, in order

    def depth_error(self, chars: np.ndarray, achieved: list[float], total: int) -> float | None:
        """`_depth_error` of a window with every needle a target, worked out in insert order from its arrays
        (`chars`: each insert's character offset, `achieved`: each one's depth): the same sums, the inserts being
        in character order already; None where two inserts share a character (the general way then decides)."""
        import numpy as np

        if len(chars) > 1 and bool((chars[1:] <= chars[:-1]).any()):
            return None
        after, depths = self._judged
        reachables = 100.0 * np.maximum(0, total - after) / total
        aimed = np.minimum(depths, reachables)
        return float(np.abs(np.asarray(achieved, dtype=np.float64) - aimed).max())

    @functools.cached_property
    def _judged(self) -> tuple[np.ndarray, np.ndarray]:
        """For `depth_error`, in insert order: the needles' tokens from each on (how deep it can sit) and their
        depths."""
        import numpy as np

        order = np.asarray(self.order, dtype=np.intp)
        tokens = np.asarray(self.needle_tokens, dtype=np.int64)[order]
        return np.cumsum(tokens[::-1])[::-1], np.asarray(self.depths, dtype=np.float64)[order]

    @functools.cached_property
    def by_needle(self) -> np.ndarray:
        """Each needle's rank in `order` (for a window taken)."""
        import numpy as np

        return np.argsort(np.asarray(self.order, dtype=np.int64), kind="stable")

    @functools.cached_property
    def written(self) -> np.ndarray:
        """The characters of the inserts before each, from 0 (for a window taken)."""
        import numpy as np

        texts = self.texts
        written = np.zeros(len(texts) + 1, dtype=np.int64)
        np.cumsum(np.fromiter(map(len, texts), dtype=np.int64, count=len(texts)), out=written[1:])
        return written

    @classmethod
    def make(cls, counter: Counter, snap: str, placed: _Placed) -> _LinedItem | None:
        """The item's `_LinedItem`, or None where its starts are counted the general way."""
        texts = placed.texts
        if not LINED_STEMS or len(texts) < SNAP_VECTOR_MIN or not counter.index.local or not all(texts):
            return None
        if not counter._lined_texts(snap, placed.needles, placed.joiner):
            return None
        return cls(counter, snap, placed)

    def snap_one(self, wanted: int, lo: int, hi: int) -> int:
        """`_snap_array`'s position for one target token, with `always` at `lo` (`hi` not below it)."""
        index, bounds = self.counter.index, self.bounds
        n = len(bounds)
        x = index.tok_char[min(max(wanted, 0), index.n_tokens)]
        y = min(max(x, lo), hi)
        j = bisect.bisect_left(bounds, y)
        before, after = bounds[max(j - 1, 0)], bounds[min(j, n - 1)]
        before_ok = j > 0 and lo <= before <= hi
        after_ok = j < n and lo <= after <= hi
        nearer_after = after_ok and (not before_ok or abs(after - y) < abs(before - y))
        q = after if nearer_after else before if before_ok else lo
        return lo if (not before_ok and not after_ok) or abs(lo - x) < abs(q - x) else q

    def start(self, begin: int, t_first: int, hi: int) -> _LinedStart | None:
        """The window start `begin` (token index `t_first`, needles up to character `hi`) where every insert is its
        own rotated window there, as `Counter._line_counts` finds it; None where not (the general way decides)."""
        index = self.counter.index
        safe, limit = index.safe, len(index.text)
        j = bisect.bisect_left(safe, begin + 1)
        if hi < begin or j >= len(safe) or safe[j] >= limit or not self.bounds:
            return None
        first = self.snap_one(t_first + self.top[0], begin, hi)
        last = self.snap_one(t_first + self.top[-1], begin, hi)
        if first <= safe[j] or last + 2 > limit:
            return None
        return _LinedStart(self, begin, t_first, hi, j, last)


class _LinedStart:
    """One window start of a `_LinedItem`: the counts of its end searches by arithmetic, and its positions, inserts
    and stem made when first read (a window taken or filled, or a case the arithmetic leaves to the general way)."""

    def __init__(self, item: _LinedItem, begin: int, t_first: int, hi: int, j: int, last: int) -> None:
        index = item.counter.index
        self.item, self.begin, self.t_first, self.hi, self.last = item, begin, t_first, hi, last
        self.b_tok = index.safe_tok[j]  # the first safe point after `begin`: where the first stretch ends
        self.first_stretch = index.text[begin : index.safe[j]]
        # the count of the context up to a safe point `p` with the first k inserts before it: this, the tokens of
        # the haystack to `p` (`safe_tok`) and the first k inserts' own tokens
        self.head = item.counter.encoded(item.prefix + self.first_stretch) - self.b_tok
        self._spots: list[int] | None = None
        self._inserts: list[Insert] | None = None
        self._stem: _Stem | None = None

    @property
    def spots(self) -> list[int]:
        """The inserts' positions, in order (`_snap_ordered`'s)."""
        if self._spots is None:
            self._spots = self.spot_array.tolist()
        return self._spots

    @functools.cached_property
    def spot_array(self) -> np.ndarray:
        """`spots` as an array."""
        item = self.item
        at = _snap_array(item.aims + self.t_first, item.counter.index, item.snap, self.begin, self.hi, self.begin)
        assert at is not None  # (`hi` is not below `begin`, and the snap has boundaries)
        return at

    @property
    def inserts(self) -> list[Insert]:
        if self._inserts is None:
            texts = self.item.texts
            self._inserts = list(map(tuple.__new__, itertools.repeat(Insert), zip(self.spots, texts, strict=True)))
        return self._inserts

    @property
    def stem(self) -> _Stem:
        if self._stem is None:
            item = self.item
            item.counter.know(item.texts, item.own_each)  # (a window filled: its stem counts the long inserts)
            self._stem = _Stem(item.counter, self.begin, self.inserts, item.prefix)
        return self._stem

    def _tokens_at(self, point: int) -> int:
        """The haystack's token index at safe point `point`."""
        index = self.item.counter.index
        return index.safe_tok[bisect.bisect_left(index.safe, point)]

    def laid(self, end: int, shared: int) -> tuple[list[Insert], _Stem]:
        """A short window's inserts (every one in place, or with the deepest ending the context at `end` where
        `shared` is one fewer) and this start's stem (`_Short`)."""
        if shared == len(self.item.texts):
            return self.inserts, self.stem
        return self._ending(end), self.stem

    def _ending(self, end: int) -> list[Insert]:
        """The inserts with the deepest one moved to `end`, without its joiner (`_end_with_deepest`)."""
        item = self.item
        inserts = list(self.inserts)
        inserts[-1] = Insert(end, item.needles[item.order[-1]])
        return inserts

    def end_counter(self) -> Callable[[int], int]:
        """`_end_counter`: the count of the window from `begin` to the text end before boundary j."""
        item = self.item
        counter, text, bounds, suffix = item.counter, item.counter.index.text, item.bounds, item.suffix
        n, last = len(item.texts), self.last
        through = self.head + self._tokens_at(last) + item.owns[n]  # every insert, up to the last one's position
        known: dict[int, int] = {}

        def count(j: int) -> int:
            got = known.get(j)
            if got is None:
                end = _text_end(text, bounds[j], self.begin)
                if end >= last + 2:  # the haystack from the last insert on, where its joint after it lies inside
                    got = through + counter.plain(last, end, suffix)
                else:
                    got = self.stem.count(end, self.inserts, n, suffix)
                known[j] = got
            return got

        return count

    def deepest(self, k_end: int) -> Placement | _Short | None:
        """`_end_with_deepest` for this start: the deepest needle ends the window, at the boundary that makes the
        count exact. With one needle to move (none at depth 100 beside it), by arithmetic up to the insert before
        it, the stretch after it counted as the stem counts it; else the general way."""
        item = self.item
        counter, index, bounds, order = item.counter, item.counter.index, item.bounds, item.order
        n = len(order)
        text = item.needles[order[-1]]
        if n < 2 or item.ending > 1:
            return self._deepest_by_stem(k_end)
        floor = self.item.snap_one(self.t_first + item.top[n - 2], self.begin, self.hi)  # the insert before it
        lo = bisect.bisect_right(bounds, floor)
        hi = min(len(bounds) - 1, bisect.bisect_right(bounds, index.tok_char[min(k_end + 64, index.n_tokens)]))
        if lo > hi:
            return None
        if bounds[lo] < floor + 2:  # (boundaries closer than two characters: the stem's own way)
            return self._deepest_by_stem(k_end)
        through = self.head + self._tokens_at(floor) + item.owns[n - 1]
        suffix, long = item.suffix, len(text) >= LONG_INSERT
        known: dict[int, int] = {}

        def count(j: int) -> int:
            got = known.get(j)
            if got is None:
                end = bounds[j]
                if long:
                    got = through + counter.count(floor, end, [Insert(end, text)], "", suffix)
                else:
                    got = through + counter.plain(floor, end, text + suffix)
                known[j] = got
            return got

        guess = bisect.bisect_left(bounds, index.tok_char[min(k_end, index.n_tokens)])
        lo = _last_at_most(count, lo, hi, guess, item.target)
        got = count(lo)
        if got > item.target:
            return None
        end = bounds[lo]
        if got != item.target:
            return _Short(item.target - got, self.begin, end, None, lo, None, n - 1, self.laid)
        return self.window(end, ending=True)

    def _deepest_by_stem(self, k_end: int) -> Placement | _Short | None:
        """`_end_with_deepest` the general way, with this start's positions and stem."""
        item = self.item
        return _end_with_deepest(
            item.counter,
            item.bounds,
            self.begin,
            self.spots,
            item.needles,
            item.order,
            item.joiner,
            item.target,
            item.prefix,
            item.suffix,
            k_end,
            item.depths,
            self.stem,
        )

    def window(self, end: int, ending: bool = False) -> Placement:
        """The exact window from `begin` to `end` with every insert in place, or with the deepest ending it
        (`ending`): its count less what the frame adds (`Counter.frame_delta`), and each needle's offsets as
        `_measure` gives them, the token offsets by arithmetic (every insert before `end` is its own rotated
        window there). The inserts are kept as columns (`InsertColumns`)."""

        item = self.item
        counter, index = item.counter, item.counter.index
        target, n = item.target, len(item.texts)
        positions, texts = self.spots, item.texts
        if ending:
            positions, texts = [*positions[:-1], end], [*texts[:-1], item.needles[item.order[-1]]]
        inserts = InsertColumns(positions, texts)
        context_tokens = self._context_tokens(end, ending)
        if context_tokens is None:  # the count less what the frame adds at the context's two edges
            context_tokens = target - counter.frame_delta(self.begin, end, inserts, item.prefix, item.suffix)  # type: ignore[arg-type]
        at = self.spot_array
        _, safe_tok = index.safe_arrays()
        # the count up to each insert without the frame: the first stretch, the haystack to it, the inserts before
        tokens = safe_tok[index.safe_of()[at]] if len(index.text) <= SAFE_TABLE_CHARS else self._safe_tokens(at)
        offsets = tokens + (counter.encoded(self.first_stretch) - self.b_tok) + item.own[:n]
        if ending:  # the deepest ends the context: the count from the insert before it to it, as `offsets` has it
            before = int(at[n - 2])
            through = int(offsets[n - 2]) + item.owns[n - 1] - item.owns[n - 2]
            offsets[n - 1] = through + counter.plain(before, end)  # (the haystack from that insert up to it)
        written = item.written[:n]
        chars = at - self.begin + written
        if ending:
            chars[n - 1] = end - self.begin + written[n - 1]
        by_needle = offsets[item.by_needle]
        placed = Placement(
            start=self.begin,
            end=end,
            inserts=inserts,
            total_tokens=target,
            context_tokens=context_tokens,
            needle_tokens=tuple(by_needle.tolist()),
            needle_chars=tuple(chars[item.by_needle].tolist()),
        )
        if context_tokens:  # `Placement.depths`, from the array (the same floats: 100.0 * t, then / the total)
            achieved = round_many(100.0 * offsets / context_tokens)  # in insert order
            by_rank = item.by_needle.tolist()
            object.__setattr__(placed, "_depths", tuple(map(achieved.__getitem__, by_rank)))
            if item.tolerance is not None and item.targets == n:
                object.__setattr__(placed, "_error", item.depth_error(chars, achieved, context_tokens))
        return placed

    def _context_tokens(self, end: int, ending: bool) -> int | None:
        """The context's count without the prompt around it, as the counts of this start's ends are made (its first
        stretch without the prefix, the haystack's tokens and the inserts' own, the stretch after the last insert
        kept in place without the suffix); None where the end is too close to that insert for it."""
        item = self.item
        counter, n = item.counter, len(item.order)
        head = counter.encoded(self.first_stretch) - self.b_tok
        if ending:
            floor = self.item.snap_one(self.t_first + item.top[n - 2], self.begin, self.hi)
            if end < floor + 2:
                return None
            text = item.needles[item.order[-1]]
            through = head + self._tokens_at(floor) + item.owns[n - 1]
            if len(text) >= LONG_INSERT:
                return through + counter.count(floor, end, [Insert(end, text)])
            return through + counter.plain(floor, end, text)
        if end < self.last + 2:
            return None
        return head + self._tokens_at(self.last) + item.owns[n] + counter.plain(self.last, end)

    def _safe_tokens(self, at: np.ndarray) -> np.ndarray:
        import numpy as np

        safe, safe_tok = self.item.counter.index.safe_arrays()
        return safe_tok[np.searchsorted(safe, at)]


def _solve(
    count_at: Callable[[int], int], first_k: int, sign: int, cut: Callable[[int], int], n_tokens: int, target: int
) -> tuple[int, int]:
    """Find a cut (token index -> char position) whose total count equals target."""
    k = first_k
    seen: dict[int, int] = {}
    for _ in range(MAX_STEPS):
        k = min(max(k, 0), n_tokens)
        pos = cut(k)
        if pos in seen:
            break
        total = count_at(pos)
        seen[pos] = total
        if total == target:
            return pos, total
        k += sign * (target - total)
    # Newton steps cycle only where BPE merges across the cut; scan characters near the best guess.
    best = min(seen, key=lambda p: abs(seen[p] - target))
    for delta in range(1, 64):
        for pos in (best + delta, best - delta):
            total = count_at(pos)
            if total == target:
                return pos, total
    raise ContractError(f"could not cut the haystack to exactly {target} tokens near character {best}")


def place(
    index: HaystackIndex,
    counter: Counter,
    *,
    start: int,
    target: int,
    needles: list[str],
    depths: list[float],
    snap: str,
    joiner: str,
    prefix: str = "",
    suffix: str = "",
    window: str = "start",
    edges: str = "token",
    tolerance: float | None = None,
    targets: int | None = None,
) -> Placement:
    """Place needles at target depths (percent) in a window of exactly `target` tokens.

    `target` counts prefix + context + suffix; prefix and suffix are the prompt text around the
    context when the whole prompt is counted, and empty otherwise. With `window="needle"` the
    window start moves (by less than one snap unit of haystack) so that a boundary sits exactly
    at the first needle's target depth: that needle lands on its depth at any length instead of
    on the boundary nearest to it. When the window cannot be chosen that way (the needle would
    not leave room for the window end), the needles are placed as with `window="start"`, and
    the compile's depth check judges the result.

    With `edges="boundary"` (and a snap other than `none`) both ends of the window are boundaries
    too: the window opens at a boundary and its haystack text ends where a sentence (line, paragraph)
    ends, and among the window starts after the drawn one the first whose boundary end gives exactly
    `target` tokens is taken (`_place_on_boundaries`); with a depth `tolerance`, the first whose first
    `targets` needles are all within it (else the exact one closest to its depths). Only when no window
    can be made exact that way is it cut at a token as with `edges="token"`.
    """
    args = (index, counter, start, target, needles, depths, snap, joiner, prefix, suffix)
    try:
        return _place_sized(args, window, edges, tolerance, targets, None)
    except ContractError as failure:
        # The window is sized by each needle's own token count. Where a needle counts more (or fewer) tokens
        # after haystack text than alone (a tokenizer that marks the start of an encoding, as a Metaspace
        # `▁` does), 300 of them (CWE) misjudge the window by dozens of tokens and no end fits; the search
        # runs again with the needles counted after the haystack text before the window start.
        sizes = _needle_tokens_after(counter, start, needles, joiner, snap)
        if sizes == _needle_tokens(counter, needles, joiner):
            raise
        try:
            return _place_sized(args, window, edges, tolerance, targets, sizes)
        except ContractError:
            raise failure from None


def _place_sized(
    args: tuple[Any, ...],
    window: str,
    edges: str,
    tolerance: float | None,
    targets: int | None,
    sizes: list[int] | None,
) -> Placement:
    """`place` with the needles' token counts `sizes` (None: each needle's own, `_needle_tokens`)."""
    snap, needles = args[6], args[4]
    if edges == "boundary" and snap != "none":
        wanted = len(needles) if targets is None else targets
        placed = _place_on_boundaries(*args, tolerance=tolerance, targets=wanted, sizes=sizes)
        if placed is not None:
            return placed
    if window == "needle":
        try:
            return _place(*args, anchored=True, sizes=sizes)
        except ContractError:
            pass
    return _place(*args, anchored=False, sizes=sizes)


def _needle_tokens_after(counter: Counter, start: int, needles: list[str], joiner: str, snap: str) -> list[int]:
    """Each needle's tokens with its joiner as it counts after the haystack's text: the count of a stretch of the
    haystack from one boundary to the next (the one ending at or before `start`, else the first after it) with
    the needle after it, less the stretch's own."""
    index = counter.index
    bounds = index.boundaries(snap) if snap != "none" else []
    j = bisect.bisect_right(bounds, start) - 1  # bounds[j] <= start: the stretch bounds[j - 1]..bounds[j]
    a, b = (bounds[j - 1], bounds[j]) if j >= 1 else (start, bounds[j + 1] if j + 1 < len(bounds) else start)
    lead = index.text[a:b] if 0 < b - a <= 1000 else ""
    if not lead.strip():
        return _needle_tokens(counter, needles, joiner)
    tok = index.tokenizer
    base = tok.count(lead)

    def after(needle: str) -> int:
        whole = needle + joiner
        if index.local and counter._joins(lead, whole):
            return counter.joined_tokens(needle, joiner)  # it begins at a point of a verified class: counts add up
        cut = counter._cut(whole)
        if cut is None:
            return tok.count(lead + whole) - base
        # a long needle (an FWE block) splits at its cut whatever comes before it (`Counter._cut`): only its head
        # sees the stretch before it, and the rest counts as in the needle's own count
        head = whole[: cut[0]]
        return counter.joined_tokens(needle, joiner) + tok.count(lead + head) - base - counter.encoded(head)

    own = {n: after(n) for n in set(needles)}
    return list(map(own.__getitem__, needles))


def _place(
    index: HaystackIndex,
    counter: Counter,
    start: int,
    target: int,
    needles: list[str],
    depths: list[float],
    snap: str,
    joiner: str,
    prefix: str,
    suffix: str,
    *,
    anchored: bool,
    sizes: list[int] | None = None,
) -> Placement:
    """`place`, with the window chosen around the first needle when `anchored` (`sizes`: see `_place_sized`)."""
    tok = index.tokenizer
    text = index.text
    bounds = index.boundaries(snap)
    needle_tokens = _needle_tokens(counter, needles, joiner) if sizes is None else sizes
    frame_tokens = (tok.count(prefix) if prefix else 0) + (tok.count(suffix) if suffix else 0)
    context_est = target - frame_tokens
    hay_tokens = context_est - sum(needle_tokens)
    if hay_tokens < 2 * MARGIN_TOKENS:
        raise ContractError(
            f"target length {target} is too small for the needles and prompt "
            f"({sum(needle_tokens) + frame_tokens} tokens)"
        )
    order = sorted(range(len(needles)), key=depths.__getitem__)  # (stable: equal depths in needle order)
    at_end = [i for i in order if depths[i] >= 100.0]
    t_begin = index.token_at(start)

    def offsets(base_k: int) -> list[int]:
        before = 0
        result = {}
        for i in order:
            result[i] = base_k + round(depths[i] / 100.0 * context_est) - before
            before += needle_tokens[i]
        return [result[i] for i in range(len(needles))]

    if not at_end and anchored:
        # a depth the needle cannot reach with room after it is anchored as deep as it can go
        # the anchored needle is the first one given (a target; distractors come after targets)
        ahead = order[: order.index(0)]
        first = round(depths[0] / 100.0 * context_est) - sum(needle_tokens[i] for i in ahead)
        first = max(0, min(first, hay_tokens - ANCHORED_ROOM_TOKENS))
        start, anchor = _anchor_start(index, bounds, start, t_begin, first, hay_tokens)
        t_begin = index.token_at(start)
    else:
        anchor, ahead = None, []

    if not at_end:
        # The count is monotone in the window's end, and where the characters near the end are several
        # tokens long (CJK text) it can step over the target; a window starting at a following boundary
        # has a different remainder, so a few starts are tried before giving up (the first is `start`).
        # An anchored window has one start only: if it fails, `place` falls back to the unanchored one.
        after = bisect.bisect_right(bounds, start)
        candidates = [start] if anchored else [start, *bounds[after : after + CUT_ATTEMPTS - 1]]
        # a needle anchored at its depth may end closer to the window end: the solve below only
        # moves the end by the few tokens that re-encoding the seams changes
        room = ANCHORED_ROOM_TOKENS if anchored else MARGIN_TOKENS
        failure: ContractError | None = None
        for begin in candidates:
            t_first = index.token_at(begin)
            k_end = t_first + hay_tokens
            if k_end + MARGIN_TOKENS >= index.n_tokens:
                raise ContractError("haystack is too short for this length (internal sizing error)")
            hi = index.tok_char[max(t_first, k_end - room)]
            positions = _snap_all(offsets(t_first), order, index, bounds, begin, hi, always=begin, snap=snap)
            if (
                anchor is not None
                and begin <= anchor
                and index.token_at(anchor) <= k_end - room
                and all(positions[i] <= anchor for i in ahead)
                and all(anchor <= p for i, p in positions.items() if i != 0 and i not in ahead)
            ):
                positions[0] = anchor  # exactly the boundary the window was chosen for
            inserts = _inserts(positions, needles, order, joiner, last_without_joiner=False)

            def count_end(pos: int, begin: int = begin, inserts: list[Insert] = inserts) -> int:
                return counter.count(begin, pos, inserts, prefix, suffix)

            try:
                end, total = _solve(count_end, k_end, +1, lambda k: index.tok_char[k], index.n_tokens, target)
            except ContractError as exc:
                failure = exc
                continue
            failure = None
            break
        if failure is not None:
            raise failure
        if inserts and end <= inserts[-1].pos + 1:
            raise ContractError("needles did not fit inside the window (internal placement error)")
    else:
        j = bisect.bisect_left(bounds, index.tok_char[min(t_begin + hay_tokens + MARGIN_TOKENS, index.n_tokens)])
        if j >= len(bounds):
            raise ContractError("haystack is too short for this length (internal sizing error)")
        # Likewise for the start cut: the next boundaries as ends give it other remainders.
        failure = None
        for end in bounds[j : j + CUT_ATTEMPTS]:
            k_begin = index.token_at(end) - hay_tokens
            lo = index.tok_char[min(k_begin + MARGIN_TOKENS, index.n_tokens)]
            middle = [i for i in order if depths[i] < 100.0]
            positions = _snap_all(offsets(k_begin), middle, index, bounds, lo, end, always=None, snap=snap)
            positions.update({i: end for i in at_end})
            inserts = _inserts(positions, needles, order, joiner, last_without_joiner=True)

            def cut_start(k: int, end: int = end) -> int:
                pos = index.tok_char[k]
                while pos < end and text[pos].isspace():
                    pos += 1
                return pos

            def count_start(pos: int, end: int = end, inserts: list[Insert] = inserts) -> int:
                return counter.count(pos, end, inserts, prefix, suffix)

            try:
                begin, total = _solve(count_start, k_begin, -1, cut_start, index.n_tokens, target)
            except ContractError as exc:
                failure = exc
                continue
            failure = None
            break
        if failure is not None:
            raise failure
        if inserts and begin >= inserts[0].pos - 1 and inserts[0].pos != end:
            raise ContractError("needles did not fit inside the window (internal placement error)")

    context_tokens = total if not (prefix or suffix) else counter.count(begin, end, inserts)
    return _measure(counter, text, begin, end, inserts, needles, order, total, context_tokens)


def _aims(order: list[int], depths: list[float], needle_tokens: list[int], context_est: int) -> list[int]:
    """Each needle's aimed token index from a window start's, in `order`: its depth's share of the context
    estimate, rounded half to even, less the tokens of the needles before it (with numpy for many)."""
    if len(order) < SNAP_VECTOR_MIN or not all(map(math.isfinite, depths)):
        aimed: list[int] = []  # (a depth that is not finite fails here as it always did)
        before = 0
        for i in order:
            aimed.append(round(depths[i] / 100.0 * context_est) - before)
            before += needle_tokens[i]
        return aimed
    import numpy as np

    ranked = np.asarray(order, dtype=np.int64)
    share = np.rint(np.asarray(depths, dtype=np.float64)[ranked] / 100.0 * context_est).astype(np.int64)
    tokens = np.asarray(needle_tokens, dtype=np.int64)[ranked]
    earlier = np.concatenate(([0], np.cumsum(tokens)[:-1]))  # the needles' tokens before each
    out: list[int] = (share - earlier).tolist()
    return out


def _own_tokens(counts: list[int]) -> np.ndarray:
    """The running sum of the inserts' own tokens `counts` (in order), from 0 (one more than the inserts): where
    every insert is its own rotated window, the checkpoint counts of any start are the haystack's tokens and
    these (`_LinedItem`)."""
    import numpy as np

    sums = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(np.asarray(counts, dtype=np.int64), out=sums[1:])
    return sums


def _needle_tokens(
    counter: Counter, needles: list[str], joiner: str, texts: list[str] | None = None, order: list[int] | None = None
) -> list[int]:
    """Each needle's tokens with its joiner, counted once per distinct needle (CWE's 300 are ten words); `texts`
    are the needles with the joiner in `order`, where the caller has made them (FWE's long blocks are then not
    joined or hashed again, nor compared with each other: each is counted from its lines)."""
    if texts is None or order is None or max(map(len, needles), default=0) < LONG_INSERT:
        own = {n: counter.joined_tokens(n, joiner) for n in set(needles)}
        return list(map(own.__getitem__, needles))
    counts = [0] * len(needles)
    seen: dict[str, int] = {}
    lined: dict[int, int | None] = {}  # blocks of lines counted from their lines' counts, all at once
    if joiner == "\n":
        blocks = [(i, block) for i in order if isinstance(block := needles[i], Lines) and len(block) >= LONG_INSERT]
        counted = counter._lines_tokens_each([block for _, block in blocks])
        lined = dict(zip([i for i, _ in blocks], counted, strict=True))
    for i, whole in zip(order, texts, strict=True):
        needle = needles[i]
        if len(needle) >= LONG_INSERT:
            got = lined.get(i)
            counts[i] = got if got is not None else counter.joined_tokens(needle, joiner, whole)
        else:
            got = seen.get(needle)
            if got is None:
                got = seen[needle] = counter.joined_tokens(needle, joiner, whole)
            counts[i] = got
    return counts


def _text_end(text: str, q: int, floor: int) -> int:
    """The end of the text before boundary `q`: `q` less the whitespace in front of it (not below `floor`)."""
    while q > floor and text[q - 1].isspace():
        q -= 1
    return q


def _place_on_boundaries(
    index: HaystackIndex,
    counter: Counter,
    start: int,
    target: int,
    needles: list[str],
    depths: list[float],
    snap: str,
    joiner: str,
    prefix: str,
    suffix: str,
    *,
    tolerance: float | None,
    targets: int,
    sizes: list[int] | None = None,
) -> Placement | None:
    """`place` with both window ends on boundaries and the count exact, or None when no start tried gives it.

    For each candidate start (the drawn one, then the following boundaries) the needles are placed as
    usual and the largest boundary end whose count does not exceed the target is found by bisection
    over the boundary list (the count grows with the end); a start whose count there is exactly the
    target is taken. A deepest needle from `DEEP_DEPTH` on may also end the window itself, and one at
    depth 100 always does.

    A start whose count falls short is a `_Short` window, which line breaks can make exact
    (`_fill_with_breaks`). After `EDGE_ATTEMPTS` starts without an exact window within the depth
    tolerance, the short windows are filled, smallest shortfall first, and the first within the tolerance
    is taken; failing that, the search goes on (up to `DEPTH_ATTEMPTS` starts) for an exact window within
    it, filling on the way the short windows that look within it, and ends with the window (exact or
    filled) closest to the depths. Long sentences and several needles in a short context (NeedleBench's
    Chinese M-RS at 1,000 tokens) need this: few starts are exact, fewer within the tolerance.
    """
    text = index.text
    bounds = index.boundaries(snap)
    order = sorted(range(len(needles)), key=depths.__getitem__)  # (stable: equal depths in needle order)
    texts = [needles[i] + joiner for i in order]  # each needle's insert text, in `order`: the same for every start
    needle_tokens = _needle_tokens(counter, needles, joiner, texts, order) if sizes is None else sizes
    frame_tokens = (counter.encoded(prefix) if prefix else 0) + (counter.encoded(suffix) if suffix else 0)
    context_est = target - frame_tokens
    hay_tokens = context_est - sum(needle_tokens)
    if hay_tokens < 2 * MARGIN_TOKENS or not needles:
        return None
    at_end = depths[order[-1]] >= 100.0  # the deepest needle ends the context
    after = bisect.bisect_right(bounds, start)
    shorts: list[_Short] = []  # windows ending at a sentence that fall short of the target, in the order found
    deep_shorts: list[_Short] = []  # windows ending with their deepest needle that fall short
    closest: tuple[float, Placement] | None = None  # the window closest to the depths, beyond the tolerance
    within: Placement | None = None  # a filled window within the tolerance (an exact one is returned at once)
    pushed: Placement | None = None  # the first window within it only as far as its needles push each other
    fills = 0
    rotated = ROTATED_STARTS  # every start counted so far had every insert as its own rotated window (or blank seams)
    blanks = counter.tokenizer.drops_blanks()  # counts add up across a blank: inserts that meet blanks add their own
    fixed = sum(needle_tokens) + frame_tokens  # what the needles and the frame add to a window's haystack tokens
    # the seam correction of the last start counted (count less its prediction), per end search: the sentence
    # end after the needles (False) and the deepest needle ending the window (True); None until one is known
    corrections: dict[bool, int | None] = {} if at_end else {False: None}
    if depths[order[-1]] >= DEEP_DEPTH:
        corrections[True] = None
    # each needle's aim from a start's token index on, in `order`: the same for every start
    aimed = _aims(order, depths, needle_tokens, context_est)
    # many inserts over a word list: each start's counts by arithmetic (`_LinedItem`), with each insert's own tokens
    own = [needle_tokens[i] for i in order] if sizes is None else [counter.tokens(t) for t in texts]
    every = _Placed(
        needles, order, texts, own, aimed, joiner, prefix, suffix, target, depths, needle_tokens, tolerance, targets
    )
    lined = _LinedItem.make(counter, snap, every)
    fewest = {False: target, True: target}  # the smallest shortfall of a window found so far, per end search
    steady = {False: 0, True: 0}  # starts counted in a row, per end search, whose correction was the last one's
    moves = {False: 0, True: 0}  # the largest move of an end search's correction from one start counted to the next

    def learn(deep: bool, end: int, got: int) -> None:
        correction = got - _predicted(index, begin, end) - fixed
        last = corrections.get(deep)
        steady[deep] = steady[deep] + 1 if last == correction else 0
        if last is not None:
            moves[deep] = max(moves[deep], abs(correction - last))
        corrections[deep] = correction
        fewest[deep] = min(fewest[deep], target - got)

    def judge(placed: Placement) -> bool:
        """Whether `placed` is within the tolerance; else keep it if it is the closest so far, and the first that
        is within it once the needles before each may push it deeper (`pushed`): taken only where no window is
        within the tolerance as a target or reachable depth has it, so every item that found one keeps it."""
        nonlocal closest, pushed
        if tolerance is None:
            return True
        error = placed._error if placed._error is not None else _depth_error(placed, depths, needle_tokens, targets)
        if error <= tolerance:
            return True
        if pushed is None and _depth_error(placed, depths, needle_tokens, targets, push=True) <= tolerance:
            pushed = placed
        if closest is None or error < closest[0]:
            closest = (error, placed)
        return False

    # where no break can add a token to this item's windows (`Counter.breaks_add_nothing`: a WordPiece between
    # sentences), every fill would fail: none is tried, and no short window is measured for one
    unfilled = counter.breaks_add_nothing(snap, itertools.chain(texts, needles))  # (the deepest ends with no joiner)

    def fill(short: _Short) -> Placement | None:
        nonlocal fills, within
        fills += 1
        if unfilled:
            return None
        placed = _fill_with_breaks(index, counter, short, bounds, needles, order, target, prefix, suffix)
        if placed is not None and judge(placed):
            within = placed
        return placed

    def looks_within(short: _Short) -> bool:
        """Whether the short window's needles are within the tolerance widened by what filling moves them."""
        if tolerance is None:
            return True
        got = counter.count(short.begin, short.end, short.inserts)
        placed = _measure(counter, text, short.begin, short.end, short.inserts, needles, order, got, got)
        return _depth_error(placed, depths, needle_tokens, targets) <= tolerance + 100.0 * short.gap / target

    def passed_over(attempt: int) -> int:
        """How many starts after `attempt` in a row the search passes over, judged at once (`_worth_counting_many`,
        with every end search's correction known and none counted since): each is neither worth counting nor
        too close to the haystack's end."""
        import numpy as np

        begin_at = after + attempt  # the boundary of start `attempt + 1` (start 0 is the drawn one)
        last = min(len(bounds), after + DEPTH_ATTEMPTS - 1)
        first, count = begin_at, PASSED_CHUNK
        while first < last:  # in chunks that grow: the run usually ends within the first
            count = min(count, last - first)
            t_first = index.boundary_ends(snap)[0][first : first + count]
            stop = t_first + hay_tokens + 4 * MARGIN_TOKENS >= index.n_tokens
            for search, seam in corrections.items():
                assert seam is not None  # (a search with none counts every start: no start is passed over)
                calm = rotated and not moves[search]
                stop |= _worth_counting_many(
                    index,
                    snap,
                    first,
                    count,
                    fixed + seam,
                    target,
                    search,
                    fewest[search],
                    steady[search] >= STEADY_STARTS or calm,
                    0 if calm else min(PREDICT_SLACK, moves[search] + MOVE_MARGIN),
                )
            hits = np.flatnonzero(stop)
            if len(hits):
                return first + int(hits[0]) - begin_at
            first, count = first + count, 4 * count
        return last - begin_at

    passed = 0  # starts passed over in a row since the last one counted
    skip_to = 0  # starts before this one are passed over (`passed_over`)
    for attempt, begin in enumerate([start, *bounds[after : after + DEPTH_ATTEMPTS - 1]]):
        if attempt == EDGE_ATTEMPTS:
            if closest is None and tolerance is None:
                break  # no exact window so far: make the closest one up to the length instead
            for short in sorted(shorts, key=lambda s: s.gap) + sorted(deep_shorts, key=lambda s: s.gap):
                if fills >= FILL_ATTEMPTS:
                    break
                fill(short)
                if within is not None:
                    break
            if within is not None and closest is None:
                return within
        if attempt < skip_to:
            continue  # passed over, judged with the starts before it (`passed_over`)
        t_first = index.token_at(begin)
        k_end = t_first + hay_tokens
        if k_end + 4 * MARGIN_TOKENS >= index.n_tokens:
            break
        for search, seam in corrections.items():  # per end search: the last start's correction
            if seam is None or _worth_counting(
                index,
                bounds,
                begin,
                t_first,
                fixed + seam,
                target,
                search,
                fewest[search],
                steady[search] >= STEADY_STARTS or (rotated and not moves[search]),
                slack=0 if rotated and not moves[search] else min(PREDICT_SLACK, moves[search] + MOVE_MARGIN),
            ):
                break
        else:
            passed += 1
            if passed >= PASSED_IN_A_ROW:
                skip_to = attempt + 1 + passed_over(attempt)
            continue  # no sentence end can make this start exact or closer than a window found: passed over
        passed = 0
        hi = index.tok_char[max(t_first, k_end - MARGIN_TOKENS)]
        # this start's context, counted once for every end tried (`_Stem`); over a word list (`_LinedStart`), its
        # counts by arithmetic and its positions only where a window is taken
        fast = lined.start(begin, t_first, hi) if lined is not None else None
        if fast is None:
            spots = _snap_ordered([t_first + aim for aim in aimed], order, index, bounds, begin, hi, snap)
            inserts: list[Insert] = list(map(tuple.__new__, itertools.repeat(Insert), zip(spots, texts, strict=True)))
            stem = _Stem(counter, begin, inserts, prefix)
            last = inserts[-1].pos if inserts else begin
            rotated = rotated and (stem.lines or (blanks and _blank_seams(text, inserts)))
        else:
            last = fast.last  # (every insert is its own rotated window: `rotated` holds)
        found: list[_Short] = []
        if depths[order[-1]] >= DEEP_DEPTH:
            # a needle this deep may end the context itself (no sentence after it, as at depth 100): the
            # boundary it goes to is the one that makes the count exact
            if fast is not None:
                deep = fast.deepest(k_end)
            else:
                deep = _end_with_deepest(
                    counter, bounds, begin, spots, needles, order, joiner, target, prefix, suffix, k_end, depths, stem
                )
            if isinstance(deep, Placement):
                if judge(deep):
                    return deep
            elif deep is not None:
                learn(True, deep.end, target - deep.gap)
                deep_shorts.append(deep)
                found.append(deep)
        lo_j = bisect.bisect_right(bounds, last + 1)
        hi_j = min(len(bounds) - 1, bisect.bisect_right(bounds, index.tok_char[min(k_end + 64, index.n_tokens)]))
        if lo_j <= hi_j and not at_end:
            if fast is not None:
                count_at = fast.end_counter()
            else:
                count_at = _end_counter(text, begin, inserts, bounds, suffix, stem)
            guess = bisect.bisect_left(bounds, index.tok_char[min(k_end, index.n_tokens)])
            lo_j = _last_at_most(count_at, lo_j, hi_j, guess, target)
            gap = target - count_at(lo_j)
            if gap >= 0:  # else even the first end after the needles is above the target: no window here
                end = _text_end(text, bounds[lo_j], begin)
                learn(False, end, target - gap)
                if gap == 0:
                    if fast is not None:
                        placed = fast.window(end)
                    else:
                        context_tokens = target - counter.frame_delta(begin, end, inserts, prefix, suffix)
                        placed = _measure(counter, text, begin, end, inserts, needles, order, target, context_tokens)
                    if judge(placed):
                        return placed
                else:
                    if fast is not None:
                        short = _Short(gap, begin, end, None, lo_j, None, len(texts), fast.laid)
                    else:
                        short = _Short(gap, begin, end, inserts, lo_j, stem, len(inserts))
                    shorts.append(short)
                    found.append(short)
        if attempt >= EDGE_ATTEMPTS and within is None and not unfilled:
            for short in found:  # past the first starts: fill a short window whose needles look within the tolerance
                if fills < FILL_ATTEMPTS and looks_within(short):
                    fill(short)
    if within is not None:
        return within
    if pushed is not None:
        return pushed
    if closest is not None:
        return closest[1]
    if not shorts and not deep_shorts:
        return None
    if unfilled:
        return None
    best = min(shorts or deep_shorts, key=lambda s: s.gap)
    return _fill_with_breaks(index, counter, best, bounds, needles, order, target, prefix, suffix)


def _blank_seams(text: str, inserts: list[Insert]) -> bool:
    """Whether every insert (in position order) meets what comes before it and after it at a blank: to a tokenizer
    that discards whitespace (`Tokenizer.drops_blanks`), each then adds its own tokens wherever it goes, as a word
    list's rotated lines do, and only the window's two edges can move a start's count from its prediction.

    Blanks only, not every point such a tokenizer splits at (`Tokenizer.splits_at`): with BERT's punctuation and
    ideograph points too, the windows this lets a search pass over were not all those that counting every start
    passes over (11 of 160 NeedleBench Chinese M-RS items took other windows; `tests/test_start_prediction.py`)."""
    for k, ins in enumerate(inserts):
        piece = ins.text
        if not piece:
            continue
        before = inserts[k - 1].text[-1:] if k and inserts[k - 1].pos == ins.pos else text[ins.pos - 1 : ins.pos]
        if before not in BLANKS and piece[0] not in BLANKS:
            return False
        last_here = k + 1 == len(inserts) or inserts[k + 1].pos != ins.pos
        if last_here and piece[-1] not in BLANKS and text[ins.pos : ins.pos + 1] not in BLANKS:
            return False
    return True


def _predicted(index: HaystackIndex, begin: int, end: int) -> int:
    """The haystack tokens of a window by index arithmetic: the difference of its ends' token indexes."""
    return index.token_at(end) - index.token_at(begin)


def _worth_counting(
    index: HaystackIndex,
    bounds: list[int],
    begin: int,
    t_first: int,
    added: int,
    target: int,
    deep: bool,
    fewest: int,
    steady: bool = False,
    slack: int = PREDICT_SLACK,
) -> bool:
    """Whether a window from `begin` is worth counting exactly: at a boundary near its predicted end, its
    predicted count is within `slack` tokens of the target (at most `PREDICT_SLACK`: the item's largest move of
    the correction so far and `MOVE_MARGIN`), or short of it by less than `fewest` (the smallest shortfall
    found so far, which line breaks would make up) and `PREDICT_SLACK` (none when `steady`). `added` is what the
    prediction adds to the haystack's tokens (needles, frame, the last seam correction); `t_first` is the token
    index of `begin`."""
    k = target - added + t_first  # the token index the window's end should reach
    if k <= t_first or k >= index.n_tokens:
        return True  # outside the index: let the exact count decide
    j = bisect.bisect_left(bounds, index.tok_char[k])
    shorter = 0 if steady else PREDICT_SLACK  # the margin for a window no closer than the closest found
    ends_at = index.ends_at
    for q in bounds[max(0, j - 2) : j + 2]:
        # a window that ends with its deepest needle ends at the boundary itself; else at the text before it
        # (`_text_end`, which stops at `begin`: the token index is then `begin`'s, as the index grows with it)
        at_q, before_q = ends_at(q)
        if deep:
            reached = at_q
        else:
            reached = max(before_q, t_first) if q > begin else index.token_at(_text_end(index.text, q, begin))
        off = target - (reached - t_first) - added  # _predicted, with `begin`'s token index known
        if abs(off) <= slack or 0 <= off < fewest + shorter:
            return True
    return False


_NEAR_STEPS = (-2, -1, 0, 1)
"""The boundaries around a start's predicted end that `_worth_counting` looks at, from the one found."""


def _worth_counting_many(
    index: HaystackIndex,
    snap: str,
    first: int,
    count: int,
    added: int,
    target: int,
    deep: bool,
    fewest: int,
    steady: bool,
    slack: int,
) -> np.ndarray:
    """`_worth_counting` for the `count` window starts at boundaries `first`, `first + 1`, ... of `snap` (a bool
    each, in order), by numpy: a search that passes over hundreds of starts in a row (a tokenizer whose counts step by
    whole sentences, such as a WordPiece file over repeated filler, seldom meets the target) judges them at
    once. The same integer arithmetic as `_worth_counting`, so the same answer for each start
    (`tests/test_start_prediction.py`)."""
    import numpy as np

    tok, bounds = index.arrays(snap)
    at, before = index.boundary_ends(snap)
    n, top = index.n_tokens, len(bounds) - 1
    begins, t_first = bounds[first : first + count], at[first : first + count]  # a boundary's token index is its
    k = t_first + (target - added)  # start's `t_first`; `k`: the token index the window's end should reach
    j = np.searchsorted(bounds, tok[np.minimum(np.maximum(k, 0), n - 1)])
    # the boundaries `_worth_counting` looks at, bounds[max(0, j - 2) : j + 2], one row per start (one past either
    # end of the list is clipped to a boundary that another column looks at anyway)
    near = np.minimum(np.maximum(j[:, None] + _NEAR_STEPS, 0), top)
    if deep:
        reached = at[near]
    else:
        reached = np.where(bounds[near] > begins[:, None], np.maximum(before[near], t_first[:, None]), at[near])
    off = (target - added) - (reached - t_first[:, None])
    shorter = 0 if steady else PREDICT_SLACK
    hit = (np.abs(off) <= slack) | ((off >= 0) & (off < fewest + shorter))
    worth: np.ndarray = hit.any(axis=1) | (k <= t_first) | (k >= n)  # outside the index: the exact count decides
    return worth


def _last_at_most(count: Callable[[int], int], lo: int, hi: int, guess: int, target: int) -> int:
    """The largest j in [lo, hi] with count(j) <= target, for a count that grows with j; `lo` when no j has
    one, so the caller checks count(lo) after the search (where the answer is rarely lo) instead of before.

    The search starts at `guess` (where the target is expected: the boundary at the estimated end)
    and gallops from there to bracket the answer before bisecting, so a good guess costs a few
    counts instead of a bisection over the whole range. For a count that grows with j, which a
    bisection assumes as well, the answer is the one a bisection finds (`tests/test_placement.py`).
    """
    guess = min(max(guess, lo), hi)
    if guess > lo:
        if count(guess) <= target:
            lo = guess
            step = 1
            while lo < hi:  # up from the guess: double the step until a count is above the target
                probe = min(hi, lo + step)
                if count(probe) > target:
                    hi = probe - 1
                    break
                lo, step = probe, 2 * step
        else:
            hi = guess - 1
            step = 1
            while lo < hi:  # down from the guess: double the step until a count is at most the target
                probe = max(lo, hi - step + 1)
                if count(probe) <= target:
                    lo = probe
                    break
                hi, step = probe - 1, 2 * step
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if count(mid) <= target:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _end_counter(
    text: str, begin: int, inserts: list[Insert], bounds: list[int], suffix: str, stem: _Stem
) -> Callable[[int], int]:
    """count(j): the count of the window from `begin` to the text end before boundary j, with the inserts:
    the stem's count up to its last checkpoint before that end, and the stretch after it (kept per j: the
    search asks the end it settles on again)."""
    shared = len(inserts)
    known: dict[int, int] = {}

    def count(j: int) -> int:
        got = known.get(j)
        if got is None:
            got = known[j] = stem.count(_text_end(text, bounds[j], begin), inserts, shared, suffix)
        return got

    return count


def _end_with_deepest(
    counter: Counter,
    bounds: list[int],
    begin: int,
    spots: list[int],
    needles: list[str],
    order: list[int],
    joiner: str,
    target: int,
    prefix: str,
    suffix: str,
    k_end: int,
    depths: list[float],
    stem: _Stem,
) -> Placement | _Short | None:
    """The window that ends with its deepest needle (with every needle at depth 100, when there are any),
    put at the boundary that makes the count exact (the count grows with that boundary, so it is found by
    bisection); the window short of the target closest to it when no boundary does, and None when every
    boundary's count is above it. `stem` is the window start's count with the needles where `spots` has them
    (their positions, in `order`)."""
    index = counter.index
    # the needles that end the context: those at depth 100 (the last ones in `order`), else the deepest
    tail = 0
    while tail < len(order) and depths[order[-1 - tail]] >= 100.0:
        tail += 1
    tail = tail or 1
    floor = max(spots[: len(order) - tail], default=begin)
    lo = bisect.bisect_right(bounds, floor)
    hi = min(len(bounds) - 1, bisect.bisect_right(bounds, index.tok_char[min(k_end + 64, index.n_tokens)]))
    if lo > hi:
        return None

    # only the last needles move with the end: the stem's inserts with those entries re-placed (the very last
    # without its joiner, as it ends the context)
    moving = range(len(order) - tail, len(order))
    first = list(stem.inserts)
    for rank in moving:
        ending = "" if rank == len(order) - 1 else joiner
        first[rank] = Insert(bounds[lo], needles[order[rank]] + ending)

    def layout(j: int) -> tuple[int, list[Insert]]:
        inserts = list(first)
        for rank in moving:
            inserts[rank] = Insert(bounds[j], first[rank].text)
        return bounds[j], inserts

    # the needles before `floor` stay put while the end moves, as the stem has them: each end costs the stem's
    # count up to its last checkpoint before the moved needles, and the stretch after it
    shared = len(order) - len(moving)
    moved = [first[rank].text for rank in moving]

    known: dict[int, int] = {}  # count per boundary j: the search asks the one it settles on again

    def count(j: int) -> int:
        got = known.get(j)
        if got is None:
            got = known[j] = stem.count_ending(bounds[j], moved, suffix)
        return got

    lo = _last_at_most(count, lo, hi, bisect.bisect_left(bounds, index.tok_char[min(k_end, index.n_tokens)]), target)
    got = count(lo)
    if got > target:  # even the first boundary is above the target
        return None
    end, inserts = layout(lo)
    if got != target:
        return _Short(target - got, begin, end, inserts, lo, stem, shared)
    # the count without the frame: the exact count less what the frame adds at the context's two edges
    context_tokens = target - counter.frame_delta(begin, end, inserts, prefix, suffix)
    return _measure(counter, index.text, begin, end, inserts, needles, order, target, context_tokens)


def pushed_depths(aimed: Sequence[float], offsets: Sequence[int], tokens: Sequence[int], total: int) -> list[float]:
    """How deep each needle is pushed by the needles before it: in context order (by token offset), needle
    i is no shallower than its aimed depth nor than the needle before it plus that needle's tokens, in
    percent of `total` context tokens. Needles aimed at close depths (RULER FWE's 100 blocks, which fill
    most of the context, at random depths) cannot all sit at them: each takes its room, and the ones after
    it come later. `aimed` is each needle's depth as far as the needles after it let it be reached."""
    n = len(aimed)
    if n >= SNAP_VECTOR_MIN:  # CWE's and FWE's hundreds: the same recurrence with numpy
        import numpy as np

        ranked = np.argsort(np.asarray(offsets, dtype=np.int64), kind="stable")
        room = 100.0 * np.asarray(tokens, dtype=np.float64)[ranked] / total
        before = np.concatenate(([0.0], np.cumsum(room)[:-1]))  # the room of the needles before each, in order
        # e_k = max(a_k, e_(k-1) + room_(k-1)) is before_k + the running max of a_j - before_j; a needle no
        # earlier one pushes keeps its aimed depth exactly
        own = np.asarray(aimed, dtype=np.float64)[ranked]
        lead = own - before
        most = np.maximum.accumulate(lead)
        pushed = np.where(most > lead, np.maximum(before + most, own), own)
        spread = np.empty(n, dtype=np.float64)
        spread[ranked] = pushed
        return [float(x) for x in spread]
    out = list(aimed)
    floor = -math.inf
    for k in sorted(range(n), key=offsets.__getitem__):
        out[k] = max(out[k], floor)
        floor = out[k] + 100.0 * tokens[k] / total
    return out


def depth_miss(achieved: float, aimed: float, pushed: float) -> float:
    """How far a needle is from where it could be held: from its aimed depth up to where the needles before
    it push it (`pushed_depths`), any depth counts as on target."""
    return max(0.0, aimed - achieved, achieved - pushed)


def _depth_error(
    placed: Placement, depths: list[float], needle_tokens: list[int], targets: int, *, push: bool = False
) -> float:
    """The largest distance of a target needle from its depth, a depth it cannot reach counted as the
    deepest it can (the needles from it to the end need their tokens); with `push`, one the needles before it
    push past counted as reached up to there (`depth_miss`), as the compile's check does."""
    total = placed.context_tokens or 1
    worst = 0.0
    achieved = placed.depths()
    chars = placed.needle_chars
    offsets = placed.needle_tokens[:targets]
    if targets >= SNAP_VECTOR_MIN:  # CWE's 300 words: the same sums with numpy
        import numpy as np

        at = np.asarray(chars[:targets], dtype=np.int64)
        ranked = np.argsort(at, kind="stable")
        # the tokens of the needles from each rank on, and the first rank at each needle's character
        after = np.cumsum(np.asarray(needle_tokens[:targets], dtype=np.int64)[ranked][::-1])[::-1]
        reach = after[np.searchsorted(at[ranked], at, side="left")]
        reachables = 100.0 * np.maximum(0, total - reach) / total
        aimed = np.minimum(np.asarray(depths[:targets], dtype=np.float64), reachables)
        got = np.asarray(achieved[:targets], dtype=np.float64)
        if not push:
            return max(worst, float(np.abs(got - aimed).max()))
        pushes = np.asarray(pushed_depths(aimed.tolist(), offsets, needle_tokens[:targets], total))
        miss = np.maximum(np.maximum(aimed - got, got - pushes), 0.0)
        return max(worst, float(miss.max()))
    # tails[i]: tokens of the target needles at or after needle i's character (ties included), by one
    # pass over them from the last one back
    tails = [0] * targets
    running = 0
    by_char = sorted(range(targets), key=lambda k: chars[k], reverse=True)
    for n, k in enumerate(by_char):
        running += needle_tokens[k]
        if n + 1 < targets and chars[by_char[n + 1]] == chars[k]:
            continue
        for m in range(n, -1, -1):  # every needle at this character gets the tail through the last of them
            if chars[by_char[m]] != chars[k]:
                break
            tails[by_char[m]] = running
    aims = [min(depths[i], 100.0 * max(0, total - tails[i]) / total) for i in range(targets)]
    if not push:
        return max([worst, *(abs(achieved[i] - aims[i]) for i in range(targets))])
    pushed = pushed_depths(aims, offsets, needle_tokens[:targets], total)
    for i in range(targets):
        worst = max(worst, depth_miss(achieved[i], aims[i], pushed[i]))
    return worst


BREAKS = ("\n", "\n\u3000\u3000", "\n\u3000")
"""What a window whose whole sentences fall short of the length gets between sentences: a line break, or
where that adds no token (after a CJK full stop, which tokenizers merge with it) a line break and the two
ideographic spaces that indent a Chinese or Japanese paragraph (one space where two would overshoot)."""
_BLANK_BREAKS = all(BLANKS.issuperset(piece) for piece in BREAKS)
"""Whether every break is blanks alone (`_fill_with_breaks` passes over a spot for all of them at once)."""


def _fill_with_breaks(
    index: HaystackIndex,
    counter: Counter,
    short: _Short,
    bounds: list[int],
    needles: list[str],
    order: list[int],
    target: int,
    prefix: str,
    suffix: str,
) -> Placement | None:
    """Make up a window's shortfall with breaks (`BREAKS`) between its last sentences, counted exactly: each
    break taken adds at least one token; None when the shortfall cannot be made up that way."""
    gap, begin, end, inserts = short.gap, short.begin, short.end, short.inserts
    text = index.text
    taken = {ins.pos for ins in inserts}
    lo, hi = bisect.bisect_right(bounds, begin), bisect.bisect_left(bounds, end, hi=short.j)
    wanted = 4 * gap + 8
    # boundaries without a needle first, from the end back; a break at a needle's boundary goes after the
    # needle. The last `wanted` free ones lie among the last `wanted + len(taken)` boundaries.
    spots = [q for q in reversed(bounds[max(lo, hi - wanted - len(taken)) : hi]) if q not in taken][:wanted]
    if len(spots) < wanted:  # a window of few sentences: every boundary in it
        inside = bounds[lo:hi][::-1]
        spots = ([q for q in inside if q not in taken] + [q for q in inside if q in taken])[:wanted]
    chosen: dict[int, str] = {}
    total = target - gap

    def merged_with(breaks: dict[int, str]) -> list[Insert]:
        # a break at a needle's position goes after it (the sort keeps list order within a position)
        return sorted([*inserts, *(Insert(q, t) for q, t in sorted(breaks.items()))], key=lambda ins: ins.pos)

    def count(breaks: dict[int, str]) -> int:
        merged = merged_with(breaks)
        if short.stem is None:
            return counter.count(begin, end, merged, prefix, suffix)
        # the inserts ahead of the first break are the stem's first ones (a break at a needle goes after it)
        first = min(breaks)
        return short.stem.count(end, merged, min(short.shared, bisect.bisect_right(positions, first)), suffix)

    positions = [ins.pos for ins in inserts]
    # where a tokenizer that drops blanks splits anyway, no piece of BREAKS (all blank) adds a token
    splits = counter.tokenizer.splits_at if _BLANK_BREAKS and counter.tokenizer.drops_blanks() else None
    for q in spots:
        if total == target:
            break
        if splits is not None and q not in taken and splits(text[q - 1 : q], text[q : q + 1]):
            continue  # `_break_delta`'s first case, for every piece at once
        for piece in BREAKS:
            delta = _break_delta(counter, q, piece, begin, end, inserts, positions, chosen)
            if delta is not None and delta <= 0:
                continue  # the count with it would be no more than the count without it: not above `total`
            # the count with it: the stretch around it tells where it holds no insert or break, else a count
            got = total + delta if delta is not None else count({**chosen, q: piece})
            if total < got <= target:
                chosen[q], total = piece, got
                break
    if total != target:
        return None
    merged = merged_with(chosen)
    context_tokens = target if not (prefix or suffix) else counter.count(begin, end, merged)
    keep = [i for i, ins in enumerate(merged) if chosen.get(ins.pos) != ins.text]
    return _measure(counter, text, begin, end, merged, needles, order, target, context_tokens, keep)


def _break_delta(
    counter: Counter,
    q: int,
    piece: str,
    begin: int,
    end: int,
    inserts: list[Insert],
    positions: list[int],
    chosen: dict[int, str],
) -> int | None:
    """The tokens a break `piece` at `q` adds to the window from `begin` to `end` with `inserts` (at `positions`)
    and the breaks `chosen`, where the stretch around it tells; None where only a count of the window does.
    Where the safe points around `q` (two characters or more from it, and from the window's ends) hold no insert
    and no break between them, the rest of the context counts the same with the break and without it (the
    tokens on either side of a safe point do not depend on the other), so the stretch between them alone tells:
    its count with the break less its count without. A tokenizer that discards whitespace
    (`Tokenizer.drops_blanks`: a WordPiece's) gains nothing from a blank break where it splits anyway
    (`Tokenizer.splits_at`: next to a blank; for BERT's files next to punctuation or a CJK ideograph), which the
    break's two neighbours tell without an encode (the one before it is an insert's last, where inserts end at
    `q`: a break there goes after them)."""
    index = counter.index
    text = index.text
    if counter.tokenizer.drops_blanks() and BLANKS.issuperset(piece):
        at = bisect.bisect_right(positions, q)
        before = inserts[at - 1].text[-1:] if at and positions[at - 1] == q else text[q - 1 : q]
        if counter.tokenizer.splits_at(before, text[q : q + 1]):
            return 0
    if not index.local:
        return None
    safe = index.safe
    i = bisect.bisect_right(safe, q - 2) - 1
    k = bisect.bisect_left(safe, q + 2)
    if i < 0 or k >= len(safe):
        return None
    a, b = safe[i], safe[k]
    if a < begin + 2 or b + 2 > end:
        return None
    near = bisect.bisect_left(positions, a - 2)
    if near < len(positions) and positions[near] <= b + 2:
        return None
    if any(a - 2 <= at <= b + 2 for at in chosen):
        return None
    return counter.encoded(text[a:q] + piece + text[q:b]) - counter.encoded(text[a:b])


def _anchor_start(
    index: HaystackIndex, bounds: list[int], start: int, t_begin: int, offset: int, hay: int
) -> tuple[int, int | None]:
    """A window start whose haystack puts a boundary exactly `offset` tokens in.

    The boundary at or after the drawn start's target position is preferred (the window moves
    forward), the one before it when the haystack would run out; the start is then moved to
    the next word start so that the window does not open inside a word, and the needle's
    offset stays exact up to that shift. Returns the start and the boundary, or the drawn start
    and None when neither boundary works.
    """
    text = index.text
    x = index.tok_char[min(t_begin + offset, index.n_tokens)]
    j = bisect.bisect_left(bounds, x)
    for q in ([bounds[j]] if j < len(bounds) else []) + ([bounds[j - 1]] if j > 0 else []):
        k = index.token_at(q) - offset
        if k < 0 or k + hay + MARGIN_TOKENS >= index.n_tokens:
            continue
        pos = index.tok_char[k]
        while k < index.n_tokens and pos > 0 and not text[pos - 1].isspace() and not text[pos].isspace():
            k += 1  # inside a word: go on to a token that starts one
            pos = index.tok_char[k]
        while pos < q and text[pos].isspace():
            pos += 1
        if pos <= q:
            return pos, q
    return start, None


def _snap_all(
    targets: list[int],
    order: list[int],
    index: HaystackIndex,
    bounds: list[int],
    lo: int,
    hi: int,
    always: int | None,
    snap: str | None = None,
) -> dict[int, int]:
    """Each needle's position, in `order`: the boundary nearest its target token's character within [floor, hi]
    (ties to the earlier one), where floor is the position of the needle before it (`lo` for the first); `always`
    (the window start) where it is nearer and not below the floor; the floor where no boundary is in range.
    `bounds` are the boundaries of `snap` when it is given: many needles are then placed by `_snap_vector`."""
    if snap is not None and len(order) >= SNAP_VECTOR_MIN:
        import numpy as np

        wanted = np.fromiter((targets[i] for i in order), dtype=np.int64, count=len(order))
        placed = _snap_vector(wanted, index, snap, lo, hi, always)
        if placed is not None:
            return dict(zip(order, placed, strict=True))
    positions: dict[int, int] = {}
    floor = lo
    n_tokens, tok_char, n = index.n_tokens, index.tok_char, len(bounds)
    find = bisect.bisect_left
    for i in order:
        x = tok_char[min(max(targets[i], 0), n_tokens)]
        # the boundary nearest x within [floor, hi], ties to the earlier one
        y = min(max(x, floor), hi)
        j = find(bounds, y)
        q: int | None = None
        if j > 0 and floor <= bounds[j - 1] <= hi:
            q = bounds[j - 1]
        if j < n and floor <= bounds[j] <= hi and (q is None or abs(bounds[j] - y) < abs(q - y)):
            q = bounds[j]
        if always is not None and (q is None or abs(always - x) < abs(q - x)) and always >= floor:
            q = always
        if q is None:
            q = floor
        positions[i] = q
        floor = q
    return positions


def _snap_ordered(
    targets: list[int], order: list[int], index: HaystackIndex, bounds: list[int], lo: int, hi: int, snap: str
) -> list[int]:
    """`_snap_all` with the window start as `always`, for targets given in `order`: the positions in `order`."""
    if len(order) >= SNAP_VECTOR_MIN:
        import numpy as np

        placed = _snap_vector(np.asarray(targets, dtype=np.int64), index, snap, lo, hi, lo)
        if placed is not None:
            return placed
    by_needle = [0] * len(order)
    for i, target in zip(order, targets, strict=True):
        by_needle[i] = target
    positions = _snap_all(by_needle, order, index, bounds, lo, hi, always=lo, snap=None)
    return [positions[i] for i in order]


def _snap_vector(
    wanted: np.ndarray, index: HaystackIndex, snap: str, lo: int, hi: int, always: int | None
) -> list[int] | None:
    """`_snap_array`'s positions as a list."""
    placed = _snap_array(wanted, index, snap, lo, hi, always)
    return None if placed is None else placed.tolist()


def _snap_array(
    wanted: np.ndarray, index: HaystackIndex, snap: str, lo: int, hi: int, always: int | None
) -> np.ndarray | None:
    """`_snap_all` for many needles at once with numpy, or None (for the loop) where `always` is given and is
    not `lo`, where `hi` is below `lo`, or where `snap` has no boundaries. `wanted` holds the target tokens
    in the needles' order; the positions come in that order.

    Every needle is snapped with the floor at `lo`, and the loop's positions are the running maximum of
    those. A needle whose target lies at or above the position p before it (a boundary, or `lo`) has its
    nearest boundary at or above p too, so both floors give it the same one; one whose target lies below p
    gets p in the loop, and at most p here. `always` (which is `lo`) wins over a needle's boundary in the
    loop only while p is `lo`; where it wins here past that, the target is below p, which the maximum keeps."""
    if hi < lo or (always is not None and always != lo):
        return None
    import numpy as np

    tok_char, bounds = index.arrays(snap)
    n = len(bounds)
    if not n:
        return None
    x = tok_char[np.minimum(np.maximum(wanted, 0), index.n_tokens)]
    y = np.minimum(np.maximum(x, lo), hi)
    j = np.searchsorted(bounds, y, side="left")
    # bounds[j - 1] < y <= bounds[j], and lo <= y <= hi: the boundary before y is below `hi` and the one at or
    # after it not below `lo`, so each is in range where it is not beyond its own end of the range
    before = bounds[np.maximum(j - 1, 0)]
    after = bounds[np.minimum(j, n - 1)]
    before_ok = (j > 0) & (before >= lo)
    after_ok = (j < n) & (after <= hi)
    # the one after is nearer where it is closer to y than the one before (after - y < y - before), ties to before
    nearer_after = after_ok & (~before_ok | (after + before < 2 * y))
    q = np.where(nearer_after, after, np.where(before_ok, before, lo))
    if always is not None:  # (where neither is in range, q is `lo`, which `always` is)
        q = np.where(np.abs(always - x) < np.abs(q - x), always, q)
    placed: np.ndarray = np.maximum.accumulate(q)
    return placed


def _inserts(
    positions: dict[int, int], needles: list[str], order: list[int], joiner: str, last_without_joiner: bool
) -> list[Insert]:
    result = []
    for rank, i in enumerate(order):
        ending = "" if last_without_joiner and rank == len(order) - 1 else joiner
        result.append(Insert(positions[i], needles[i] + ending))
    return result


def _measure(
    counter: Counter,
    text: str,
    begin: int,
    end: int,
    inserts: list[Insert],
    needles: list[str],
    order: list[int],
    total: int,
    context_tokens: int,
    needle_inserts: list[int] | None = None,
) -> Placement:
    """The placement of assembled inserts, with each needle's token and character offset.

    `needle_inserts` lists which inserts are the needles, in `order` (default: all of them, one each).
    """
    offsets = counter.offsets(begin, end, inserts)
    # character offset of each insert in the context: the haystack before it and the inserts before it
    written = itertools.accumulate(map(len, map(_TEXT, inserts)), initial=0)
    starts = [pos - begin + chars for pos, chars in zip(map(_POS, inserts), written, strict=False)]
    if needle_inserts is None and len(order) == len(needles) == len(inserts):
        # one insert a needle, in `order`: each needle's offsets are its insert's, put back in needle order
        by_needle = sorted(range(len(order)), key=order.__getitem__)
        token_offsets = list(map(offsets.__getitem__, by_needle))
        char_offsets = list(map(starts.__getitem__, by_needle))
    else:
        token_offsets = [0] * len(needles)
        char_offsets = [0] * len(needles)
        for i, k in zip(order, needle_inserts if needle_inserts is not None else range(len(order)), strict=False):
            token_offsets[i] = offsets[k]
            char_offsets[i] = starts[k]
    return Placement(
        start=begin,
        end=end,
        inserts=tuple(inserts),
        total_tokens=total,
        context_tokens=context_tokens,
        needle_tokens=tuple(token_offsets),
        needle_chars=tuple(char_offsets),
    )


def needles_alone(
    tokenizer: Tokenizer, needles: list[str], joiner: str, prefix: str = "", suffix: str = ""
) -> Placement:
    """A context made of the needles alone, in order, joined by `joiner`: no haystack text, no target.

    The placement has an empty haystack window (`start == end == 0`) and one insert per needle at
    position 0, so `Placement.context` gives the joined needles for any haystack text.

    Token offsets (the count of the context before each needle) are summed piece by piece, each
    piece being a joiner and the next needle, cut where the previous needle ends: for tokenizers
    that pre-split there (tiktoken, most BPE tokenizers) the sums equal the counts of the prefixes.
    The sum over all pieces is compared with a count of the whole context, and on any difference
    every offset is counted by encoding its prefix instead (exact for any tokenizer, quadratic).
    """
    texts = [n + joiner if i < len(needles) - 1 else n for i, n in enumerate(needles)]
    inserts = tuple(Insert(0, t) for t in texts)
    chars: list[int] = []
    at = 0
    for t in texts:
        chars.append(at)
        at += len(t)
    context = "".join(texts)
    context_tokens = tokenizer.count_pieces(context)
    joiner_tokens = tokenizer.count_pieces(joiner) if joiner else 0
    offsets: list[int] = []
    through = 0  # tokens of the context up to the end of the previous needle
    for i, needle in enumerate(needles):
        offsets.append(through + joiner_tokens if i else 0)
        through += tokenizer.count_pieces((joiner if i else "") + needle)
    if through != context_tokens or any(
        tokenizer.count_pieces(context[: chars[i]]) != offsets[i] for i in (1, len(needles) - 1) if 0 < i < len(needles)
    ):
        offsets = [tokenizer.count_pieces(context[:c]) if c else 0 for c in chars]
    total = tokenizer.count_pieces(prefix + context + suffix) if prefix or suffix else context_tokens
    return Placement(0, 0, inserts, total, context_tokens, tuple(offsets), tuple(chars))
