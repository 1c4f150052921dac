"""The script-aware word table: word characters, unspaced scripts, folding, sentence ends and term search.

Expected offsets are counted by hand from the example strings; the property tests check that every
reported span, read back from the original text, folds to the term.
"""

from __future__ import annotations

import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st

from needlec.languages.words import (
    SENTENCE_END,
    FoldedText,
    contains_term,
    fold,
    folded_text,
    is_unspaced,
    is_word_char,
    joins,
)


def spans(text: str, term: str) -> list[tuple[int, int]]:
    return FoldedText(text).find(term)


def test_chinese_term_inside_chinese_text() -> None:
    # 我 去 过 | 东 京 | 两 次: the term sits at characters 3 and 4
    assert spans("我去过东京两次", "东京") == [(3, 5)]


def test_full_width_punctuation_in_chinese_text_keeps_offsets() -> None:
    # 我 去 过 东 京 ， 两 次 ！: NFKC turns the full-width marks into ASCII ones, one for one
    text = FoldedText("我去过东京，两次！")
    assert text.folded == "我去过东京,两次!"
    assert text.find("两次") == [(6, 8)]
    assert text.find("京，两") == [(4, 7)]


def test_latin_term_inside_a_longer_word_is_not_a_match() -> None:
    assert spans("category", "cat") == []
    assert spans("Catalan", "Cat") == []
    assert spans("a cat sat", "cat") == [(2, 5)]
    assert spans("The CAT, the cat.", "cat") == [(4, 7), (13, 16)]


def test_digits_next_to_han_characters() -> None:
    # 在 | 1 8 7 3 | 年: Han characters on both sides are no word boundary to need
    assert spans("在1873年", "1873") == [(1, 5)]
    assert spans("in 18730 years", "1873") == []


def test_folding_that_changes_length_keeps_original_offsets() -> None:
    text = "Die Straße, STRASSE."
    # D i e _ S t r a ß e  -> "Straße" is characters 4..9 (end 10); STRASSE is 12..18 (end 19)
    assert spans(text, "Strasse") == [(4, 10), (12, 19)]
    assert spans(text, "straße") == [(4, 10), (12, 19)]
    # a term that would end inside the two letters "ß" folds to is not a span of the original
    assert spans("Maß", "mas") == []
    # "İ" folds to "i" and a combining dot: two folded characters for one original
    text = "Von İzmir nach İstanbul"
    assert spans(text, "İstanbul") == [(15, 23)]
    assert spans(text, "nach") == [(10, 14)]
    # ligature "ﬁ" folds to "fi"
    assert spans("a ﬁne day", "fine") == [(2, 5)]


def test_term_at_the_start_and_end_of_the_text() -> None:
    assert spans("Lisbon is hilly and so is lisbon", "Lisbon") == [(0, 6), (26, 32)]
    assert spans("东京", "东京") == [(0, 2)]


def test_hindi_and_arabic_words() -> None:
    # Devanagari vowel signs are combining marks: they belong to the word
    assert spans("मैं दिल्ली गया", "दिल्ली") == [(4, 10)]
    assert spans("दिल्लीवाला", "दिल्ली") == []
    text = "هل ذهبت إلى القاهرة؟"
    assert spans(text, "القاهرة") == [(12, 19)]
    assert spans("القاهرةالجديدة", "القاهرة") == []


def test_thai_and_japanese_are_matched_as_substrings() -> None:
    assert spans("ฉันไปกรุงเทพเมื่อวาน", "กรุงเทพ") == [(5, 12)]
    assert spans("東京タワーに行った", "タワー") == [(2, 5)]


def test_full_width_forms_fold_to_plain_ones() -> None:
    # NFKC makes full-width Latin letters and digits plain; half-width katakana full-width
    assert spans("ＡＢＣ 123", "abc") == [(0, 3)]
    assert spans("ｶﾞｷ", "ガキ") == [(0, 3)]


def test_word_characters_and_scripts() -> None:
    assert is_word_char("a") and is_word_char("7") and is_word_char("_") and is_word_char("東")
    assert is_word_char("\u093f")  # Devanagari vowel sign i, a combining mark
    assert not is_word_char(" ") and not is_word_char("-") and not is_word_char("。")
    assert is_unspaced("東") and is_unspaced("か") and is_unspaced("ก") and is_unspaced("ລ") and is_unspaced("က")
    assert not is_unspaced("a") and not is_unspaced("한") and not is_unspaced("ह")
    assert joins("a", "b") and not joins("a", "東") and not joins("a", " ")


def test_fold_forms() -> None:
    assert fold("Straße") == "strasse"
    assert fold("ＡＢＣ") == "abc"
    assert fold("Straße", casefold=False) == "Straße"
    assert contains_term(fold("Die STRASSE"), fold("straße"))


def test_sentence_end_marks() -> None:
    text = "One. Two! Three? Four… 五。六！七？ पाँच। छह॥ سبعة؟ end"
    ends = [m.group() for m in SENTENCE_END.finditer(text)]
    assert ends == [".", "!", "?", "…", "。", "！", "？", "।", "॥", "؟"]
    # a full stop inside a number or an abbreviation without a following space ends nothing
    assert [m.group() for m in SENTENCE_END.finditer("3.14 e.g.x")] == []


def test_case_sensitive_search() -> None:
    text = FoldedText("Will will", casefold=False)
    assert text.find("Will") == [(0, 4)]
    assert text.find("will") == [(5, 9)]


def test_shared_folded_text_is_built_once() -> None:
    text = "a long haystack " * 10
    assert folded_text(text) is folded_text(text)


def test_long_text_offsets_across_pieces() -> None:
    # a text longer than one folding piece, with length-changing characters on both sides of
    # every piece edge; the term's offsets are computed here from the repeated unit
    unit = "Maße und Fuß, "  # 14 characters
    text = unit * 1000 + "Straße"
    found = spans(text, "masse")
    assert found == [(i * 14, i * 14 + 4) for i in range(1000)]
    assert spans(text, "strasse") == [(14000, 14006)]


_ALPHABET = st.sampled_from(
    [*"abcsSß İıiI東京两次1873 ,.，！ﬁﬀ", "\u0301", "\u0308", "é", "e", "ｶ", "ﾞ", "ガ", "ᄀ", "ᅡ", "가", "ि", "क"]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_ALPHABET, max_size=40).map("".join), st.lists(_ALPHABET, min_size=1, max_size=4).map("".join))
def test_every_span_folds_to_the_term(text: str, term: str) -> None:
    folded_term = fold(term)
    for start, end in FoldedText(text).find(term, whole_word=False):
        assert 0 <= start < end <= len(text)
        assert fold(text[start:end]) == folded_term


@settings(max_examples=200, deadline=None)
@given(st.lists(_ALPHABET, max_size=60).map("".join))
def test_folding_in_pieces_equals_folding_whole(text: str) -> None:
    # every character is its own piece candidate here: the piece-wise result must be the whole fold
    assert FoldedText(text).folded == fold(text)
    assert FoldedText(text, casefold=False).folded == unicodedata.normalize("NFKC", text)


@settings(max_examples=200, deadline=None)
@given(st.text(min_size=0, max_size=30), st.text(min_size=1, max_size=3))
def test_any_unicode_span_folds_to_the_term(text: str, term: str) -> None:
    folded_term = fold(term)
    for start, end in FoldedText(text).find(term, whole_word=False):
        assert fold(text[start:end]) == folded_term
    for start, end in FoldedText(text).find(term):
        assert fold(text[start:end]) == folded_term


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["cat", "category", "Cat", " ", ".", "东京", "x"]), max_size=20).map("".join))
def test_whole_word_spans_have_no_spaced_word_on_either_side(text: str) -> None:
    for start, end in FoldedText(text).find("cat"):
        assert text[start:end].casefold() == "cat"
        assert start == 0 or not joins(text[start - 1], "c")
        assert end == len(text) or not joins("t", text[end])
