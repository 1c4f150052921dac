"""Lexical overlap between a question and the text it is answered from, as ROUGE precision.

`rouge-score` does the scoring; its default tokenizer drops every non-ASCII character (Chinese,
Hindi or Arabic text would score 0 even when identical), so a Unicode-aware tokenizer is passed
instead: NFKC, case-folded, runs of letters/marks/digits as words, and every Han, Hiragana,
Katakana or Thai character as a token of its own.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field

import regex

from needlec.spec.models import Budget

_TOKEN = regex.compile(r"[\p{Han}\p{Hiragana}\p{Katakana}\p{Thai}]|[\p{L}\p{M}\p{N}]+", regex.V1)
METRICS = ("rouge1", "rouge2", "rougeL")


class UnicodeTokenizer:
    """Tokenizer for rouge-score that keeps every script (CJK characters are single tokens)."""

    def tokenize(self, text: str) -> list[str]:
        tokens: list[str] = _TOKEN.findall(unicodedata.normalize("NFKC", text).casefold())
        return tokens


class FocusedTokenizer(UnicodeTokenizer):
    """Tokens outside the question's vocabulary become one placeholder per run.

    Precision only counts question n-grams: an out-of-vocabulary token can match nothing, a run
    of them adds no match to ROUGE-1, ROUGE-2 (every bigram touching the placeholder misses) or
    the longest common subsequence. Collapsing runs keeps all three exact while a 100K-token
    context shrinks to the few places where question words occur.
    """

    PLACEHOLDER = "\x00"

    def __init__(self, vocabulary: set[str]) -> None:
        self.vocabulary = vocabulary

    def tokenize(self, text: str) -> list[str]:
        out: list[str] = []
        for token in super().tokenize(text):
            if token in self.vocabulary:
                out.append(token)
            elif not out or out[-1] != self.PLACEHOLDER:
                out.append(self.PLACEHOLDER)
        return out


def precision(question: str, reference: str) -> dict[str, float]:
    """ROUGE-1/2/L precision of the question against a reference: how much of it occurs there."""
    vocabulary = set(UnicodeTokenizer().tokenize(question))
    from rouge_score import rouge_scorer  # heavy (nltk, scipy): only when overlap is measured

    scorer = rouge_scorer.RougeScorer(list(METRICS), use_stemmer=False, tokenizer=FocusedTokenizer(vocabulary))
    scores = scorer.score(target=reference, prediction=question)
    return {name: round(scores[name].precision, 6) for name in METRICS}


@dataclass
class OverlapStats:
    """Running count, mean and max of each statistic, without keeping the rows."""

    count: int = 0
    sums: dict[str, float] = field(default_factory=lambda: dict.fromkeys(METRICS, 0.0))
    maxes: dict[str, float] = field(default_factory=lambda: dict.fromkeys(METRICS, 0.0))

    def add(self, scores: dict[str, float]) -> None:
        self.count += 1
        for metric in METRICS:
            self.sums[metric] += scores[metric]
            self.maxes[metric] = max(self.maxes[metric], scores[metric])

    def as_dict(self) -> dict[str, object]:
        n = max(1, self.count)
        return {
            "items": self.count,
            "mean": {m: round(v / n, 6) for m, v in self.sums.items()},
            "max": {m: round(v, 6) for m, v in self.maxes.items()},
        }


def budget_key(budget: Budget) -> str:
    return budget.metric.removesuffix("_precision")
