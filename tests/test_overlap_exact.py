"""needlec's ROUGE precision equals rouge-score's own computation (with the same tokenizer)."""

from __future__ import annotations

import random
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rouge_score import rouge_scorer

from needlec.compile.overlap import METRICS, PART_MEMO_CHARS, UnicodeTokenizer, lcs_length, precision
from needlec.util.lines import Lines, line_blocks


def reference(question: str, context: str) -> dict[str, float]:
    """rouge-score over the full (unfocused) token lists: the definition the fast path must meet."""
    scorer = rouge_scorer.RougeScorer(list(METRICS), use_stemmer=False, tokenizer=UnicodeTokenizer())
    scores = scorer.score(target=context, prediction=question)
    return {name: round(scores[name].precision, 6) for name in METRICS}


WORDS = ["the", "cat", "sat", "on", "a", "mat", "and", "then", "dog", "ran", "to", "it", "while", "birds", "sang"]


def _text(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


@pytest.mark.parametrize("seed", range(40))
def test_random_texts_match_rouge_score(seed: int) -> None:
    rng = random.Random(seed)
    question, context = _text(rng, rng.randint(0, 14)), _text(rng, rng.randint(0, 400))
    assert precision(question, context) == reference(question, context)


PIECES = ["The", "then", "them", "he", "x2", "2", "cat", "cats", "CAT", "a_b", "mat.", "...", "42", "-", "\n", "'s"]


@pytest.mark.parametrize("seed", range(40))
def test_ascii_runs_inside_longer_runs_match_rouge_score(seed: int) -> None:
    """Question words that are parts of longer runs ("the" in "then", "2" in "x2", "a" in "a_b"), case,
    digits and punctuation run together: the question's words found as whole runs in one scan of a long
    ASCII context give rouge-score's figures."""
    rng = random.Random(seed)

    def text(n: int) -> str:
        return "".join(rng.choice(PIECES) + rng.choice(["", " ", " ", ", "]) for _ in range(n))

    question, context = text(rng.randint(0, 10)), text(rng.randint(0, 600))
    assert precision(question, context) == reference(question, context)


def test_real_prose_and_scripts_match_rouge_score(bible_text: str) -> None:
    cases = [
        ("What is the best thing to do on a rainy afternoon in Lisbon?", bible_text[:60_000]),
        ("Who went up to Jerusalem and what did he say?", bible_text[:20_000]),
        ("哪个角色去过布鲁塞尔？", "他去了布鲁塞尔。 那个角色住在原子球塔旁边，布鲁塞尔很美。"),
        ("Which character lives beside the Atomium?", "Actually, Yuki lives beside the Atomium. " * 3),
        ("", "anything at all"),
        ("no overlap here", ""),
    ]
    for question, context in cases:
        assert precision(question, context) == reference(question, context), question


def test_lcs_length_by_hand() -> None:
    assert lcs_length(list("abcb"), list("bdcaba")) == 3  # e.g. "bcb"
    assert lcs_length(list("aaa"), list("a")) == 1
    assert lcs_length([], list("abc")) == 0
    assert lcs_length(list("xyz"), list("zyx")) == 1


def test_ascii_tokens_equal_the_unicode_rule() -> None:
    from needlec.compile.overlap import _TOKEN

    text = "Don't SHOUT_at me: 3.14 cats, x2-y3; ÉTÉ?"[:-5] + "\tA_b\n9z"
    assert text.isascii()
    assert UnicodeTokenizer().tokenize(text) == _TOKEN.findall(text.casefold())
    assert UnicodeTokenizer().tokenize(text) == [
        "don",
        "t",
        "shout",
        "at",
        "me",
        "3",
        "14",
        "cats",
        "x2",
        "y3",
        "a",
        "b",
        "9z",
    ]


_PART_ALPHABET = "abcXYZ019 éßİ\u0301ﾞｶ北京大学東ＡＢ１.,-_"


@settings(max_examples=300, deadline=None)
@given(
    question=st.text(alphabet=_PART_ALPHABET, max_size=30),
    parts=st.lists(st.text(alphabet=_PART_ALPHABET, max_size=25), max_size=6),
    stemmed=st.booleans(),
)
def test_a_reference_given_as_parts_scores_as_the_parts_joined(question: str, parts: list[str], stemmed: bool) -> None:
    """Parts (needle texts) are tokenized one by one and memoised; the scores are those of the text they make
    joined by a space (combining marks, halfwidth voiced marks and fullwidth letters at the parts' edges)."""
    assert precision(question, parts, stemmed) == precision(question, " ".join(parts), stemmed)
    ascii_parts = [p.encode("ascii", "ignore").decode() for p in parts]
    assert precision(question, ascii_parts, stemmed) == precision(question, " ".join(ascii_parts), stemmed)


@pytest.mark.parametrize("filler", ["zz", "qx " * 1500])  # a short part, and one too long to be memoised
def test_a_part_with_no_question_word_still_parts_its_neighbours(filler: str) -> None:
    """A part holding none of the question's words stands for a run of other words: the question's bigram
    across it does not occur, and its words are no match. Worked out by hand: "a b" against "a <filler> b"
    has both unigrams (1.0), neither bigram (0.0), and a common subsequence of both words (1.0)."""
    expected = {"rouge1": 1.0, "rouge2": 0.0, "rougeL": 1.0}
    assert precision("a b", ["a", filler, "b"]) == expected
    assert precision("a b", f"a {filler} b") == expected
    assert precision("A b", ["x", filler]) == {"rouge1": 0.0, "rouge2": 0.0, "rougeL": 0.0}


@pytest.mark.parametrize("stemmed", [False, True])
def test_long_parts_score_as_the_parts_joined(stemmed: bool) -> None:
    """Parts too long to be memoised (FWE's blocks) take a path of their own, on which their distinct tokens
    decide whether they hold a question word. The scores are still those of the joined text: for a long part
    whose words match the question's only once stemmed ("jumped" and "jumping", "fence" and "fences"), for one
    with none of them, and for one with a question word at its very end."""
    question = "Which runners were jumping over the fences?"
    inflected = "jumped fence " * 200
    other = "qq zz " * 400
    parts = ["start", inflected, other, "fences", other + "Runners"]
    assert all(len(part) > PART_MEMO_CHARS for part in (inflected, other))
    assert precision(question, parts, stemmed) == precision(question, " ".join(parts), stemmed)
    alone = precision(question, [other, inflected], stemmed)
    assert alone == precision(question, f"{other} {inflected}", stemmed)
    # unstemmed, the inflected words match nothing; stemmed, "jump" and "fenc" do (2 of the 7 words)
    assert alone["rouge1"] == (round(2 / 7, 6) if stemmed else 0.0)
    # long parts on the Unicode path (one Chinese character a token), and one of punctuation only (no token)
    chinese, dots = "跳过篱笆的人。" * 400, "... " * 700
    assert all(len(part) > PART_MEMO_CHARS for part in (chinese, dots))
    mixed = ["篱笆", chinese, dots, "runners", dots + "跑"]
    asked = "谁跳过了篱笆? Which runners?"
    assert precision(asked, mixed, stemmed) == precision(asked, " ".join(mixed), stemmed)
    assert precision("runners", [dots, "runners"], stemmed) == {"rouge1": 1.0, "rouge2": 0.0, "rougeL": 1.0}


@pytest.mark.parametrize("stemmed", [False, True])
def test_blocks_of_lines_score_as_their_text(stemmed: bool) -> None:
    """A long part given as `Lines` (FWE's blocks, which know their distinct lines) is judged by those lines:
    the scores are those of the same text given as a plain string, for a block whose lines hold a question
    word only once stemmed, one with none, one with a question word in one line only, and one whose tally
    does not fit its text (not trusted)."""
    question = "Which runners were jumping over the fences?"

    def block(lines: list[str], picks: list[int], counts: list[int] | None = None) -> Lines:
        stream = [lines[p % len(lines)] for p in picks]
        tally = Counter(stream)
        return Lines("\n".join(stream), list(tally), counts or list(tally.values()))

    picks = [(7 * i) % 13 for i in range(900)]
    inflected = block(["jumped", "...", "qzvkel", "fence"], picks)
    none = block(["...", "qzvkel", "womtra"], picks)
    one = block(["...", "qzvkel", "womtra", "runners"], [*picks, 3])
    wrong = block(["...", "qzvkel", "runners"], picks, [1, 1, 1])
    assert not wrong.consistent()
    for part in (inflected, none, one, wrong):
        assert len(part) > PART_MEMO_CHARS
        plain = str(part)
        assert precision(question, ["start", part, "fences"], stemmed) == precision(
            question, ["start", plain, "fences"], stemmed
        )
        assert precision(question, [part], stemmed) == precision(question, plain, stemmed)
    assert precision(question, [none], stemmed) == {"rouge1": 0.0, "rouge2": 0.0, "rougeL": 0.0}


@pytest.mark.parametrize("stemmed", [False, True])
def test_blocks_of_one_stream_score_as_their_text(stemmed: bool) -> None:
    """The blocks `line_blocks` cuts from one stream (FWE's) are judged together, line by line, once per
    question: a block of dots alone (no token at all), blocks of coded words alone, and blocks with a word of
    the question (only once stemmed: "fence") score as the same texts given as plain strings."""
    question = "Which runners were jumping over the fences?"
    words = ["...", "qzvkel", "womtra", "fence", "runners"]
    # 800 lines of dots, then 800 of coded words, then 800 holding the question's words: three long blocks
    ids = np.array([0] * 800 + [1, 2, 0, 1] * 200 + [3, 0, 4, 1] * 200, dtype=np.int64)
    blocks = line_blocks(words, ids, 3)
    assert set(blocks[0].split("\n")) == {"..."} and "runners" not in blocks[1] and "fence" in blocks[2]
    assert all(len(block) > PART_MEMO_CHARS for block in blocks)
    plain = [str(block) for block in blocks]
    assert precision(question, ["start", *blocks, "fences"], stemmed) == precision(
        question, ["start", *plain, "fences"], stemmed
    )
    for block, text in zip(blocks, plain, strict=True):
        assert precision(question, [block], stemmed) == precision(question, text, stemmed)
    # the block of dots holds no token: the words on either side of it stay neighbours ("the fences")
    joined = precision(question, ["over the", blocks[0], "fences"], stemmed)
    assert joined == precision(question, ["over the", plain[0], "fences"], stemmed)
    assert joined["rouge2"] == precision(question, "over the fences", stemmed)["rouge2"] > 0
