"""`util.absence.Absence`: substring searches answered from a table of a text's five- and six-character runs.

Every answer is compared with `str.find` on the same text, for terms cut from the text, terms made up
of its characters, and terms of other scripts, with the runs hashed in small blocks so that runs across
a block's edge are covered, and with tables small enough that runs share bits. Another test makes sure
the quick proof is used at all (drawn names that a real text lacks are answered without a scan), so
the first is not vacuous.
"""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from needlec.kinds.ruler.qa_corpus import reserved_names
from needlec.util import absence
from needlec.util.absence import BUILD_AFTER, GRAMS, Absence, table_bits

ALPHABET = "abcde é北京😀 \n"


def _built(text: str, block: int, bits: int) -> Absence:
    search = Absence(text)
    search.bits = bits
    search._marked = absence._table(text, bits, block)  # as after enough searches, with small blocks
    return search


@settings(max_examples=300, deadline=None)
@given(
    text=st.text(alphabet=ALPHABET, max_size=400),
    terms=st.lists(st.text(alphabet=ALPHABET, min_size=1, max_size=12), max_size=8),
    cuts=st.lists(st.tuples(st.integers(0, 400), st.integers(1, 12)), max_size=8),
    block=st.integers(1, 64),
    bits=st.integers(1, 16),
)
def test_find_answers_as_str_find(
    text: str, terms: list[str], cuts: list[tuple[int, int]], block: int, bits: int
) -> None:
    search = _built(text, block, bits)
    asked = terms + [text[a : a + n] for a, n in cuts if text[a : a + n]]
    for term in asked:
        assert search.find(term) == text.find(term), term
        assert (term in search) == (term in text)
        if search.lacks(term):
            assert term not in text
        middle = len(text) // 2
        assert search.find(term, middle) == text.find(term, middle)
        assert search.find(term, 1, middle) == text.find(term, 1, middle)


def test_every_run_is_marked_across_block_edges() -> None:
    text = "".join(random.Random(7).choices(ALPHABET, k=3000))
    bits = table_bits(len(text))
    whole = _set_bits(absence._table(text, bits))
    assert _set_bits(absence._table(text, bits, 17)) == whole
    codes = [ord(c) for c in text]
    by_hand = sorted({absence._slot(codes[i : i + g], bits) for g in GRAMS for i in range(len(text) - g + 1)})
    assert whole == by_hand


def _set_bits(table: np.ndarray) -> list[int]:
    """The slots a packed table has set (bit i is bit i % 8 of byte i // 8), read back bit by bit."""
    return [8 * byte + bit for byte, value in enumerate(table.tolist()) for bit in range(8) if value >> bit & 1]


def test_drawn_names_are_mostly_proved_absent_without_a_scan() -> None:
    # a real English text (this repository's README, casefolded) and the QA documents' name pool
    text = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8").casefold()
    search = Absence(text)
    names = [name for name in reserved_names() if len(name) >= min(GRAMS)][:400]
    asked = 0
    while search._marked is None:  # no proof before the searches have scanned BUILD_AFTER texts
        assert not search.lacks(names[asked])
        assert search.find(names[asked]) == text.find(names[asked])
        asked += 1
    assert asked == BUILD_AFTER
    proved = [name for name in names[asked:] if search.lacks(name)]
    assert all(name not in text for name in proved)
    assert len(proved) > len(names[asked:]) // 2
    # a term the text holds is never proved absent
    assert not any(search.lacks(text[i : i + 20]) for i in range(0, len(text) - 20, 997))


def test_names_are_proved_absent_from_documents_built_of_the_same_syllables() -> None:
    """RULER QA's haystack of fictional documents is full of names made of the same syllables as the names
    drawn for items: every five-character run of some drawn names occurs in it, every six-character run of
    others; runs of both lengths prove nearly all of them absent."""
    from needlec.haystacks.ruler_builders import RulerDocumentsBuilder, RulerDocumentsHaystacks

    built = RulerDocumentsHaystacks(RulerDocumentsBuilder(type="ruler_documents", count=4000))
    text = built.build([], "\n\n", 11, Path("."))[0].text.casefold()
    search = Absence(text)
    search._marked = absence._table(text, search.bits)  # as after enough searches
    names = [name for name in reserved_names() if len(name) >= 5][:600]
    absent = [name for name in names if name not in text]
    proved = [name for name in names if search.lacks(name)]
    assert set(proved) <= set(absent)
    # runs of five alone prove about 95% of them, runs of six alone about as many, both together nearly all
    assert len(proved) >= 0.98 * len(absent)
