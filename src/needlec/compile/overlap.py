"""Lexical overlap between a question and the text it is answered from, as ROUGE precision.

The scores are exactly those of `rouge-score` (ROUGE-1/2 n-gram precision and ROUGE-L LCS
precision, tested against it), computed here without it: its LCS table is quadratic pure Python,
which made one 128K-token context cost over a second. The LCS uses the bit-parallel
algorithm of Crochemore et al. (question tokens as bits; context tokens outside the question's
vocabulary leave the bit vector unchanged and are skipped), so a context costs one tokenizer pass.

`rouge-score`'s default tokenizer drops every non-ASCII character (Chinese, Hindi or Arabic text
would score 0 even when identical), so a Unicode-aware tokenizer is used instead: NFKC,
case-folded, runs of letters/marks/digits as words, and every character of a script written
without spaces (Han, Hiragana, Katakana, Thai, Lao, Khmer, Myanmar, Bopomofo: the word table of
`languages/words.py`) as a token of its own, also right after digits or Latin letters.

Stemmed figures (`rouge1_stemmed`, ...) follow `rouge-score`'s `use_stemmer=True`: the Porter
stemmer (`languages/stem.py`, which stems exactly as NLTK's that `rouge-score` uses, without
importing NLTK) applied to every token longer than three characters, here only to ASCII tokens
(it is an English stemmer). "eating" and "eats" then both count as "eat", so a question and a
needle that share only a word stem show it.
"""

from __future__ import annotations

import itertools
import operator
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from needlec.languages.stem import stem
from needlec.languages.words import word_token_regex
from needlec.spec.models import Budget
from needlec.util.lines import Lines

_TOKEN = word_token_regex()
_ASCII_WORDS = str.maketrans(
    {c: (chr(c).lower() if chr(c).isascii() and chr(c).isalnum() else " ") for c in range(128)}
)
"""For ASCII text: letters lower-cased, digits kept, every other character a space. Split on whitespace, the
text then gives the runs of `[a-z0-9]` of its lower-cased form (the tokens the Unicode classes give for
ASCII), about four times faster than a regular expression finds them."""


def _ascii_tokens(text: str) -> list[str]:
    """The tokens of an ASCII text: runs of letters and digits, lower-cased."""
    return text.translate(_ASCII_WORDS).split()


METRICS = ("rouge1", "rouge2", "rougeL")
STEMMED = tuple(f"{m}_stemmed" for m in METRICS)
ALL_METRICS = METRICS + STEMMED


class UnicodeTokenizer:
    """Tokenizer for rouge-score that keeps every script (CJK characters are single tokens);
    with `stemmed`, each token is replaced by its Porter stem (see `stem`)."""

    def __init__(self, stemmed: bool = False) -> None:
        self.stemmed = stemmed

    def tokenize(self, text: str) -> list[str]:
        if text.isascii():
            # NFKC and case folding leave ASCII as lower-cased ASCII, where the Unicode classes
            # reduce to [a-z0-9]
            tokens: list[str] = _ascii_tokens(text)
        else:
            tokens = _TOKEN.findall(unicodedata.normalize("NFKC", text).casefold())
        if not self.stemmed:
            return tokens
        stems = {token: stem(token) for token in set(tokens)}  # each distinct token once
        return list(map(stems.__getitem__, tokens))


class FocusedTokenizer(UnicodeTokenizer):
    """Tokens outside the question's vocabulary become one placeholder per run.

    Precision only counts question n-grams: an out-of-vocabulary token can match nothing, a run
    of them adds no match to ROUGE-1, ROUGE-2 (every bigram touching the placeholder misses) or
    the longest common subsequence. Collapsing runs keeps all three exact while a 100K-token
    context shrinks to the few places where question words occur.
    """

    PLACEHOLDER = "\x00"

    def __init__(self, vocabulary: set[str], stemmed: bool = False) -> None:
        super().__init__(stemmed)
        self.vocabulary = vocabulary

    def tokenize(self, text: str) -> list[str]:
        return self.focus(super().tokenize(text))

    def focus(self, tokens: list[str]) -> list[str]:
        """The tokens with each run outside the vocabulary made one placeholder."""
        vocabulary = self.vocabulary
        kept = list(map(vocabulary.__contains__, tokens))
        # every token as it is where kept, else the placeholder (which no question token is: the tokenizer
        # never makes one of it); shown: the kept ones and the first of each run of the others, all at C speed
        marked = map({word: word for word in vocabulary}.get, tokens, itertools.repeat(self.PLACEHOLDER))
        shown = map(operator.or_, kept, itertools.chain((True,), kept))  # token i kept, or the one before it
        return list(itertools.compress(marked, shown))


def precision(question: str, reference: str | Sequence[str], stemmed: bool = False) -> dict[str, float]:
    """ROUGE-1/2/L precision of the question against a reference: how much of it occurs there.

    The reference is a text, or its parts (needle texts), which count as joined by a space: each part's
    tokens are then memoised (`_part_tokens`), as needles recur across items. Keys are `METRICS` (`rouge1`,
    ...); with `stemmed`, both sides are stemmed first (the keys stay the same: see `both` for the two sets
    side by side)."""
    asked = UnicodeTokenizer(stemmed).tokenize(question)
    vocabulary = set(asked)
    focused = FocusedTokenizer(vocabulary, stemmed)
    if isinstance(reference, str):
        found = focused.tokenize(reference)
    else:
        distinct = set(reference)  # (CWE's 300 needles are ten words)
        unicode = not all(part.isascii() for part in distinct)  # the path the joined text would take
        judge = _LineJudge(vocabulary, unicode, stemmed)  # one for every block of lines of the reference
        parts = {part: _part_or_gap(part, unicode, stemmed, vocabulary, judge) for part in distinct}
        shown = set(parts.values())
        if shown <= _GAPS:  # no part holds a question token (CWE's 300 words): the focus is one gap, or none
            found = [FocusedTokenizer.PLACEHOLDER] if (FocusedTokenizer.PLACEHOLDER,) in shown else []
        else:
            found = focused.focus(list(itertools.chain.from_iterable(map(parts.__getitem__, reference))))
    scores = {
        "rouge1": _ngram_precision(asked, found, 1),
        "rouge2": _ngram_precision(asked, found, 2),
        "rougeL": lcs_length(asked, found) / len(asked) if asked and found else 0.0,
    }
    return {name: round(scores[name], 6) for name in METRICS}


_GAPS = frozenset({(), (FocusedTokenizer.PLACEHOLDER,)})
"""What a reference part with none of the question's tokens stands as (`_part_or_gap`)."""


class _LineJudge:
    """What one line of a block holds for the question (memoised per line): `HIT` where one of its tokens
    (stemmed, with `stemmed`) is a question token, else 1 where it has tokens, else 0. Summed over a block's
    lines (`Lines.weighted`, every block of a stream at once), it tells what the block's distinct tokens would:
    a hit, tokens but none of the question's, or none."""

    HIT = 1 << 40
    """More than the lines of any block, so that a sum of at least it means a hit."""

    def __init__(self, vocabulary: set[str], unicode: bool, stemmed: bool) -> None:
        self.vocabulary, self.unicode, self.stemmed = vocabulary, unicode, stemmed
        # a stem begins with its token's first character (`stem`): a token whose first character begins no
        # question token cannot stem to one, and is not stemmed (FWE's fresh coded words, mostly)
        self.firsts = {token[:1] for token in vocabulary}
        self.seen: dict[str, int] = {}

    def __call__(self, line: str) -> int:
        got = self.seen.get(line)
        if got is None:
            tokens = _unstemmed(line, self.unicode)
            if self.stemmed:
                vocabulary, firsts = self.vocabulary, self.firsts
                hit = any(token[:1] in firsts and stem(token) in vocabulary for token in tokens)
            else:
                hit = not self.vocabulary.isdisjoint(tokens)
            got = self.HIT if hit else 1 if tokens else 0
            self.seen[line] = got
        return got


def _part_or_gap(part: str, unicode: bool, stemmed: bool, vocabulary: set[str], judge: _LineJudge) -> tuple[str, ...]:
    """A part's tokens (`UnicodeTokenizer(stemmed).tokenize` of it alone, on its Unicode path or its ASCII
    one: parts joined by a space give the tokens of each in turn, as NFKC and case folding change nothing
    across a space and no token holds one), or, for a part with none of the question's tokens, one
    placeholder for them (none when it has none): `FocusedTokenizer.focus` makes one of such a run anyway.
    FWE's 100 blocks of coded words (43,000 tokens an item) then add 100 placeholders, not 43,000 tokens,
    to the reference it looks through. Parts of up to `PART_MEMO_CHARS` characters are memoised (needles
    recur across items); a longer one is judged by its distinct tokens first (a `Lines` block by its distinct
    lines, through `judge`: `_LineJudge`; a `Lines` block of any length is judged so, as a fresh FWE block, which
    never recurs, is shorter than that limit where a tokenizer's lines are long)."""
    if len(part) <= PART_MEMO_CHARS and not isinstance(part, Lines):
        tokens = _part_tokens(part, unicode, stemmed)
        if not tokens or not vocabulary.isdisjoint(tokens):
            return tokens
        return (FocusedTokenizer.PLACEHOLDER,)
    # a long part (not memoised): its distinct tokens decide, and only a part that has a question token is
    # stemmed and listed token by token
    if isinstance(part, Lines) and part.consistent():  # a block of lines: its distinct lines' tokens are its own
        marks = part.weighted(judge)
        if marks == 0:
            return ()
        if marks is not None and marks < judge.HIT:
            return (FocusedTokenizer.PLACEHOLDER,)
    words = _unstemmed(part, unicode)
    if not words:
        return ()
    if not stemmed:
        return tuple(words) if not vocabulary.isdisjoint(words) else (FocusedTokenizer.PLACEHOLDER,)
    stems = {token: stem(token) for token in set(words)}
    if vocabulary.isdisjoint(stems.values()):
        return (FocusedTokenizer.PLACEHOLDER,)
    return tuple(map(stems.__getitem__, words))


PART_MEMO_CHARS = 2048
"""Longest reference part whose tokens are memoised (a needle; FWE's fresh blocks of coded words are not)."""


def _unstemmed(part: str, unicode: bool) -> list[str]:
    """A part's tokens before stemming, on its Unicode path or its ASCII one."""
    if unicode:
        return _TOKEN.findall(unicodedata.normalize("NFKC", part).casefold())  # type: ignore[no-any-return]
    return _ascii_tokens(part)


@lru_cache(maxsize=16384)
def _part_tokens(part: str, unicode: bool, stemmed: bool) -> tuple[str, ...]:
    tokens = _unstemmed(part, unicode)
    if not stemmed:
        return tuple(tokens)
    stems = {token: stem(token) for token in set(tokens)}  # each distinct token once (FWE's blocks repeat)
    return tuple(map(stems.__getitem__, tokens))


def stemmed_precision(question: str, reference: str | Sequence[str]) -> dict[str, float]:
    """The stemmed figures under their own keys (`rouge1_stemmed`, ...)."""
    scores = precision(question, reference, stemmed=True)
    return {f"{name}_stemmed": value for name, value in scores.items()}


def both(question: str, reference: str | Sequence[str]) -> dict[str, float]:
    """Unstemmed and stemmed precision side by side (every key of `ALL_METRICS`)."""
    return {**precision(question, reference), **stemmed_precision(question, reference)}


def _ngram_precision(asked: list[str], found: list[str], n: int) -> float:
    """Clipped n-gram matches / n-grams of the question (rouge-score's `_score_ngrams` precision)."""
    # the n-grams counted at C speed: unigrams as the tokens themselves, longer ones as tuples (the shifted
    # copies are of unequal length: zip stops at the shortest)
    wanted: Counter[str | tuple[str, ...]]
    seen: Counter[str | tuple[str, ...]]
    if n == 1:
        wanted, seen = Counter(asked), Counter(found)
    else:
        wanted = Counter(zip(*(asked[k:] for k in range(n)), strict=False))
        seen = Counter(zip(*(found[k:] for k in range(n)), strict=False))
    matches = sum(map(min, wanted.values(), map(seen.get, wanted, itertools.repeat(0))))
    return matches / max(sum(wanted.values()), 1)


def lcs_length(short: list[str], long: list[str]) -> int:
    """Length of the longest common subsequence, bit-parallel over the tokens of `short`.

    Bit i of `v` is 0 when row i has gained a match; each token of `long` updates all rows at
    once with `v = (v + u) | (v - u)`, `u = v & mask(token)` (Crochemore, Iliopoulos, Pinzon and
    Reid, 2001). Tokens absent from `short` have an empty mask and change nothing.
    """
    masks: dict[str, int] = {}
    for i, token in enumerate(short):
        masks[token] = masks.get(token, 0) | (1 << i)
    full = (1 << len(short)) - 1
    v = full
    for token in long:
        mask = masks.get(token)
        if mask:
            u = v & mask
            v = ((v + u) | (v - u)) & full
    return len(short) - v.bit_count()


@dataclass
class OverlapStats:
    """Running count, mean and max of each statistic, without keeping the rows."""

    count: int = 0
    sums: dict[str, float] = field(default_factory=lambda: dict.fromkeys(ALL_METRICS, 0.0))
    maxes: dict[str, float] = field(default_factory=lambda: dict.fromkeys(ALL_METRICS, 0.0))

    def add(self, scores: dict[str, float]) -> None:
        self.count += 1
        for metric in ALL_METRICS:
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
    """The key of `both`'s scores that a budget bounds."""
    return budget.metric.removesuffix("_precision") + ("_stemmed" if budget.stem else "")
