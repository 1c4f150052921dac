"""Properties of the placement engine on real text with real tokenizers."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from needlec.haystacks.index import Haystack, HaystackIndex
from needlec.placement.engine import (
    MARGIN_TOKENS,
    Counter,
    Insert,
    InsertColumns,
    Placement,
    _depth_error,
    _last_at_most,
    _snap_all,
    _snap_ordered,
    _snap_vector,
    _Stem,
    _text_end,
    assemble,
    place,
)

NEEDLES = [
    "The blue heron in the orchard answers only to the name Captain Pickles.",
    "Seven copper spoons were buried under the third oak by the mill.",
    "東京の古い喫茶店では、毎朝九時に青いカップで紅茶が出される。",
]


@pytest.fixture(scope="module", params=["cl100k", "o200k"])
def index(request: pytest.FixtureRequest, bible_text: str) -> HaystackIndex:
    tokenizer = request.getfixturevalue(request.param)
    text = bible_text[:400_000]
    return HaystackIndex(Haystack("h0", text), text, 1, tokenizer)


def strip_inserts(context: str, placement) -> str:
    """The context with every inserted text removed again (reverse order keeps offsets valid)."""
    out = context
    cursor_shift = 0
    spans = []
    for ins in placement.inserts:
        offset = ins.pos - placement.start + cursor_shift
        spans.append((offset, len(ins.text)))
        cursor_shift += len(ins.text)
    for offset, length in reversed(spans):
        out = out[:offset] + out[offset + length :]
    return out


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    length=st.integers(min_value=150, max_value=12_000),
    depths=st.lists(st.floats(min_value=0, max_value=100, allow_nan=False), min_size=1, max_size=3),
    snap=st.sampled_from(["sentence", "line", "paragraph", "none"]),
    start_choice=st.integers(min_value=0, max_value=500),
    needle_pick=st.lists(st.integers(min_value=0, max_value=2), min_size=3, max_size=3),
)
def test_placement_is_exact(
    index: HaystackIndex, length: int, depths: list[float], snap: str, start_choice: int, needle_pick: list[int]
) -> None:
    tokenizer = index.tokenizer
    needles = [NEEDLES[needle_pick[i]] for i in range(len(depths))]
    start = index.boundaries("sentence")[start_choice]
    joiner = {"sentence": " ", "line": "\n", "paragraph": "\n\n", "none": ""}[snap]
    minimum = sum(tokenizer.count(n + joiner) for n in needles) + 3 * MARGIN_TOKENS
    if length < minimum:
        length += minimum
    counter = Counter(index)
    placement = place(
        index, counter, start=start, target=length, needles=needles, depths=depths, snap=snap, joiner=joiner
    )
    context = placement.context(index.text)

    # exact length, and every recorded offset re-encodes to what was recorded
    assert tokenizer.count(context) == length == placement.context_tokens
    for i, needle in enumerate(needles):
        offset = placement.needle_chars[i]
        assert context[offset : offset + len(needle)] == needle
        assert tokenizer.count(context[:offset]) == placement.needle_tokens[i]

    # haystack text outside the needles is unchanged
    assert strip_inserts(context, placement) == index.text[placement.start : placement.end]

    # needles sit on the requested boundaries (or at the very end of the context)
    if snap != "none":
        bounds = set(index.boundaries(snap)) | {placement.start, placement.end}
        assert all(ins.pos in bounds for ins in placement.inserts)

    # same inputs, same placement
    again = place(index, counter, start=start, target=length, needles=needles, depths=depths, snap=snap, joiner=joiner)
    assert again == placement


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(length=st.integers(min_value=2_000, max_value=64_000), depth=st.floats(min_value=0, max_value=100))
def test_depth_close_to_target_without_snapping(index: HaystackIndex, length: int, depth: float) -> None:
    placement = place(
        index, Counter(index), start=0, target=length, needles=[NEEDLES[0]], depths=[depth], snap="none", joiner=""
    )
    needle_tokens = index.tokenizer.count(NEEDLES[0])
    # without snapping, only the needle's own length (at 100%) and seam tokens move it
    slack = 100.0 * (needle_tokens + 2 * MARGIN_TOKENS) / length
    assert abs(placement.depths()[0] - depth) <= slack


def test_sentence_snapping_never_splits_a_sentence(index: HaystackIndex) -> None:
    for depth in (0, 7.5, 33, 50, 91, 100):
        placement = place(
            index,
            Counter(index),
            start=0,
            target=3000,
            needles=[NEEDLES[1]],
            depths=[depth],
            snap="sentence",
            joiner=" ",
        )
        context = placement.context(index.text)
        offset = placement.needle_chars[0]
        before = context[:offset].rstrip()
        after = context[offset + len(NEEDLES[1]) :].lstrip()
        assert before == "" or before[-1] in ".!?\"'”’)]"
        assert after == "" or after[0].isupper() or not after[0].isalpha()


def test_full_reencode_fallback_is_exact(index: HaystackIndex) -> None:
    """A tokenizer without the locality property is counted by full re-encoding, still exactly."""
    slow = HaystackIndex(index.haystack, index.text[:60_000], 1, index.tokenizer)
    slow.local = False
    placement = place(
        slow, Counter(slow), start=0, target=2500, needles=[NEEDLES[0]], depths=[40], snap="sentence", joiner=" "
    )
    assert index.tokenizer.count(placement.context(slow.text)) == 2500
    fast = HaystackIndex(index.haystack, index.text[:60_000], 1, index.tokenizer)
    assert (
        place(fast, Counter(fast), start=0, target=2500, needles=[NEEDLES[0]], depths=[40], snap="sentence", joiner=" ")
        == placement
    )


def test_prompt_counting_includes_prefix_and_suffix(index: HaystackIndex) -> None:
    prefix, suffix = "Read this:\n<doc>\n", "\n</doc>\nWhat is the heron called?"
    placement = place(
        index,
        Counter(index),
        start=0,
        target=5000,
        needles=[NEEDLES[0]],
        depths=[60],
        snap="sentence",
        joiner=" ",
        prefix=prefix,
        suffix=suffix,
    )
    context = placement.context(index.text)
    assert index.tokenizer.count(prefix + context + suffix) == 5000
    assert index.tokenizer.count(context) == placement.context_tokens


def test_long_inserts_count_as_their_whole_encoding(index: HaystackIndex) -> None:
    """Long inserts are counted through two inner cuts and, when their pieces repeat, piece by piece.
    Texts written to stress that: word lists whose lines start with punctuation (o200k's punctuation
    pre-token runs on through a line break into a `/`), noise lines, prose with brackets, many of them
    through one counter so every cut after the first few is exercised. Each count is compared with an
    encoding of the whole assembled text."""
    counter = Counter(index)
    tokenizer = index.tokenizer
    words = ["alpha", "beta", "abc,", "/def", "...", "(x)", "naïve", "東京", "12,5", "--", "é/é"]
    texts = []
    for n in range(24):
        pool = words if n >= 3 else [w for w in words if w != "/def"]  # plain ones first, then the traps
        lines = [pool[(n * 7 + 3 * i + i * i) % len(pool)] for i in range(120 + n)]
        texts.append("\n".join(lines))
        texts.append(" ".join(lines) + ".")
    assert any("abc,\n/def" in t for t in texts[6:])
    for text in texts:
        assert counter.tokens(text) == tokenizer.count(text)
    at = [index.boundaries("sentence")[k] for k in (40, 41, 90)]
    for n in range(0, len(texts) - 2, 3):
        inserts = [Insert(at[0], texts[n]), Insert(at[1], texts[n + 1]), Insert(at[2], texts[n + 2])]
        end = at[2] + 500
        expected = tokenizer.count("Q: " + assemble(index.text, 0, end, inserts) + " A:")
        assert counter.count(0, end, inserts, "Q: ", " A:") == expected


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    start=st.integers(min_value=0, max_value=150_000),
    span=st.integers(min_value=1, max_value=40_000),
    picks=st.lists(st.tuples(st.floats(min_value=0, max_value=1), st.integers(0, 4)), max_size=40),
    frame=st.sampled_from([("", ""), ("Q: ", ""), ("", " A:"), ("<s>", "</s>")]),
    shuffled=st.booleans(),
)
def test_seam_counts_and_offsets_equal_whole_encodings(
    index: HaystackIndex,
    start: int,
    span: int,
    picks: list[tuple[float, int]],
    frame: tuple[str, str],
    shuffled: bool,
) -> None:
    """Inserts anywhere in the window (its two edges included, several at one place, long ones too),
    in position order or not: the count and each insert's offset equal encodings of the assembled text."""
    texts = [" The key is 4021.", "\n", "。", "\u3000", "quiet words, " * 30 + "end."]
    end = min(start + span, len(index.text))
    inserts = sorted((Insert(start + round(f * (end - start)), texts[t]) for f, t in picks), key=lambda i: i.pos)
    if shuffled:
        inserts.reverse()  # out of position order: counted whole, still exact
    counter, tokenizer = Counter(index), index.tokenizer
    prefix, suffix = frame
    assert counter.count(start, end, inserts, prefix, suffix) == tokenizer.count(
        prefix + assemble(index.text, start, end, inserts) + suffix
    )
    context = assemble(index.text, start, end, inserts)
    assert counter.frame_delta(start, end, inserts, prefix, suffix) == tokenizer.count(
        prefix + context + suffix
    ) - tokenizer.count(context)
    if not shuffled:
        offsets = counter.offsets(start, end, inserts)
        assert offsets == [
            tokenizer.count(assemble(index.text, start, ins.pos, inserts[:rank])) for rank, ins in enumerate(inserts)
        ]


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    start=st.integers(min_value=0, max_value=150_000),
    span=st.integers(min_value=0, max_value=3_000),
    suffix=st.sampled_from(["", "?", " A:", "。", "\n\nQuestion"]),
)
def test_a_plain_stretch_counts_as_its_whole_encoding(index: HaystackIndex, start: int, span: int, suffix: str) -> None:
    """The window end search's count of the haystack alone, from short stretches (inside one seam
    window) to long ones, equals the encoding of that text with the suffix, and the general count."""
    counter, tokenizer = Counter(index), index.tokenizer
    end = min(start + span, len(index.text))
    whole = tokenizer.count(index.text[start:end] + suffix)
    assert counter.plain(start, end, suffix) == whole
    assert counter.count(start, end, [], "", suffix) == whole


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    start=st.integers(min_value=0, max_value=150_000),
    span=st.integers(min_value=0, max_value=20_000),
    cuts=st.lists(st.floats(min_value=0, max_value=1), min_size=1, max_size=3),
    moved_to=st.floats(min_value=0, max_value=1),
    picks=st.lists(st.integers(min_value=0, max_value=2), min_size=3, max_size=3),
    frame=st.sampled_from([("", ""), ("Read:\n", "\n\nWhat is hidden?"), ("", "。"), ("Q ", " A:")]),
)
def test_a_needle_moved_to_the_window_end_counts_as_its_whole_encoding(
    index: HaystackIndex,
    start: int,
    span: int,
    cuts: list[float],
    moved_to: float,
    picks: list[int],
    frame: tuple[str, str],
) -> None:
    """The search for a window that its deepest needle ends keeps the other needles where a start's stem
    has them and moves that one to each end tried: counted from the stem's last checkpoint before it (the
    moved needle read with the suffix), the count is the encoding of the context it makes."""
    counter, tokenizer = Counter(index), index.tokenizer
    prefix, suffix = frame
    end = min(start + span, len(index.text))
    spots = sorted(start + round(c * (end - start)) for c in cuts)
    earlier = [Insert(pos, NEEDLES[picks[rank]] + " ") for rank, pos in enumerate(spots[:-1])]
    last = NEEDLES[picks[len(spots) - 1]]
    stem = _Stem(counter, start, [*earlier, Insert(spots[-1], last + " ")], prefix)
    moved = max(spots[-1], start + round(moved_to * (end - start)))
    inserts = [*earlier, Insert(moved, last)]
    whole = tokenizer.count(prefix + assemble(index.text, start, moved, inserts) + suffix)
    assert stem.count(moved, inserts, len(earlier), suffix) == whole


@given(
    values=st.lists(st.integers(min_value=0, max_value=60), min_size=1, max_size=50),
    data=st.data(),
)
def test_the_galloping_search_finds_what_a_scan_finds(values: list[int], data: st.DataObject) -> None:
    """The largest j whose count is at most the target, or `lo` when none is (the caller then sees
    count(lo) above the target)."""
    values.sort()
    lo = data.draw(st.integers(0, len(values) - 1))
    hi = data.draw(st.integers(lo, len(values) - 1))
    target = data.draw(st.integers(0, 70))
    guess = data.draw(st.integers(-3, len(values) + 3))
    asked: list[int] = []

    def count(j: int) -> int:
        asked.append(j)
        return values[j]

    found = _last_at_most(count, lo, hi, guess, target)
    assert found == max((j for j in range(lo, hi + 1) if values[j] <= target), default=lo)
    assert all(lo <= j <= hi for j in asked)


def test_the_frame_of_a_context_given_whole_as_one_insert(index: HaystackIndex) -> None:
    """Ranked passages come as one insert holding the whole context (an empty haystack window): the
    frame's delta is counted at the context's two edges, its long middle left out of both sides."""
    counter, tokenizer = Counter(index), index.tokenizer
    body = index.text[5_000:60_000]
    for context in (body, "[0] " + body + "\n\n" + " ." * 4_000, "。" * 3 + body):
        for prefix, suffix in (("Read this:\n", "\nWhat is hidden?"), ("", "?"), ("<doc>", "")):
            assert counter.frame_delta(0, 0, [Insert(0, context)], prefix, suffix) == tokenizer.count(
                prefix + context + suffix
            ) - tokenizer.count(context)


@settings(max_examples=300, deadline=None)
@given(
    text=st.text(alphabet="ab. \n", max_size=60),
    window=st.tuples(st.integers(0, 60), st.integers(0, 60)),
    inserts=st.lists(st.tuples(st.integers(-5, 70), st.text(alphabet="XY", max_size=3)), max_size=8),
    ordered=st.booleans(),
)
def test_assemble_puts_each_insert_in_at_its_position(
    text: str, window: tuple[int, int], inserts: list[tuple[int, str]], ordered: bool
) -> None:
    start, end = min(window), max(window)
    if ordered:
        inserts = sorted(inserts, key=lambda pair: pair[0])
    # by hand: walk the window, inserts inside it in list order, each after the text up to its position
    expected = ""
    cursor = start
    for pos, piece in inserts:
        if start <= pos <= end:
            expected += text[cursor:pos] + piece
            cursor = pos
    expected += text[cursor:end]
    records = [Insert(pos, piece) for pos, piece in inserts]
    assert assemble(text, start, end, records) == expected
    assert assemble(text, start, end, records, "<<", ">>") == "<<" + expected + ">>"  # a message around it


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    snap=st.sampled_from(["sentence", "paragraph", "none"]),
    start=st.integers(min_value=0, max_value=20_000),
    span=st.integers(min_value=0, max_value=6_000),
    aims=st.lists(st.integers(min_value=-50, max_value=3_000), min_size=1, max_size=80),
    sort=st.booleans(),
    with_start=st.booleans(),
)
def test_needles_placed_at_once_where_the_loop_places_them(
    index: HaystackIndex, snap: str, start: int, span: int, aims: list[int], sort: bool, with_start: bool
) -> None:
    """`_snap_vector` (many needles at once, each floored at the window start, then the running maximum) gives
    the loop's positions (each floored at the needle before it), targets in order or not."""
    bounds = index.boundaries(snap)
    lo = bounds[min(start // 30, len(bounds) - 1)] + (0 if with_start else 3)
    hi = lo + span
    t_lo = index.token_at(lo)
    targets = [t_lo + a for a in (sorted(aims) if sort else aims)]
    order = list(range(len(targets)))
    always = lo if with_start else None
    looped = _snap_all(targets, order, index, bounds, lo, hi, always)
    at_once = _snap_vector(np.asarray(targets, dtype=np.int64), index, snap, lo, hi, always)
    assert at_once == [looped[i] for i in order]
    if with_start:  # the start's search, targets given in depth order: the same positions, in that order
        shuffled = order[::-1]
        placed = _snap_ordered([targets[i] for i in shuffled], shuffled, index, bounds, lo, hi, snap)
        assert placed == [_snap_all(targets, shuffled, index, bounds, lo, hi, lo)[i] for i in shuffled]


def test_needles_midway_between_boundaries_go_to_the_earlier_one(index: HaystackIndex) -> None:
    """A target whose character lies exactly midway between two boundaries: the earlier one, placed one at a
    time or all at once (the needles spaced so that no floor intervenes)."""
    bounds = index.boundaries("sentence")
    starts = set(index.tok_char)
    last = len(bounds) - 1
    midway = [(a + b) // 2 for a, b in itertools.pairwise(bounds[1:last]) if (a + b) % 2 == 0]
    targets = sorted({index.token_at(m) for m in midway if m in starts})[:200]
    assert len(targets) >= 40
    order = list(range(len(targets)))
    lo, hi = bounds[1], bounds[last]
    looped = _snap_all(targets, order, index, bounds, lo, hi, lo)
    assert _snap_vector(np.asarray(targets, dtype=np.int64), index, "sentence", lo, hi, lo) == list(looped.values())
    assert all(looped[i] < index.tok_char[t] for i, t in enumerate(targets))  # the earlier boundary each time


def test_every_class_point_has_an_anchor_beside_it() -> None:
    """`CLASS_ANCHOR` lets a long insert's cut search skip a stretch with no anchor in it: that is exact only
    if every point of every safe class has an anchor on one side of it. Checked on every text of three
    characters drawn from letters, digits, CJK characters and punctuation (CJK punctuation such as `・`
    included), as far as any class looks."""
    from needlec.haystacks.index import CLASS_ANCHOR, SAFE_CLASSES, class_pattern

    alphabet = [*"aZ9 .,'’\n\t-_[", "é", "²", "Ⅻ", "東", "・", "ー", "。"]
    points = 0
    for text in map("".join, itertools.product(alphabet, repeat=3)):
        for name in SAFE_CLASSES:
            for match in class_pattern(name).finditer(text):
                at = match.start()
                assert CLASS_ANCHOR.search(text, max(0, at - 1), at + 1), (name, text, at)
                points += 1
    assert points > 1000  # the texts hold points of the classes


@settings(max_examples=150, deadline=None)
@given(
    text=st.text(alphabet="abc \n", min_size=0, max_size=60),
    window=st.tuples(st.integers(0, 60), st.integers(0, 60)),
    drawn=st.lists(st.tuples(st.integers(0, 60), st.text(alphabet="XY|", max_size=4), st.booleans()), max_size=8),
)
def test_inserts_held_as_columns_read_and_assemble_as_records(
    text: str, window: tuple[int, int], drawn: list[tuple[int, str, bool]]
) -> None:
    """`InsertColumns` is the sequence of its records, sliced, compared and assembled as they are; the context
    is built here the slow way: every character of the window, with the inserts at its place before it. Most
    inserts fall inside the window (`assemble` slices those without a loop), some anywhere in the text."""
    start, end = sorted((min(window[0], len(text)), min(window[1], len(text))))
    inside = [(start + pos % (end - start + 1) if keep else pos, t) for pos, t, keep in drawn]
    raw = sorted(inside, key=lambda pair: pair[0])  # the layouts give inserts in position order
    records = tuple(Insert(pos, t) for pos, t in raw)
    columns = InsertColumns([pos for pos, _ in raw], [t for _, t in raw])
    assert list(columns) == list(records)
    assert len(columns) == len(records)
    assert columns == records and records == tuple(columns)
    assert all(columns[i] == records[i] for i in range(len(records)))
    assert list(columns[1:3]) == list(records[1:3])
    expected = []
    for at in range(start, end + 1):
        expected += [t for pos, t in raw if pos == at]
        if at < end:
            expected.append(text[at])
    assert assemble(text, start, end, columns) == "".join(expected) == assemble(text, start, end, records)
    assert assemble(text, start, end, columns, "Q", "A") == "Q" + "".join(expected) + "A"


def test_insert_columns_refuse_lists_of_unequal_length() -> None:
    with pytest.raises(ValueError, match="2 positions for 1 insert texts"):
        InsertColumns([1, 2], ["a"])
    with pytest.raises(ValueError, match="2 haystack pieces around 2 inserts"):
        InsertColumns([1, 2], ["a", "b"], (0, 5, ["x", "y"]))


@settings(max_examples=150, deadline=None)
@given(
    text=st.text(alphabet="abc \n", min_size=1, max_size=60),
    window=st.tuples(st.integers(0, 60), st.integers(0, 60)),
    drawn=st.lists(st.tuples(st.integers(0, 60), st.text(alphabet="XY|", max_size=4)), max_size=8),
)
def test_insert_columns_with_their_haystack_pieces_assemble_as_sliced(
    text: str, window: tuple[int, int], drawn: list[tuple[int, str]]
) -> None:
    """Inserts given with the haystack text around them as strings (`hay`) join to the context that slicing the
    haystack gives, for their window; another window, or a slice of the inserts, slices as before."""
    start, end = sorted((min(window[0], len(text)), min(window[1], len(text))))
    raw = sorted((start + pos % (end - start + 1), t) for pos, t in drawn)
    positions, texts = [pos for pos, _ in raw], [t for _, t in raw]
    cuts = [start, *positions, end]
    around = [text[a:b] for a, b in itertools.pairwise(cuts)]
    held = InsertColumns(positions, texts, (start, end, around))
    plain = InsertColumns(positions, texts)
    assert assemble(text, start, end, held, "<", ">") == assemble(text, start, end, plain, "<", ">")
    wrong = InsertColumns(positions, texts, (start, end, ["?"] * (len(positions) + 1)))
    if end > 0:  # another window than the pieces': they are not used
        assert assemble(text, 0, end - 1, wrong) == assemble(text, 0, end - 1, plain)
    assert held[0:2].hay is None


@settings(max_examples=200, deadline=None)
@given(
    needles=st.lists(
        st.tuples(
            st.integers(0, 40), st.integers(1, 30), st.one_of(st.just(100.0), st.floats(0, 100, allow_nan=False))
        ),
        min_size=32,
        max_size=90,
    ),
    targets=st.integers(1, 90),  # under 32: one by one
    total=st.integers(50, 3_000),
)
def test_depth_error_is_the_largest_distance_from_a_reachable_depth(
    needles: list[tuple[int, int, float]], targets: int, total: int
) -> None:
    """The depth error of a placement (few needles one by one, 32 or more with numpy): the largest distance of
    a target needle's achieved depth from its aimed depth, capped at the deepest it can reach, which leaves
    room for the tokens of the target needles at or after its character (ties share one tail)."""
    targets = min(targets, len(needles))
    chars = [4 * c for c, _, _ in needles]  # few distinct characters: many ties
    sizes = [size for _, size, _ in needles]
    depths = [depth for _, _, depth in needles]
    offsets = tuple(c * total // 41 for c, _, _ in needles)  # achieved depths over the whole range
    placed = Placement(0, 0, (), total, total, offsets, tuple(chars))
    achieved = placed.depths()
    worst = 0.0
    for i in range(targets):
        tail = sum(sizes[k] for k in range(targets) if chars[k] >= chars[i])
        reachable = 100.0 * max(0, total - tail) / total
        worst = max(worst, abs(achieved[i] - min(depths[i], reachable)))
    assert _depth_error(placed, depths, sizes, targets) == worst


def test_sentence_end_lookups_give_the_token_index_of_the_text_before_the_boundary(index: HaystackIndex) -> None:
    """`HaystackIndex.ends_at` gives a boundary's token index and that of the text before it, its whitespace
    left out (every sentence boundary of the haystack, a few after a blank line, where cl100k merges the full
    stop with the line breaks); floored at a window start before the boundary, the latter is the token index
    of the text end the window search takes there (`_text_end`)."""
    bounds = index.boundaries("sentence")
    text = index.text
    assert sum(text.startswith("\n", q - 1) for q in bounds) >= 50
    for j, q in enumerate(bounds):
        at_q, before_q = index.ends_at(q)
        assert at_q == index.token_at(q)
        tail = text[max(0, q - 64) : q]
        assert before_q == index.token_at(q - (len(tail) - len(tail.rstrip())))
        for back in (1, 3):
            begin = bounds[max(0, j - back)]
            if q > begin:
                assert max(before_q, index.token_at(begin)) == index.token_at(_text_end(text, q, begin))
