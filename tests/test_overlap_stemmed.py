"""Stemmed ROUGE precision: hand-computed values, agreement with rouge-score, budgets and the CLI."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from rouge_score import rouge_scorer

from needlec.compile.overlap import METRICS, both, precision
from needlec.compile.plan import load_plan
from needlec.errors import NeedlecError
from needlec.languages.stem import stem


def test_stemmed_precision_by_hand() -> None:
    # Question tokens: which, character, was, painting, walls (5). Needle: tomas, paints, walls,
    # daily. Unstemmed, only "walls" is shared: ROUGE-1 1/5, no shared bigram, LCS 1 -> 1/5.
    # Stemmed (Porter, tokens over 3 characters): which, charact, was, paint, wall against
    # toma, paint, wall, daili: "paint" and "wall" shared -> 2/5; the bigram (paint, wall) is one
    # of the question's 4 bigrams -> 1/4; LCS paint, wall -> 2/5.
    question, needle = "Which character was painting walls?", "Tomas paints walls daily."
    assert precision(question, needle) == {"rouge1": 0.2, "rouge2": 0.0, "rougeL": 0.2}
    assert precision(question, needle, stemmed=True) == {"rouge1": 0.4, "rouge2": 0.25, "rougeL": 0.4}
    assert both(question, needle) == {
        "rouge1": 0.2,
        "rouge2": 0.0,
        "rougeL": 0.2,
        "rouge1_stemmed": 0.4,
        "rouge2_stemmed": 0.25,
        "rougeL_stemmed": 0.4,
    }
    # "painted" and "painting" both stem to "paint", once in the question (clipped to 1): 1/5.
    scores = both("Which character has seen paintings?", "Tomas painted a painting.")
    assert scores["rouge1"] == 0.0 and scores["rouge1_stemmed"] == 0.2 and scores["rouge2_stemmed"] == 0.0


def test_short_and_non_ascii_tokens_are_not_stemmed() -> None:
    assert stem("eats") == "eat" and stem("has") == "has" and stem("was") == "was"
    assert stem("größeren") == "größeren"  # the English stemmer leaves other scripts alone
    assert precision("北京在哪里", "北京很大") == precision("北京在哪里", "北京很大", stemmed=True)


@pytest.mark.parametrize(
    "question",
    [
        "Which character should avoid eating a croissant?",
        "Who went up to Jerusalem and what did he say to the elders?",
        "What were the kings of Israel doing when the armies gathered?",
    ],
)
def test_stemmed_figures_equal_rouge_score_use_stemmer(question: str, bible_text: str) -> None:
    scorer = rouge_scorer.RougeScorer(list(METRICS), use_stemmer=True)  # its own tokenizer (ASCII)
    context = bible_text[:30_000]
    assert context.isascii()
    expected = {name: round(value.precision, 6) for name, value in scorer.score(context, question).items()}
    assert precision(question, context, stemmed=True) == expected


SPEC = """\
name: stemcheck
title: Stem check
tokenizers: [cl100k_base]
haystack:
  sources: [{type: builtin, corpus: web-bible}]
grid: {lengths: [300], depths: [50]}
needle:
  type: template
  needles: ["Tomas paints walls daily."]
  question: Which character was painting walls?
  answers: [Tomas]
prompt:
  user: "{{ context }}\\n\\n{{ question }}"
scoring: {metric: contains}
overlap_budgets:
  - {metric: rouge1_precision, max: 0.3}
  - {metric: rouge1_precision, max: STEMMED_MAX, stem: true}
"""


def test_a_budget_can_bound_the_stemmed_figure(tmp_path: Path) -> None:
    strict = tmp_path / "strict.yaml"
    strict.write_text(SPEC.replace("STEMMED_MAX", "0.3"), encoding="utf-8")
    with pytest.raises(NeedlecError) as info:
        load_plan(strict)
    shown = info.value.render()
    # the unstemmed budget (0.2 <= 0.3) holds; only the stemmed one (0.4 > 0.3) is reported
    assert "overlap_budgets[1].max" in shown and "overlap_budgets[0]" not in shown
    assert "rouge1_precision (stemmed) 0.400" in shown
    loose = tmp_path / "loose.yaml"
    loose.write_text(SPEC.replace("STEMMED_MAX", "0.5"), encoding="utf-8")
    load_plan(loose)


def test_overlap_command_shows_both_figures(tmp_path: Path) -> None:
    spec = tmp_path / "loose.yaml"
    spec.write_text(SPEC.replace("STEMMED_MAX", "0.5"), encoding="utf-8")
    result = subprocess.run(
        [sys.executable, "-m", "needlec", "overlap", str(spec)], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    head, row = result.stdout.splitlines()[-2:]
    cells = dict(zip(head.split(), row.split(), strict=True))
    assert cells["rouge1/needle"] == "0.200" and cells["rouge1~s/needle"] == "0.400"
    assert cells["rouge2/needle"] == "0.000" and cells["rouge2~s/needle"] == "0.250"
    assert cells["rougeL/needle"] == "0.200" and cells["rougeL~s/needle"] == "0.400"
