"""The places that look for words use the one word table: leak checks, filters, ranking, scoring.

Each test is a case the old per-module rules got wrong or that must stay as it was; expected
results are worked out by hand from the short texts.
"""

from __future__ import annotations

from pathlib import Path

from filter_helpers import filtered, write_spec

from needlec.compile.items import HaystackView
from needlec.compile.overlap import UnicodeTokenizer
from needlec.haystacks.index import Haystack, HaystackIndex
from needlec.placement.engine import Counter
from needlec.scoring.normalize import find_word
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


def test_a_term_asked_again_and_again_gets_the_answer_of_a_full_search() -> None:
    """A rare first word is checked at its few places on every ask; a common one ("the", at more than
    `FEW_CANDIDATES` places) is searched for once in the whole text from its second ask on. Either way each
    window's answer is the one the full search's occurrences give."""
    filler = "the river ran by the mill and the road went on. " * 120
    text = filler + "Captain Pickles came home. " + filler + "The mill stood still at last. "
    truth = _view(text)
    windows = [(0, len(text)), (0, len(filler)), (len(filler) - 5, len(filler) + 30), (len(text) - 40, len(text))]
    view = _view(text)
    for _ in range(3):
        for term in ("Captain Pickles", "the mill", "pickles", "mill stood", "Pickles came"):
            spots = truth.occurrences(term)
            for start, end in windows:
                inside = any(start <= s and s + len(term) <= end for s in spots)
                assert view.leaks((term,), start, end) == ([term] if inside else []), (term, start, end)
    assert "the mill" in view._occurrences and "pickles" not in view._occurrences  # the two ways were both taken
    assert "pickles" in view._spans  # the rare one's places, kept from its second ask on


def test_a_term_asked_again_is_judged_by_its_original_span_where_folding_changes_lengths() -> None:
    """ "Straße" folds to six letters and reads seven in the original text: a window holds it only when it
    holds the whole original word, on the first ask and on each ask after it (when its places are kept)."""
    text = "Die Straße führt zur STRASSE am Fluss."
    view = _view(text)
    # (start, end) -> whether a whole "strasse" lies inside: "Straße" is text[4:10], "STRASSE" text[21:28]
    windows = {(0, len(text)): True, (4, 10): True, (4, 9): False, (5, 27): False, (11, 28): True, (21, 27): False}
    for _ in range(3):
        for (start, end), inside in windows.items():
            assert view.leaks(("strasse",), start, end) == (["strasse"] if inside else []), (start, end)


def test_leak_check_offsets_stay_in_the_original_text_when_folding_changes_lengths() -> None:
    text = "Die Straße führt zur STRASSE am Fluss."
    view = _view(text)
    assert view.occurrences("strasse") == [4, 21]
    assert view.occurrences("Fluss") == [32]


def test_literal_terms_find_thai_inside_thai_and_respect_devanagari_vowel_signs(tmp_path: Path) -> None:
    # Thai has no spaces between words: กรุงเทพ (Bangkok) inside a sentence is a match. A Devanagari
    # vowel sign continues its word: राम is not in रामायण, but is in "राम घर गया".
    text = "ฉันไปกรุงเทพเมื่อวาน\nरामायण एक ग्रंथ है।\nराम घर गया।\nThe tram left."
    spec = write_spec(tmp_path, text, [{"type": "literal_terms", "terms": ["กรุงเทพ", "राम"]}])
    out, _ = filtered(spec, tmp_path / "cache")
    assert out == "रामायण एक ग्रंथ है।\nThe tram left."


def test_name_collisions_follow_the_word_table(tmp_path: Path) -> None:
    # "Mei" occurs next to Han characters (a boundary), "Ram" only inside "Rama", "Yuki" nowhere
    text = "这是Mei的书。 Rama went home."
    spec = write_spec(tmp_path, text, [{"type": "name_collisions", "names": ["Mei", "Ram", "Yuki"]}])
    _, stage = filtered(spec, tmp_path / "cache")
    assert stage.exclusions() == {"names": ["Mei"]}


def test_overlap_tokens_split_han_after_digits_and_latin() -> None:
    # every Han character is a token of its own, also right after a number or a Latin word
    assert UnicodeTokenizer().tokenize("在1873年东京 abc東") == ["在", "1873", "年", "东", "京", "abc", "東"]
    assert UnicodeTokenizer().tokenize("राम घर") == ["राम", "घर"]


def test_scoring_whole_word_rule_is_unchanged() -> None:
    # the cases of the scoring page's table, through the word table now
    assert find_word("beside", "esi") == -1
    assert find_word("noah", "noa") == -1
    assert find_word("esi s house", "esi") == 0
    assert find_word("我去过东京两次", "东京") == 3
    assert find_word("उत्तर रामा है", "राम") == -1
    assert find_word("هل هو سامي", "سامي") == 6


def test_a_first_ask_searched_in_its_window_answers_as_the_run_index_does() -> None:
    """Before the run index of the haystack is built (while `WINDOW_BUDGET` lasts), a first ask searches the
    window's stretch of the folded text. Over terms and windows of a text where folding changes lengths
    (ß, the ﬁ ligature, a combining accent, a dotted capital I), where words join by underscores and digits,
    and where a term's first run is part of a longer run, both ways give every window the same answer."""
    import random

    from needlec.placement.view import WINDOW_BUDGET

    parts = [
        "Die Straße", "STRASSE", "ﬁeld", "field", "café", "cafe\u0301", "İstanbul", "istanbul", "snake_case", "case",
        "R2D2", "D2", "New York", "new yorker", "York", "the", "mill", "Mill-stone", "stone", "東京", ", ", ". ", " ",
    ]  # fmt: skip
    rng = random.Random(7)
    text = "".join(rng.choice(parts) + rng.choice([" ", " ", ", ", ".\n"]) for _ in range(3000))
    terms = ["Straße", "strasse", "field", "fi", "café", "istanbul", "İstanbul", "case", "snake", "D2", "R2D2",
             "new york", "York", "mill", "stone", "Mill-stone", "the mill", "cafe"]  # fmt: skip
    windows = [(0, len(text))] + [tuple(sorted(rng.sample(range(len(text) + 1), 2))) for _ in range(300)]
    searched, indexed = _view(text), _view(text)
    indexed._searched = WINDOW_BUDGET * len(text)  # the budget spent: every first ask goes to the run index
    answers = []
    for term in terms:
        for start, end in windows:
            for view in (searched, indexed):  # forgotten asks keep each one a first ask, for both ways
                view._spans.clear()
                view._asked.clear()
            searched._searched = 0
            found = searched.leaks((term,), start, end)
            assert found == indexed.leaks((term,), start, end), (term, start, end)
            answers.append(bool(found))
    assert searched._words is None and indexed._words is not None  # the two ways were taken
    assert 0.2 < sum(answers) / len(answers) < 0.9  # windows that hold a term and windows that do not
