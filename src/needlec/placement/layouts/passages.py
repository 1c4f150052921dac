"""The `passages` layout (MLNeedle): whole passages, the needle between two of them, exact length.

The placement engine cuts a haystack window at a token, which would cut the last passage anywhere
(and in scripts where one character is several tokens, some lengths cannot be reached by cutting
at all). For a `passages` haystack the context is instead a run of whole consecutive passages,
numbered `[i]` from 0 in the order shown (when `numbered`), with the needle passage at a passage
index (0 = start, the last = end, `floor(n/2)` = middle for depth 50), padded at the end with a
declared filler (`haystack.builder.filler`, repeated) to the exact token count. Among a few start
passages the one that leaves the least filler is taken. The item records the passage count, the
needle's index, the first passage and the filler tokens under `structure.passages`.

Counts go through the haystack view's seam counter: a context is a run of the haystack with the
labels, the needle and the padding inserted, so only the seams around those inserts are encoded.
With `rank`, the distractors are the passages most similar to the question, prepared (and cached)
before the items (`haystacks/ranking.py`, driven by `compile/ranking.py`); their context is one insert,
counted as the sum of its labelled passages (memoised), and every cut those sums make is checked
(`PieceMeasure.holds`); a context whose cuts do not all count apart is counted whole.
"""

from __future__ import annotations

import bisect
import contextvars
import hashlib
import operator
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar, cast

from needlec.errors import ContractError
from needlec.haystacks.index import HaystackIndex
from needlec.haystacks.passages import PASSAGE_JOINER
from needlec.placement.engine import Counter, Insert, Placement
from needlec.placement.layouts import LAYOUTS, LayoutSettings, Placed, Request
from needlec.placement.layouts.slots import label_list
from needlec.util.absence import Absence

if TYPE_CHECKING:
    from needlec.placement.view import HaystackView
    from needlec.tokenizer import Tokenizer

START_TRIES = 16
MAX_FILLER_STEPS = 24
JOINT_CHARS = 32
"""Characters either side of a cut in a ranked context checked for counting apart (`PieceMeasure.holds`)."""
LABEL_PROBE = "[0] "
"""The label a passage's ends are checked against (`PieceMeasure._joint`)."""
PAD_EDGE = 16
"""Filler repeats of a long pad counted with the text on either side; those between go by the filler's rate."""
LONG_PAD = 512
"""Characters from which a pad (with what follows it) is encoded without being memoised (`TailMeasure`)."""


@dataclass
class PassageTable:
    """Passage spans of one indexed haystack (blank-line blocks) and their token counts (lazy)."""

    spans: list[tuple[int, int]]
    tokens: dict[int, int]
    pieces: dict[int, str] = field(default_factory=dict)  # passage text + joiner, sliced once (see `piece`)
    blocks_ok: bool | None = None  # whether counting by whole pieces matched the seam counter here
    _folded: tuple[Absence, list[int]] | None = None
    _piece_tokens: list[int] | None = None  # tokens of each piece (-1: not counted yet)
    _label_tokens: dict[str, list[int]] = field(default_factory=dict)  # per label template: tokens per number
    _firsts: list[int] | None = None  # the first character of each passage (`firsts`)
    _gaps: list[str] | None = None  # the text from each passage's start to the next one's (`gaps`)
    _starts_at: list[int] | None = None  # `_safe_tokens`
    _tails: dict[str, TailMeasure] = field(default_factory=dict)  # per filler: the last piece with the pad

    def tail_measure(self, encoded: Callable[[str], int], count: Callable[[str], int], filler: str) -> TailMeasure:
        """The measure of a context's last piece with the pad and suffix after it, kept per filler (the table
        belongs to one haystack view, so to one tokenizer)."""
        got = self._tails.get(filler)
        if got is None:
            got = self._tails[filler] = TailMeasure(encoded, count, filler)
        return got

    def folded(self, text: str) -> tuple[Absence, list[int]]:
        """Every passage casefolded, joined by a NUL (no term holds one), and where each one starts in
        that string (plus the end): built once, so a window of passages is searched as one slice (and a
        drawn name mostly without a scan, `Absence`)."""
        if self._folded is None:
            parts = [text[a:b].casefold() for a, b in self.spans]
            offsets = [0]
            for part in parts:
                offsets.append(offsets[-1] + len(part) + 1)
            self._folded = (Absence("\x00".join(parts) + "\x00"), offsets)
        return self._folded

    def piece(self, i: int, text: str, joiner: str) -> str:
        """Passage i followed by the joiner, as one string object reused across items (so the seam
        counter's memo finds its count by a cached hash)."""
        got = self.pieces.get(i)
        if got is None:
            a, b = self.spans[i]
            got = self.pieces[i] = text[a:b] + joiner
        return got

    def firsts(self) -> list[int]:
        """The first character of every passage (built once)."""
        if self._firsts is None:
            self._firsts = [a for a, _ in self.spans]
        return self._firsts

    def gaps(self, text: str) -> list[str]:
        """The text from each passage's first character to the next one's (the last passage: to its end), as
        one string object each, built once: a documents context joins them rather than slicing the haystack
        again for each of its thousands of documents."""
        if self._gaps is None:
            firsts = self.firsts()
            self._gaps = [*map(text.__getitem__, map(slice, firsts, firsts[1:])), text[slice(*self.spans[-1])]]
        return self._gaps

    def piece_tokens(
        self,
        lo: int,
        hi: int,
        text: str,
        joiner: str,
        encoded: Callable[[str], int],
        index: HaystackIndex | None = None,
    ) -> list[int]:
        """Tokens of pieces `lo` to `hi - 1` (passage and joiner), each counted once per table. With the
        haystack's `index`, a piece that reads as the haystack does from its passage's start to the next one's
        (the joiner between them), both safe points, is counted by index arithmetic rather than encoded."""
        if self._piece_tokens is None:
            self._piece_tokens = [-1] * len(self.spans)
        known = self._piece_tokens
        got = known[lo:hi]
        if -1 in got:
            spans = self.spans
            at = self._safe_tokens(index) if index is not None else None
            width = len(joiner)
            for i in range(lo, hi):
                if known[i] >= 0:
                    continue
                if at is not None and i + 1 < len(spans) and at[i] >= 0 and at[i + 1] >= 0:
                    end = spans[i][1]
                    if spans[i + 1][0] - end == width and text.startswith(joiner, end):
                        known[i] = at[i + 1] - at[i]
                        continue
                known[i] = encoded(self.piece(i, text, joiner))
            got = known[lo:hi]
        return got

    def _safe_tokens(self, index: HaystackIndex) -> list[int]:
        """For each passage, the token index of its first character where that is a safe point of `index`
        (the count of the haystack between two safe points is the difference of theirs), else -1. Made
        once per table; a table belongs to one haystack view, so to one index."""
        if self._starts_at is None:
            import numpy as np

            firsts = np.asarray(self.firsts(), dtype=np.int64)
            safe = np.asarray(index.safe, dtype=np.int64)
            if not index.local or not len(safe):
                self._starts_at = [-1] * len(firsts)
            else:
                j = np.minimum(np.searchsorted(safe, firsts), len(safe) - 1)
                tokens = np.asarray(index.safe_tok, dtype=np.int64)[j]
                self._starts_at = np.where(safe[j] == firsts, tokens, -1).tolist()
        return self._starts_at

    def label_tokens(
        self, label: Callable[[int], str], template: str, hi: int, encoded: Callable[[str], int]
    ) -> list[int]:
        """Tokens of the labels numbered 0 to `hi - 1` (`label(n)`, made from `template`), counted once per table."""
        known = self._label_tokens.setdefault(template, [])
        while len(known) < hi:
            known.append(encoded(label(len(known))))
        return known

    @classmethod
    def of(cls, text: str) -> PassageTable:
        spans = []
        at = 0
        for block in text.split(PASSAGE_JOINER):
            stripped = block.strip()
            if stripped:
                lead = len(block) - len(block.lstrip())
                spans.append((at + lead, at + lead + len(stripped)))
            at += len(block) + len(PASSAGE_JOINER)
        return cls(spans, {})

    def count(self, i: int, index: HaystackIndex) -> int:
        if i not in self.tokens:
            a, b = self.spans[i]
            self.tokens[i] = index.tokenizer.count_pieces(index.text[a:b])
        return self.tokens[i]


def passage_index(depth: float, distractors: int) -> int:
    """Needle index among `distractors + 1` passages: 0 at depth 0, the last at 100, floor(n/2) at 50."""
    if depth <= 0:
        return 0
    return min(distractors, int(depth / 100.0 * (distractors + 1)))


def place_passages(
    index: HaystackIndex,
    table: PassageTable,
    *,
    start: int,
    target: int,
    needle: str | None,
    depth: float,
    filler: str,
    numbered: bool,
    counter: Counter,
    prefix: str = "",
    suffix: str = "",
    distractors: bool = True,
) -> tuple[Placement, dict[str, object]]:
    """Whole passages from near `start` with the needle at the passage index for `depth`, exactly
    `target` tokens counted over `prefix + context + suffix` (both empty when only the context counts)."""
    frame = (prefix, suffix)
    joiner_tokens = max(1, index.tokenizer.count_pieces(PASSAGE_JOINER))
    label_tokens = index.tokenizer.count_pieces("[10] ")
    needle_tokens = (index.tokenizer.count_pieces(needle) + joiner_tokens + label_tokens) if needle else 0
    first = bisect.bisect_left([a for a, _ in table.spans], start)
    if not distractors:
        result = _assemble(
            index, counter, frame, table, min(first, len(table.spans) - 1), 0, needle, depth, filler, numbered, target
        )
        if result is None:
            raise ContractError(f"target length {target} is too small for the needle passage")
        return result
    budget = target - counter.encoded(prefix + suffix) - needle_tokens
    best: tuple[int, int, int] | None = None  # (slack, start passage, passages taken)
    for s in range(first, min(first + START_TRIES, len(table.spans))):
        used = 0
        k = 0
        while s + k < len(table.spans):
            cost = table.count(s + k, index) + (joiner_tokens if k else 0) + (label_tokens if numbered else 0)
            if used + cost > budget - 2:  # keep a little room: seams may merge differently
                break
            used += cost
            k += 1
        if k and s + k < len(table.spans) and (best is None or budget - used < best[0]):
            best = (budget - used, s, k)
    if best is None:
        raise ContractError(f"target length {target} is too small for a whole passage and the needle")
    _, s, k = best
    for attempt in range(k, 0, -1):
        result = _assemble(index, counter, frame, table, s, attempt, needle, depth, filler, numbered, target)
        if result is not None:
            return result
    raise ContractError(f"could not pad the passages to exactly {target} tokens with the filler {filler!r}")


def _assemble(
    index: HaystackIndex,
    counter: Counter,
    frame: tuple[str, str],
    table: PassageTable,
    s: int,
    k: int,
    needle: str | None,
    depth: float,
    filler: str,
    numbered: bool,
    target: int,
) -> tuple[Placement, dict[str, object]] | None:
    begin = table.spans[s][0]
    end = table.spans[s + k - 1][1] if k else begin
    j = passage_index(depth, k) if needle else -1
    inserts: list[Insert] = []
    needle_at = -1  # index of the needle's insert (its label is a separate insert just before it)
    for idx in range(k):
        pos = table.spans[s + idx][0]
        if idx == j:
            if numbered:
                inserts.append(Insert(pos, _label(j, numbered)))
            needle_at = len(inserts)
            inserts.append(Insert(pos, needle + PASSAGE_JOINER))  # type: ignore[operator]
        if numbered:
            inserts.append(Insert(pos, _label(idx + (1 if 0 <= j <= idx else 0), numbered)))
    if needle and j == k:
        inserts.append(Insert(end, (PASSAGE_JOINER if k else "") + _label(k, numbered)))
        needle_at = len(inserts)
        inserts.append(Insert(end, needle))
    prefix, suffix = frame
    nonempty = bool(k or needle)

    def measure(pad: str) -> int:
        extra = [Insert(end, pad)] if pad else []
        return counter.count(begin, end, inserts + extra, prefix, suffix)

    pad = pad_to(nonempty, filler, target, measure)
    if pad is None:
        return None
    if pad:
        inserts.append(Insert(end, pad))
    tokens = counter.count(begin, end, inserts)
    offsets = counter.offsets(begin, end, inserts) if needle else []
    needle_chars: tuple[int, ...] = ()
    needle_tokens: tuple[int, ...] = ()
    if needle:
        context_before = _join(index.text, begin, inserts[needle_at].pos, inserts[:needle_at])
        chars = len(context_before)
        needle_chars = (chars,)
        needle_tokens = (offsets[needle_at],)
    placement = Placement(
        start=begin,
        end=end,
        inserts=tuple(inserts),
        total_tokens=target,
        context_tokens=tokens,
        needle_tokens=needle_tokens,
        needle_chars=needle_chars,
    )
    layout: dict[str, object] = {
        "count": k + (1 if needle else 0),
        "needle_index": [j] if needle else [],
        "first": s,
        "filler_tokens": index.tokenizer.count_pieces(pad) if pad else 0,
        "filler": filler if pad else None,
        "numbered": numbered,
        "baseline": k == 0,
    }
    return placement, layout


def pad_to(nonempty: bool, filler: str, target: int, measure: Callable[[str], int]) -> str | None:
    """A blank line and `filler` repeated so that the body plus it measures exactly `target` ("" when the
    body already does); `measure(pad)` counts the body with `pad` after it. None when the body is too
    long or no repeat count lands on the target.

    The repeat count steps by the tokens still missing (one token a repeat, as a filler such as " ." is
    to most tokenizers); where that cycles (a filler that is two tokens to this tokenizer, "▁" and ".",
    overshoots by twice what it corrects) the count is bisected instead (the count grows with the repeats):
    the same pad wherever the steps find one."""
    base = measure("")
    if base > target:
        return None
    if base == target:
        return ""
    joiner = PASSAGE_JOINER if nonempty else ""
    n = max(0, target - base - 1)
    seen: set[int] = set()
    for _ in range(MAX_FILLER_STEPS):
        if n in seen or n < 0:
            break
        seen.add(n)
        pad = joiner + filler * n
        got = measure(pad)
        if got == target:
            _steps_found()
            return pad
        n += target - got
    if _BISECT.get():
        return _bisect_repeats(joiner, filler, target, measure)
    _steps_failed()
    return None


_BISECT: contextvars.ContextVar[bool] = contextvars.ContextVar("needlec_pad_bisect", default=True)
"""Whether `pad_to` may bisect where its steps cycle (`steps_first` turns it off for a first try)."""

STEPS_GIVE_UP = 8
"""Pads in a row that `pad_to`'s steps alone do not find in `steps_first`'s first try, after which that try gives
up for the one with bisection. A filler that is two tokens to the tokenizer (" ." as "Ġ" and "." to a byte-level
BPE that never saw " .") fails at every count, and each count tried was one more assembly with a longer pad: a
32K RULER QA item took 6 CPU s before its bisection began."""

_MISSES: contextvars.ContextVar[list[int] | None] = contextvars.ContextVar("needlec_pad_misses", default=None)
"""`steps_first`'s first try: the pads its steps did not find in a row (None outside it)."""


class _StepsGaveUp(ContractError):
    """`steps_first`'s first try gives up (`STEPS_GIVE_UP`)."""


def _steps_found() -> None:
    misses = _MISSES.get()
    if misses is not None:
        misses[0] = 0


def _steps_failed() -> None:
    misses = _MISSES.get()
    if misses is not None:
        misses[0] += 1
        if misses[0] >= STEPS_GIVE_UP:
            raise _StepsGaveUp(f"no pad found by steps alone {misses[0]} times in a row")


_T = TypeVar("_T")


def steps_first(build: Callable[[], _T], rng: random.Random | None = None) -> _T:
    """`build()` (a layout's placement) with pads found by `pad_to`'s steps alone, as before it could bisect,
    its own fallbacks (fewer passages or documents) included; only where all that fails, or where the steps miss
    `STEPS_GIVE_UP` pads in a row, `build()` again with bisection. So an item that compiled without bisection keeps
    its bytes, unless its steps missed that many pads in a row before they found one. `rng` (the item's) is put
    back as it was before the first try, so the second draws what the first did, wherever the first gave up."""
    state = rng.getstate() if rng is not None else None
    first = _BISECT.set(False)
    misses = _MISSES.set([0])
    try:
        return build()
    except ContractError:
        pass
    finally:
        _BISECT.reset(first)
        _MISSES.reset(misses)
    if rng is not None and state is not None:
        rng.setstate(state)
    return build()


def _bisect_repeats(joiner: str, filler: str, target: int, measure: Callable[[str], int]) -> str | None:
    """`joiner` and the fewest repeats of `filler` that measure at least `target`, if that is exactly it; else
    the same with the first repeat's leading whitespace left out (where a filler's space is a token of its own,
    " ." as "▁" and ".", every repeat adds two tokens: without that space the pad can end on an odd count)."""
    if not filler:
        return None
    heads = dict.fromkeys([filler, filler.lstrip()])
    for head in heads:
        if not head:
            continue

        def pad(n: int, head: str = head) -> str:
            return joiner + (head + filler * (n - 1) if n else "")

        lo, hi = 0, 1
        while measure(pad(hi)) < target:  # each repeat adds a token or more, but for one whose repeats merge
            lo, hi = hi + 1, 2 * hi
            if hi > 2 * target:
                break
        else:
            while lo < hi:  # the fewest repeats that reach the target (the count grows with the repeats)
                mid = (lo + hi) // 2
                if measure(pad(mid)) < target:
                    lo = mid + 1
                else:
                    hi = mid
            if measure(pad(lo)) == target:
                return pad(lo)
    return None


@dataclass
class TailMeasure:
    """Tokens of a context's last piece with the pad and the prompt's suffix after it, from the piece's own
    count: the piece is not encoded again for every pad the search tries. `after(last, n, pad, suffix)` is `n`
    plus the tokens of `pad + suffix` where the text counts as its two sides do at the cut, checked on
    `JOINT_CHARS` characters either side of it (as `PieceMeasure` checks its cuts); a long pad of filler
    repeats that count evenly
    is counted by its edges and the filler's rate between them, its cuts checked the same way. Where a check
    fails, the text is encoded whole. Counts and check results are memoised by their texts alone, so an
    item's bytes never depend on the items built before it."""

    encoded: Callable[[str], int]  # a memoised count
    count: Callable[[str], int]  # an unmemoised count (for texts that rarely recur)
    filler: str
    _checks: dict[str, bool] = field(default_factory=dict, repr=False)
    _rate: int | None = field(default=None, repr=False)

    def apart(self, left: str, right: str) -> bool:
        """Whether `left + right` counts as `left` and `right` do apart, on `JOINT_CHARS` characters either side.
        False without a check where a side is one run of a kind of character (spaces, letters and digits, or
        other marks: a run of blank lines or dots is one piece to a tokenizer, reaching past what the check
        sees)."""
        a, b = left[-JOINT_CHARS:], right[:JOINT_CHARS]
        key = f"{a}\0{b}"
        got = self._checks.get(key)
        if got is None:
            if len(self._checks) >= 100_000:
                self._checks.clear()
            mixed = _mixed(a) and _mixed(b)
            got = self._checks[key] = mixed and self.encoded(a + b) == self.encoded(a) + self.encoded(b)
        return got

    def rate(self) -> int:
        """Tokens per filler repeat when repeats count evenly (64 and 65 repeats give 64 and 65 times one),
        else 0."""
        if self._rate is None:
            one = self.count(self.filler) if self.filler else 0
            even = one > 0 and all(self.count(self.filler * n) == n * one for n in (64, 65))
            self._rate = one if even else 0
        return self._rate

    def after(self, last: str, last_tokens: int, pad: str, suffix: str = "", joined: int | None = None) -> int:
        """Tokens of `last + pad + suffix`, given `last_tokens`, the tokens of `last` alone, and `joined`, those
        of `last` with the blank line after it, where known. The cut is checked where `last` ends; where the
        text merges there (a sentence's full stop and the blank line can be one token), after the blank line
        that opens the pad (or the suffix, without a pad), with `last` and the blank line counted together."""
        right = pad + suffix
        if not right:
            return last_tokens
        if not last or self.apart(last, right):
            return last_tokens + self.padded(pad, suffix)
        width = len(PASSAGE_JOINER)
        if right.startswith(PASSAGE_JOINER) and len(right) > width:  # the blank line opens the pad, or the suffix
            core, rest = (pad[width:], suffix) if pad else ("", suffix[width:])
            left = last + PASSAGE_JOINER
            if self.apart(left, core + rest):
                return (self.encoded(left) if joined is None else joined) + self.padded(core, rest)
        return self.count(last + right)

    def padded(self, pad: str, suffix: str = "") -> int:
        """Tokens of `pad + suffix`, `pad` being `pad_to`'s (a blank line and filler repeats, the first of them
        perhaps without its leading whitespace, as `_bisect_repeats` tries it): a long pad's middle repeats by the
        rate, where the cuts either side of them count apart; else encoded."""
        filler = self.filler
        core = pad.removeprefix(PASSAGE_JOINER)
        lead = filler.lstrip() if filler and not core.startswith(filler) else ""  # (kept in the head)
        repeats, extra = divmod(len(core) - len(lead), len(filler)) if filler else (0, 0)
        if (
            extra
            or repeats <= 4 * PAD_EDGE
            or (lead and (lead == filler or not core.startswith(lead)))
            or core[len(lead) :] != filler * repeats
            or not self.rate()
        ):
            return self._pair(pad, suffix)
        head = pad[: len(pad) - (repeats - PAD_EDGE) * len(filler)]
        edge = filler * PAD_EDGE  # the last repeats, before what follows
        probe = filler * -(-JOINT_CHARS // len(filler))  # repeats enough to fill a check's side
        if not (self.apart(head, probe) and self.apart(probe, probe) and self.apart(probe, edge + suffix)):
            return self.count(pad + suffix)
        return self.encoded(head) + (repeats - 2 * PAD_EDGE) * self.rate() + self._pair(edge, suffix)

    def _pair(self, pad: str, suffix: str) -> int:
        """Tokens of `pad + suffix`: the two counted apart where they count so at the cut (each memoised: pads of
        a given length recur across items, an item's suffix across the pads its search tries), else encoded."""
        if pad and suffix and len(pad) < LONG_PAD and self.apart(pad, suffix):
            return self.encoded(pad) + self.encoded(suffix)
        return self.encoded(pad + suffix) if len(pad) < LONG_PAD else self.count(pad + suffix)


def _mixed(text: str) -> bool:
    """Whether `text` holds two kinds of character: spaces, letters and digits, or other marks."""
    kinds = {0 if c.isspace() else 1 if c.isalnum() else 2 for c in text}
    return len(kinds) > 1


def place_ranked(
    tokenizer: Tokenizer,
    ranker: Any,
    ranking: Any,
    *,
    target: int,
    needle: str | None,
    depth: float,
    filler: str,
    numbered: bool,
    measure: PieceMeasure,
    rng: random.Random,
) -> tuple[Placement, dict[str, object]]:
    """The candidates most similar to the question packed first, shown in a seeded (or relevance)
    order with the needle at the passage index for `depth`, exactly `target` tokens by `measure`.

    The context does not come from a window of the haystack: the placement's window is empty
    (`start == end == 0`) and the whole context is one insert."""
    passages = ranker.passages
    memo = ranker.counts  # the ranker's own: one tokenizer per haystack view
    joiner_tokens = max(1, tokenizer.count_pieces(PASSAGE_JOINER))
    label_tokens = tokenizer.count_pieces("[10] ") if numbered else 0
    needle_tokens = (tokenizer.count_pieces(needle) + joiner_tokens + label_tokens) if needle else 0
    budget = target - measure([], "") - needle_tokens - 2  # keep a little room: seams may merge differently
    chosen: list[int] = []  # positions in the ranking, most similar first
    used = 0
    for r, p in enumerate(ranking.candidates):
        if p not in memo:
            memo[p] = tokenizer.count_pieces(passages[p])
        cost = memo[p] + (joiner_tokens if chosen else 0) + label_tokens
        if used + cost <= budget:
            chosen.append(r)
            used += cost
    shown = list(chosen)
    if ranker.config.order == "seeded":
        rng.shuffle(shown)
    while True:
        texts = [passages[ranking.candidates[r]] for r in shown]
        result = _assemble_ranked(texts, needle, depth, filler, numbered, target, measure)
        if result is not None:
            body, pad, j, pieces = result
            if not measure.pieces_ok:
                break
            if measure.holds(pieces, pad, j if needle else None):
                break  # the piece sums stand: the context measures `target`
            measure.pieces_ok = False  # a joint does not count apart: build this context with whole counts
            continue
        if not shown:
            raise ContractError(f"target length {target} is too small for the needle passage")
        shown.remove(max(shown))  # the least similar goes first
    context = body + pad
    needle_chars: tuple[int, ...] = ()
    needle_at: tuple[int, ...] = ()
    if needle:
        at = context.index(_label(j, numbered) + needle) + len(_label(j, numbered))
        needle_chars = (at,)
        needle_at = (
            measure.before(pieces, j, _label(j, numbered))
            if measure.pieces_ok
            else tokenizer.count_pieces(context[:at]),
        )
    if measure.pieces_ok:
        context_tokens = measure.bare(pieces, pad)
    else:
        context_tokens = (
            measure.whole([body], pad) if not (measure.prefix or measure.suffix) else tokenizer.count_pieces(context)
        )
    placement = Placement(
        start=0,
        end=0,
        inserts=(Insert(0, context),),
        total_tokens=target,
        context_tokens=context_tokens,
        needle_tokens=needle_at,
        needle_chars=needle_chars,
    )
    layout: dict[str, object] = {
        "count": len(shown) + (1 if needle else 0),
        "needle_index": [j] if needle else [],
        "first": ranking.candidates[shown[0]] if shown else None,
        "filler_tokens": measure.pad_tokens(pad) if pad else 0,
        "filler": filler if pad else None,
        "numbered": numbered,
        "baseline": False,
        "ranked": {
            "model": ranker.model_id,
            "pool": ranker.config.pool,
            "candidates": len(ranking.candidates),
            "dropped": ranking.dropped,
            "order": ranker.config.order,
            "passages": [ranking.candidates[r] for r in shown],
            "ranks": shown,
        },
    }
    return placement, layout


def _assemble_ranked(
    texts: list[str],
    needle: str | None,
    depth: float,
    filler: str,
    numbered: bool,
    target: int,
    measure: PieceMeasure,
) -> tuple[str, str, int, list[str]] | None:
    """(body, padding, needle index, pieces) for these passages in this order, or None when over `target`.
    `measure(pieces, pad)` counts the body, given as its labelled passages (the pieces) each with the
    joiner after it but the last, with `pad` after it."""
    blocks = list(texts)
    j = passage_index(depth, len(texts)) if needle else -1
    if needle:
        blocks.insert(j, needle)
    pieces = measure.labelled(blocks, numbered)
    body = "".join(pieces)
    pad = pad_to(bool(body), filler, target, lambda p: measure(pieces, p))
    return None if pad is None else (body, pad, j, pieces)


@dataclass
class PieceMeasure:
    """Tokens of `prefix + "".join(pieces) + pad + suffix` for a ranked context given as its labelled
    passages (each with the joiner after it but the last): the first piece with the prefix, the middle
    pieces from `memo` (the same passage under the same label recurs across items) and the last with
    the pad and suffix. Passages are cut before their labels, after a blank line, and a label's number
    from its text. The caller checks every such cut of a finished context (`holds`: the text either side
    of it counts as its two sides do; a cut between two passages by its parts, `_joint`, which recur
    across items, else where it is); a cut that fails sets `pieces_ok` to False, and that context is
    built again with whole counts. The measure is the item's own, so an item's bytes never depend on
    which items were built before it (the memo holds counts and check results, which depend on their
    texts alone)."""

    tokenizer: Tokenizer
    prefix: str
    suffix: str
    memo: dict[str, int]
    filler: str = ""  # a long pad of it counts its middle repeats at the filler's own rate, when that is even
    pieces_ok: bool = True  # False once the piece sums missed a whole count: count this context whole
    rests: dict[tuple[bool, bool], dict[str, int]] = field(default_factory=dict, kw_only=True)  # see `labelled`
    edges: dict[str, tuple[bool, bool]] = field(default_factory=dict, kw_only=True)  # see `labelled`
    numbers_ok: list[bool] = field(default_factory=list, kw_only=True)  # `_number_ok` of label 0, 1, ...
    _kept: tuple[list[str], list[int], list[int], list[bool] | None] | None = field(default=None, repr=False)

    def whole(self, pieces: list[str], pad: str) -> int:
        return self.tokenizer.count_pieces(self.prefix + "".join(pieces) + pad + self.suffix)

    def _apart(self, left: str, right: str) -> bool:
        """Whether `left + right` counts as `left` and `right` do apart, checked on `JOINT_CHARS` characters
        either side of the joint (memoised by those characters), as the seam counter checks a long insert's
        cuts."""
        a, b = left[-JOINT_CHARS:], right[:JOINT_CHARS]
        key = f"\0apart\0{a}\0{b}"
        got = self.memo.get(key)
        if got is None:
            got = int(self.tokenizer.count_pieces(a + b) == self._memoised(a) + self._memoised(b))
            if len(self.memo) >= 100_000:
                self.memo.clear()
            self.memo[key] = got
        return got == 1

    def holds(self, pieces: list[str], pad: str, needle: int | None) -> bool:
        """Whether every cut the piece sums make in this context counts apart (`_apart`): between two
        pieces (with the prompt around the context and without it, as `bare` counts), in each piece counted
        in two parts, and around a long pad's repeats; with `needle`, also the cuts that `before` makes to
        count the text ahead of that piece's passage. Inside the context, where neither the prompt nor the
        pad reaches, the cut between two passages and the cut after the second one's number are checked by
        their parts (`_joint`) and, where a part fails, where they are."""
        if len(pieces) < 2:
            return True
        apart = self._apart
        last = len(pieces) - 1
        _, cuts, joints = self._parts(pieces)
        for i in range(1, len(pieces)):
            if 1 < i < last and (joints[i] if joints else self._joint(pieces[i - 1], pieces[i], cuts[i])):
                continue  # a cut between two labelled passages, checked by its parts
            # the text on either side of the cut as the measures count it, as far as the check looks
            right = pieces[i] + pad if i == last else pieces[i]
            framed_left = self.prefix + pieces[0] if i == 1 else pieces[i - 1]
            framed_right = right + self.suffix if i == last else right
            if not (apart(framed_left, framed_right) and apart(pieces[i - 1], right)):
                return False
            cut = _number_end(pieces[i]) if i < last else 0
            if cut and not apart(pieces[i][:cut], pieces[i][cut:]):
                return False
        if needle is not None:
            end = _number_end(pieces[needle])
            label = pieces[needle][: end + 1] if end else ""  # "[12] ", as `before` counts it
            if needle and not apart(pieces[needle - 1], label):
                return False
            cut = _number_end(pieces[0])
            if cut and not apart(pieces[0][:cut], pieces[0][cut:]):
                return False
        edges = self._pad_edges(pad)
        if edges is not None:
            head, edge = edges
            if not (apart(pieces[-1] + head, edge) and apart(edge, edge + self.suffix) and apart(edge, edge)):
                return False
        return True

    def _joint(self, left: str, right: str, cut: int) -> bool:
        """Whether the usual cut inside a context, between a passage with the joiner after it (`left`) and
        a labelled one (`right`, `"[12] ..."`, its number ending at `cut`), counts apart, checked by its
        parts, each memoised by what recurs across items (a passage's ends, a label's number) rather than
        by the pair of passages, which a ranking rarely shows together twice: `left`'s end before a label,
        `right`'s text after a label, and the number between the joiner and a space. False when the cut is
        not of that shape or a part does not count apart: the caller then checks the cut where it is."""
        if not cut or not left.endswith(PASSAGE_JOINER):
            return False
        head = right[cut : cut + JOINT_CHARS]
        return self._tail_ok(left[-JOINT_CHARS:]) and self._head_ok(head) and self._number_ok(right[:cut])

    def _tail_ok(self, tail: str) -> bool:
        """Whether a passage's end (with the joiner) counts apart from a label after it."""
        return self._part("\0tail\0" + tail, tail, LABEL_PROBE) == 1

    def _head_ok(self, head: str) -> bool:
        """Whether a passage's start (after a label's number) counts apart from the number."""
        return self._part("\0head\0" + head, LABEL_PROBE[:-1], head) == 1

    def _number_ok(self, number: str) -> bool:
        """Whether a label's number (`"[12]"`) counts apart from the joiner before it and a space after it."""
        key = "\0number ok\0" + number
        got = self.memo.get(key)
        if got is None:
            got = self.memo[key] = self._part("", PASSAGE_JOINER, number) & self._part("", number, " ")
        return got == 1

    def _part(self, key: str, left: str, right: str) -> int:
        """1 when `left + right` counts apart (`_apart`), else 0, kept under `key` (when one is given)."""
        got = self.memo.get(key) if key else None
        if got is None:
            got = int(self._apart(left, right))
            if key:
                self.memo[key] = got
        return got

    def before(self, pieces: list[str], j: int, label: str) -> int:
        """Tokens of the context ahead of piece j's passage (its label included), from the pieces (`holds`
        checked the cuts)."""
        return sum(self._parts(pieces)[0][:j]) + self._memoised(label)

    def pad_tokens(self, pad: str) -> int:
        """Tokens of the pad alone: a long one's middle repeats by the filler's rate, where its cuts add up."""
        edges = self._pad_edges(pad)
        if edges is None or not (self._apart(edges[0], edges[1]) and self._apart(edges[1], edges[1])):
            return self.tokenizer.count_pieces(pad)
        head, edge = edges
        rate = self._rate()
        assert rate is not None
        middle = (len(pad) - len(head) - len(edge)) // len(self.filler)
        return self._memoised(head) + middle * rate + self._memoised(edge)

    def bare(self, pieces: list[str], pad: str) -> int:
        """Tokens of the context alone (no prompt around it), from the same pieces (`holds` checked them)."""
        if len(pieces) < 2:
            return self.tokenizer.count_pieces("".join(pieces) + pad)
        return self._sum(pieces, pad, "", "")

    def _memoised(self, text: str) -> int:
        got = self.memo.get(text)
        if got is None:
            if len(self.memo) >= 100_000:
                self.memo.clear()
            got = self.memo[text] = self.tokenizer.count_pieces(text)
        return got

    def _rate(self) -> int | None:
        """Tokens per filler repeat when repeats count evenly (64 and 65 repeats give 64 and 65 times
        one), else None."""
        key = f"\0filler rate\0{self.filler}"
        if key not in self.memo:
            one = self.tokenizer.count_pieces(self.filler)
            even = all(self.tokenizer.count_pieces(self.filler * n) == n * one for n in (64, 65))
            self.memo[key] = one if even else -1
        rate = self.memo[key]
        return rate if rate > 0 else None

    def _pad_edges(self, pad: str) -> tuple[str, str] | None:
        """For a long pad of filler repeats that count evenly: (the pad's head, up to its middle repeats;
        the repeats kept with the suffix), between which the middle is counted by the rate. Else None. The
        pad's first repeat may lack its leading whitespace (as `_bisect_repeats` tries it): that is in the
        head, `PAD_EDGE` repeats away from the middle."""
        edge = PAD_EDGE
        filler = self.filler
        if not filler:
            return None
        core = pad.removeprefix(PASSAGE_JOINER)
        lead = ""
        if not core.startswith(filler):  # the first repeat without its leading whitespace, or no pad of repeats
            lead = filler.lstrip()
            if not lead or lead == filler or not core.startswith(lead):
                return None
        repeats, extra = divmod(len(core) - len(lead), len(filler))
        if extra or repeats <= 4 * edge or core[len(lead) :] != filler * repeats or self._rate() is None:
            return None
        return pad[: len(pad) - (repeats - edge) * len(filler)], filler * edge

    def _tail(self, last: str, pad: str, suffix: str) -> int:
        """Tokens of the last piece, the pad and `suffix`: a long pad's middle repeats by the rate (each part's
        count memoised: the pad's search measures one context several times)."""
        count = self._memoised
        edges = self._pad_edges(pad)
        if edges is None:
            return count(last + pad + suffix)
        head, edge = edges
        middle = (len(pad) - len(head) - len(edge)) // len(self.filler)
        rate = self._rate()
        assert rate is not None
        return count(last + head) + middle * rate + count(edge + suffix)

    def labelled(self, blocks: list[str], numbered: bool) -> list[str]:
        """The pieces of a context of these passages in this order: each labelled (`[i] `, when `numbered`),
        with the joiner after it but the last. Their counts, label cuts and the outcome of `_joint` at each
        cut before a label are kept for `_parts` and `holds`, as they would find them, but by the passages
        themselves (a passage's count after its label in `rests`, its ends' checks in `edges`): a ranker's
        passages are the same strings across items, so a lookup hashes nothing, and the lookups go a list
        at a time."""
        n = len(blocks)
        if not n:
            self._kept = ([], [], [], [])
            return []
        rests, edges, memo = self.rests, self.edges, self.memo
        if max(len(rests), len(edges)) >= 100_000:
            rests.clear()
            edges.clear()
        joiners = [PASSAGE_JOINER] * (n - 1) + [""]
        # the labels `[i] ` and their numbers `[i]`, the same strings in every context (their hashes kept)
        labels, numbers = (label_list("[{index}] ", n), label_list("[{index}]", n)) if numbered else ([""] * n,) * 2
        pieces = list(map(operator.add, map(operator.add, labels[:n], blocks), joiners))
        # each passage's count after its label (with the joiner after it, but the last), by the passage
        middle, final = rests.setdefault((numbered, False), {}), rests.setdefault((numbered, True), {})
        found = [*map(middle.get, blocks[:-1]), final.get(blocks[-1])]
        space = " " if numbered else ""
        for i in [i for i, got in enumerate(found) if got is None]:
            kept = middle if i < n - 1 else final
            found[i] = kept[blocks[i]] = self._memoised(space + blocks[i] + joiners[i])
        rest = cast(list[int], found)  # every None filled above
        joints = [False] * n
        if not numbered:
            self._kept = (pieces, rest, [0] * n, joints)
            return pieces
        numbers = numbers[:n]
        number_tokens = list(map(memo.get, numbers))
        if None in number_tokens:
            number_tokens = list(map(self._memoised, numbers))
        counts = list(map(operator.add, number_tokens, rest))
        cuts = list(map(len, numbers))
        ends = list(map(edges.get, blocks))
        for i, block in enumerate(blocks):
            if ends[i] is None and len(block) >= JOINT_CHARS:
                ends[i] = self._edges(block)
        oks = self.numbers_ok  # each label number's check, in number order (the same numbers in every context)
        if len(oks) < n:
            oks += map(self._number_ok, numbers[len(oks) :])
        for i in range(1, n):
            before, after = ends[i - 1], ends[i]
            if before is not None and after is not None:  # both passages at least `JOINT_CHARS` long
                joints[i] = before[0] and after[1] and oks[i]
            else:  # `_joint`'s slices reach the label next to a short passage: checked on the pieces
                joints[i] = self._joint(pieces[i - 1], pieces[i], cuts[i])
        self._kept = (pieces, counts, cuts, joints)
        return pieces

    def _edges(self, block: str) -> tuple[bool, bool]:
        """`_joint`'s checks of a passage's two ends (`_tail_ok` with the joiner, `_head_ok` after a label's
        number), kept by the passage; for a passage of at least `JOINT_CHARS` characters, whose ends those
        checks see alone."""
        edge = self.edges.get(block)
        if edge is None:
            tail, head = (block + PASSAGE_JOINER)[-JOINT_CHARS:], (" " + block)[:JOINT_CHARS]
            edge = self.edges[block] = (self._tail_ok(tail), self._head_ok(head))
        return edge

    def _parts(self, pieces: list[str]) -> tuple[list[int], list[int], list[bool] | None]:
        """Each piece's tokens and where its label's number ends (`_number_end`), kept for the last list of
        pieces: the pad's search measures the same pieces several times, and `holds` checks them. A
        labelled passage is counted as its number part and the rest apart (`"[12]"` and `" The ..."`), each
        memoised, so a passage shown under another number than before costs a lookup; `holds` checks that
        cut, as every other cut of the sums."""
        kept = self._kept
        if kept is None or kept[0] is not pieces:
            cuts = [_number_end(p) for p in pieces]
            m = self._memoised
            counts = [m(p[:c]) + m(p[c:]) if c else m(p) for p, c in zip(pieces, cuts, strict=True)]
            kept = self._kept = (pieces, counts, cuts, None)
        return kept[1], kept[2], kept[3]

    def _sum(self, pieces: list[str], pad: str, prefix: str, suffix: str) -> int:
        middle = sum(self._parts(pieces)[0][1:-1])
        return self._memoised(prefix + pieces[0]) + middle + self._tail(pieces[-1], pad, suffix)

    def __call__(self, pieces: list[str], pad: str) -> int:
        if len(pieces) < 2 or not self.pieces_ok:
            return self.whole(pieces, pad)
        return self._sum(pieces, pad, self.prefix, self.suffix)


def _number_end(piece: str) -> int:
    """Where a labelled passage's number part ends (after `]` in `[12] ...`), or 0 for a piece without one."""
    if piece.startswith("["):
        close = piece.find("] ", 1, 12)
        if close > 1 and piece[1:close].isdigit():
            return close + 1
    return 0


def _label(i: int, numbered: bool) -> str:
    """The number shown before passage i (zero-based, as `[i] `), or nothing."""
    return f"[{i}] " if numbered else ""


def _join(text: str, start: int, end: int, inserts: list[Insert]) -> str:
    pieces: list[str] = []
    cursor = start
    for ins in inserts:
        pieces.append(text[cursor : ins.pos])
        pieces.append(ins.text)
        cursor = ins.pos
    pieces.append(text[cursor:end])
    return "".join(pieces)


class PassagesLayout:
    """Whole passages with the needle passage at the passage index of the grid depth (one needle at most)."""

    def place(self, view: HaystackView, request: Request) -> Placed:
        return steps_first(lambda: self._place(view, request), request.rng)

    def _place(self, view: HaystackView, request: Request) -> Placed:
        if len(request.needles) > 1 or request.targets < len(request.needles):
            raise ContractError("a `passages` haystack takes at most one needle and no distractor sentences")
        if view.passages is None:
            view.passages = PassageTable.of(view.index.text)
        builder = request.builder
        needle = request.needles[0] if request.needles else None
        filler = str(getattr(builder, "filler", " ."))
        numbered = bool(getattr(builder, "numbered", True))
        distractors = bool(getattr(builder, "distractors", True))
        rank = getattr(builder, "rank", None)
        if rank is not None and distractors:
            ranker = view.rankers.get(rank.model_dump_json())
            if ranker is None:
                raise ContractError("haystack.builder.rank: the rankings were not prepared for this haystack")
            tokenizer = view.index.tokenizer
            prefix, suffix = request.prefix, request.suffix
            placement, layout = place_ranked(
                tokenizer,
                ranker,
                ranker.rank(request.question, request.aliases),
                target=request.target,
                needle=needle,
                depth=request.depth,
                filler=filler,
                numbered=numbered,
                measure=PieceMeasure(
                    tokenizer,
                    prefix,
                    suffix,
                    ranker.piece_counts,
                    filler,
                    rests=ranker.rest_counts,
                    edges=ranker.edge_checks,
                    numbers_ok=ranker.number_checks,
                ),
                rng=random.Random(hashlib.sha256(f"{request.seed}|rank".encode()).digest()),
            )
        else:
            placement, layout = place_passages(
                view.index,
                view.passages,
                start=request.start,
                target=request.target,
                needle=needle,
                depth=request.depth,
                filler=filler,
                numbered=numbered,
                counter=view.counter,
                prefix=request.prefix,
                suffix=request.suffix,
                distractors=distractors,
            )
        return Placed(placement, {"passages": layout}, [request.depth] * len(request.needles))


LAYOUTS.register("passages", LayoutSettings)(PassagesLayout)

__all__ = ["PassageTable", "PassagesLayout", "pad_to", "passage_index", "place_passages", "place_ranked"]
