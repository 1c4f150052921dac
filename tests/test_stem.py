"""The Porter stemmer of `languages/stem.py` against NLTK's, which `rouge-score` uses.

NLTK is imported here only, as the independent reference: every distinct English word of the
embedded corpora, a hand list of words that exercise each rule and NLTK's extensions, and
generated strings must stem alike.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from needlec.haystacks.sources import corpora
from needlec.haystacks.sources.builtin import _web_bible
from needlec.languages.stem import porter, stem

TRICKY = [
    # irregular forms and NLTK's extensions
    "sky", "skies", "dying", "lying", "tying", "news", "innings", "outings", "cannings", "howe",
    "proceed", "exceed", "succeed", "dies", "ties", "lies", "flies", "died", "spied", "cried",
    "tied", "enjoy", "enjoyment", "spy", "fly", "try", "happy", "by", "ay", "is", "as",
    # step 1: plurals and -ed / -ing
    "caresses", "ponies", "caress", "cats", "feed", "agreed", "plastered", "bled", "motoring",
    "sing", "conflated", "troubled", "sized", "hopping", "tanned", "falling", "hissing", "fizzed",
    "failing", "filing", "bleed", "speed", "need", "ring", "bring", "thing", "ed", "ing", "eed",
    # steps 2-4
    "relational", "conditional", "rational", "valenci", "hesitanci", "digitizer", "conformabli",
    "radicalli", "differentli", "vileli", "analogousli", "vietnamization", "predication",
    "operator", "feudalism", "decisiveness", "hopefulness", "callousness", "formaliti",
    "sensitiviti", "sensibiliti", "hopefulli", "geologi", "theologi", "archaeologi", "triplicate",
    "formative", "formalize", "electriciti", "electrical", "hopeful", "goodness", "revival",
    "allowance", "inference", "airliner", "gyroscopic", "adjustable", "defensible", "irritant",
    "replacement", "adjustment", "dependent", "adoption", "homologou", "communism", "activate",
    "angulariti", "homologous", "effective", "bowdlerize", "generalization", "generalizations",
    "oscillators", "traditionally", "musically", "additionally",
    # step 5 and y as a vowel or a consonant
    "probate", "rate", "cease", "controll", "roll", "syzygy", "toy", "yyyy", "yay", "ayyy",
    "yearly", "beyond", "played", "employee", "eyeball",
    # digits and mixtures (rouge-score tokens are [a-z0-9]+)
    "1873", "1870s", "a1b2", "mp3s", "x86", "2nd",
]  # fmt: skip


@lru_cache(maxsize=1)
def _nltk() -> Any:
    from nltk.stem.porter import PorterStemmer

    return PorterStemmer()


def _english_words() -> list[str]:
    """Every distinct rouge-score token ([a-z0-9]+ after lower-casing) of the English corpora."""
    words: set[str] = set()
    texts = [d.text for d in _web_bible()[0]]
    for info in corpora.catalog():
        if info.language == "en" and info.name != "web-bible":
            texts.extend(text for _, text in corpora.documents(info.name))
    for text in texts:
        words.update(re.findall(r"[a-z0-9]+", text.lower()))
    return sorted(words)


def test_every_english_corpus_word_stems_as_nltk() -> None:
    words = _english_words()
    assert len(words) > 20_000  # the bible and the novels, so the comparison is broad
    reference = _nltk()
    wrong = [(w, porter(w), reference.stem(w)) for w in words if porter(w) != reference.stem(w)]
    assert wrong == []


@pytest.mark.parametrize("word", TRICKY)
def test_tricky_words_stem_as_nltk(word: str) -> None:
    assert porter(word) == _nltk().stem(word)
    assert porter(word.upper()) == _nltk().stem(word.upper())


def test_hand_worked_stems() -> None:
    # worked through the rules by hand
    assert porter("caresses") == "caress"  # sses -> ss
    assert porter("ponies") == "poni"  # ies -> i
    assert porter("ties") == "tie"  # a four-letter -ies word keeps ie
    assert porter("cats") == "cat"
    assert porter("hopping") == "hop"  # doubled consonant undone
    assert porter("falling") == "fall"  # but not a doubled l
    assert porter("filing") == "file"  # m=1 and cvc: e put back
    assert porter("happy") == "happi"  # y after a consonant
    assert porter("enjoy") == "enjoy"  # y after a vowel stays
    assert porter("dying") == "die"  # irregular form
    assert porter("goodness") == "good"  # step 3 -ness
    assert porter("adjustment") == "adjust"  # step 4 -ment


def test_short_and_non_ascii_tokens_are_left_alone() -> None:
    assert stem("eats") == "eat"
    assert stem("eating") == "eat"
    assert stem("ate") == "ate"  # three characters or fewer: as rouge-score
    assert stem("bus") == "bus"
    assert stem("cafés") == "cafés"  # non-ASCII: not an English word for the stemmer


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet="abcdeilmnostuyz0123", min_size=1, max_size=14))
def test_generated_strings_stem_as_nltk(word: str) -> None:
    assert porter(word) == _nltk().stem(word)


def test_a_stem_begins_with_its_tokens_first_character() -> None:
    """Every step keeps a non-empty front of the word, so a stem begins as its token does: the overlap figures
    leave unstemmed a token whose first character begins no question token (it cannot stem to one)."""
    from needlec.languages.stem import _IRREGULAR

    words = [*_english_words(), *TRICKY, *_IRREGULAR]
    assert [w for w in words if stem(w)[:1] != w[:1]] == []


@settings(max_examples=2000, deadline=None)
@given(st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789", min_size=1, max_size=14))
def test_generated_stems_begin_with_their_first_character(word: str) -> None:
    assert stem(word)[:1] == word[:1]
