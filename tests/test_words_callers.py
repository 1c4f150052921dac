"""The places that look for words use the one word table: leak checks, filters, ranking, scoring.

Each test is a case the old per-module rules got wrong or that must stay as it was; expected
results are worked out by hand from the short texts.
"""

from __future__ import annotations

from needlec.compile.items import HaystackView
from needlec.haystacks.index import Haystack, HaystackIndex
from needlec.placement.engine import Counter
from needlec.tokenizer import _tiktoken


def _view(text: str) -> HaystackView:
    index = HaystackIndex(Haystack("h0", text), text, 1, _tiktoken("cl100k_base"))
    return HaystackView(index=index, counter=Counter(index), starts=[0], base_chars=len(text))


def test_leak_check_finds_a_chinese_term_inside_chinese_text() -> None:
    text = "我去过东京两次。后来我又去了大阪。"
    view = _view(text)
    assert view.occurrences("东京") == [3]
    assert view.leaks(("东京",), 0, len(text)) == ["东京"]
    # the window after the first sentence (from 大 onwards) holds no 东京
    assert view.leaks(("东京",), 8, len(text)) == []


def test_leak_check_keeps_whole_words_in_spaced_scripts() -> None:
    text = "The category of Catalan cats. A cat sat in 1873年."
    view = _view(text)
    assert view.occurrences("cat") == [32]
    assert view.occurrences("Cat") == [32]
    assert view.occurrences("1873") == [43]
    assert view.leaks(("Cat", "dog"), 0, len(text)) == ["Cat"]


def test_leak_check_offsets_stay_in_the_original_text_when_folding_changes_lengths() -> None:
    text = "Die Straße führt zur STRASSE am Fluss."
    view = _view(text)
    assert view.occurrences("strasse") == [4, 21]
    assert view.occurrences("Fluss") == [32]
