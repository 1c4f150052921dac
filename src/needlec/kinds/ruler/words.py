"""Word extraction (RULER CWE and FWE): lists of words with known counts; the answer is the top of the count.

- Common-word extraction (CWE): `num_common` words occur `common_freq` times each (30; 6 for
  short contexts), the others `uncommon_freq` times (3; 1), shuffled and rendered as a numbered
  list "1. heron 2. quartz ...". The answer is the common words. No answer word is a substring of
  another answer word or of any other word in the item, so substring scoring cannot credit "cat"
  for "category", and the counts recomputed from the rendered list are unambiguous.
- Frequent-word extraction (FWE): coded 6-letter words with Zipf counts floor(N * k^-alpha / zeta(alpha));
  rank 1 is replaced by a noise token ("...") and the answer is ranks 2-4. The top counts are
  checked to be strictly decreasing, so ties are impossible; coded words are never real words of
  the shipped lists.

`counts` records every word's number of occurrences, and `answers` equals the top of those counts.
"""

from __future__ import annotations

import itertools
import math
import random
import string
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import TYPE_CHECKING

from needlec.kinds.ruler.common import (
    DistinctPool,
    Exclusion,
    RulerGenerationError,
    random_letters,
    shuffled_small,
)
from needlec.languages.wordlists import cwe_words

if TYPE_CHECKING:
    import numpy as np


@dataclass(frozen=True)
class WordTaskWording:
    """Templates of a word-extraction item; fields: {count} (number of answers)."""

    instruction: str = "Below is a numbered list of words. A few of them occur far more often than the rest."
    question: str = "Which {count} words occur most often in the list above?"
    answer_prefix: str = "Answer: the {count} most frequent words in the list are:"


FREQUENT_WORDING = WordTaskWording(
    instruction="Below is a text made of coded words. Ignore the dots: they are noise.",
    question="Which {count} coded words occur most often in the text above?",
    answer_prefix="Answer: the {count} most frequent coded words are:",
)
"""Default FWE wording: tells the reader to ignore the noise token."""


@dataclass(frozen=True)
class CommonWordsSpec:
    """Parameters of CWE: RULER uses 10 common words x 30 and uncommon words x 3 (6 and 1 below 4K)."""

    num_common: int = 10
    common_freq: int = 30
    uncommon_freq: int = 3
    numbered: bool = True
    """Render as "1. w 2. w ..." (RULER); otherwise words separated by `separator`."""
    separator: str = " "
    wording: WordTaskWording = field(default_factory=WordTaskWording)


@dataclass(frozen=True)
class FrequentWordsSpec:
    """Parameters of FWE: Zipf exponent 2, 6-letter coded words, rank 1 as noise, answer ranks 2-4."""

    alpha: float = 2.0
    word_length: int = 6
    num_noise: int = 1
    """Top ranks replaced by the noise token."""
    num_answers: int = 3
    noise_token: str = "..."
    separator: str = " "
    wording: WordTaskWording = field(default_factory=lambda: FREQUENT_WORDING)


@dataclass(frozen=True)
class WordTaskItem:
    """A drawn word-extraction item: the word sequence, its rendering, counts and answers."""

    sequence: tuple[str, ...]
    counts: tuple[tuple[str, int], ...]
    """(word, occurrences) for every distinct word, highest count first (noise token included for FWE)."""
    answers: tuple[tuple[str, ...], ...]
    instruction: str
    question: str
    answer_prefix: str
    numbered: bool = False
    separator: str = " "

    @cached_property
    def text(self) -> str:
        """The sequence as RULER writes it (rendered when first read: the compile inserts the words as lines)."""
        return _render(self.sequence, self.numbered, self.separator)


def _render(sequence: Sequence[str], numbered: bool, separator: str) -> str:
    if numbered:
        return separator.join(f"{index}. {word}" for index, word in enumerate(sequence, start=1))
    return separator.join(sequence)


def _overlaps(word: str, others: Sequence[str]) -> bool:
    return any(word in other or other in word for other in others)


def generate_common_words(
    rng: random.Random,
    spec: CommonWordsSpec,
    num_uncommon: int,
    vocabulary: Sequence[str] | None = None,
    exclude: Sequence[str] = (),
) -> WordTaskItem:
    """Draw one CWE item with `num_uncommon` uncommon words (the compile grows it to fill the length).

    `vocabulary` defaults to the frozen `cwe_words` list; `exclude` removes words (e.g. those of the
    few-shot example, which must be disjoint from the item's).
    """
    if spec.common_freq <= spec.uncommon_freq or spec.uncommon_freq < 1 or spec.num_common < 1:
        raise RulerGenerationError(
            f"common words must occur more often than uncommon ones (got {spec.common_freq} vs {spec.uncommon_freq})"
        )
    banned = set(exclude)
    order = [word for word in (vocabulary if vocabulary is not None else cwe_words()) if word not in banned]
    rng.shuffle(order)
    common: list[str] = []
    rest = iter(order)
    for word in rest:
        if not _overlaps(word, common):
            common.append(word)
            if len(common) == spec.num_common:
                break
    uncommon = list(itertools.islice((word for word in rest if not _overlaps(word, common)), num_uncommon))
    if len(common) < spec.num_common or len(uncommon) < num_uncommon:
        raise RulerGenerationError(
            f"the vocabulary of {len(order)} words cannot supply {spec.num_common} common and "
            f"{num_uncommon} uncommon words without substring collisions"
        )
    sequence = [word for word in common for _ in range(spec.common_freq)]
    sequence += [word for word in uncommon for _ in range(spec.uncommon_freq)]
    rng.shuffle(sequence)
    counts = [(word, spec.common_freq) for word in common] + [(word, spec.uncommon_freq) for word in uncommon]
    count = spec.num_common
    return WordTaskItem(
        sequence=tuple(sequence),
        counts=tuple(counts),
        answers=tuple((word,) for word in common),
        instruction=spec.wording.instruction,
        question=spec.wording.question.format(count=count),
        answer_prefix=spec.wording.answer_prefix.format(count=count),
        numbered=spec.numbered,
        separator=spec.separator,
    )


@lru_cache(maxsize=16)
def zeta(alpha: float) -> float:
    """Riemann zeta for alpha > 1: a direct sum plus the Euler-Maclaurin tail (error far below 1e-12)."""
    if alpha <= 1:
        raise RulerGenerationError(f"the Zipf exponent must exceed 1, got {alpha}")
    terms = 1000
    head = math.fsum(math.pow(k, -alpha) for k in range(1, terms))
    tail = (
        math.pow(terms, 1 - alpha) / (alpha - 1)
        + math.pow(terms, -alpha) / 2
        + alpha * math.pow(terms, -alpha - 1) / 12
    )
    return head + tail


@lru_cache(maxsize=64)
def zipf_counts(num_words: int, vocab_size: int, alpha: float) -> tuple[int, ...]:
    """RULER's FWE counts: floor(num_words * k^-alpha / zeta(alpha)) for ranks k = 1..vocab_size (worked out
    once per length: every FWE item of a length has the same; a stream sized by a Hugging Face tokenizer's own
    line cost, `draw_fitted`, has a length of its own). The products and quotients are numpy's on float64, each
    the float Python's arithmetic gives in the same order, over powers worked out once per vocabulary."""
    import numpy as np

    shares: np.ndarray = (float(num_words) * _zipf_powers(vocab_size, alpha)) / zeta(alpha)
    return tuple(shares.astype(np.int64).tolist())


@lru_cache(maxsize=16)
def _zipf_powers(vocab_size: int, alpha: float) -> np.ndarray:
    """k^-alpha for ranks k = 1..vocab_size (`math.pow`'s), as float64."""
    import numpy as np

    powers = np.array([math.pow(k, -alpha) for k in range(1, vocab_size + 1)], dtype=np.float64)
    powers.flags.writeable = False  # (shared by every call)
    return powers


@dataclass(frozen=True, eq=False)
class FrequentStream:
    """An FWE draw before it is written out: the coded words by rank and the shuffled stream as ranks.

    `words` holds the distinct strings of the stream (the noise token first), `ids` the stream as indexes
    into it (a numpy array, in the shuffled order), `counts` every distinct string's occurrences as
    `WordTaskItem.counts` has them, `answers` the answer words."""

    words: tuple[str, ...]
    ids: np.ndarray
    counts: tuple[tuple[str, int], ...]
    answers: tuple[str, ...]

    def sequence(self) -> tuple[str, ...]:
        """The stream as strings."""
        import numpy as np

        return tuple(np.array(self.words, dtype=object)[self.ids].tolist())


def frequent_word_stream(
    rng: random.Random,
    spec: FrequentWordsSpec,
    num_words: int,
    vocab_size: int,
    exclude: Sequence[str] | Exclusion | None = None,
) -> FrequentStream:
    """Draw one FWE stream: a vocabulary of `vocab_size` ranks (RULER: context length / 50), counts from
    `num_words`; the ranks whose count is not zero get a coded word each (the others are never written).

    Coded words are fresh random lowercase strings, never one of `exclude` (default: the frozen
    common-word vocabulary, which holds every real word shipped). The stream's order comes from a PCG64
    bit generator seeded from `rng` (`shuffled_small`)."""
    import numpy as np

    counts = zipf_counts(num_words, vocab_size, spec.alpha)
    top = spec.num_noise + spec.num_answers + 1
    if vocab_size < top or any(counts[i] <= counts[i + 1] for i in range(top - 1)):
        shown = list(counts[: min(top, len(counts))])
        raise RulerGenerationError(
            f"FWE with {num_words} words over {vocab_size} coded words gives top counts {shown}: "
            "they must be strictly decreasing, use more words"
        )
    pool = DistinctPool(rng, tuple(cwe_words()) if exclude is None else exclude)
    pool.drawn.add(spec.noise_token)
    size = spec.word_length

    def make_many(n: int) -> list[str]:
        # the words n calls of "".join(rng.choices(ascii_lowercase, k=size)) would draw, in one go
        letters = random_letters(rng, n * size, string.ascii_lowercase)
        return [letters[i : i + size] for i in range(0, n * size, size)]

    # counts fall with the rank, so the ranks that occur at all are the first `used` (at 128K, 162 of the 2,621:
    # the noise token and 161 coded words): only those are drawn, the rest of the vocabulary would never be written
    used = counts.index(0) if 0 in counts else len(counts)
    fresh = pool.draw_all(make_many, max(0, used - spec.num_noise), "coded word")
    vocab = [spec.noise_token] * min(spec.num_noise, used) + fresh
    words = tuple(dict.fromkeys(vocab))
    word_of = {word: k for k, word in enumerate(words)}
    # each rank `count` times, in rank order, then shuffled by random keys from PCG64's raw stream, seeded from
    # `rng` (the same bits in every numpy version; the stream has tens of thousands of lines at 128K)
    ranks = shuffled_small(rng, np.repeat(np.array([word_of[word] for word in vocab], dtype=np.int64), counts[:used]))
    tally: dict[str, int] = {}
    for word, count in zip(vocab, counts, strict=False):
        tally[word] = tally.get(word, 0) + count
    return FrequentStream(
        words=words,
        ids=ranks,
        counts=tuple(sorted(tally.items(), key=lambda pair: -pair[1])),
        answers=tuple(vocab[spec.num_noise : spec.num_noise + spec.num_answers]),
    )


def generate_frequent_words(
    rng: random.Random,
    spec: FrequentWordsSpec,
    num_words: int,
    vocab_size: int,
    exclude: Sequence[str] | Exclusion | None = None,
) -> WordTaskItem:
    """Draw one FWE item (`frequent_word_stream`, written out as RULER writes it)."""
    drawn = frequent_word_stream(rng, spec, num_words, vocab_size, exclude)
    count = spec.num_answers
    return WordTaskItem(
        sequence=drawn.sequence(),
        counts=drawn.counts,
        answers=tuple((word,) for word in drawn.answers),
        instruction=spec.wording.instruction,
        question=spec.wording.question.format(count=count),
        answer_prefix=spec.wording.answer_prefix.format(count=count),
        separator=spec.separator,
    )
