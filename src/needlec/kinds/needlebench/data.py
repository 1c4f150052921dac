"""Typed access to the NeedleBench needle data, and the seeded draws the needle kinds make from it.

- `retrieval_records(lang)`: the fictional fact records for S-RT and M-RT.
- `reasoning_chains(lang, steps)`: the fictional multi-hop chains for M-RS, optionally of one step count.
- `draw_retrieval(rng, n, lang)`: n records for one item (M-RT) with pairwise-unique subjects and keywords, where no
  keyword is a substring of another keyword, subject or needle of the same draw (a `keyword in response` check could
  otherwise credit the wrong needle). The shipped records' pairwise clashes are bits worked out once per
  language (`ClashTable`), so a draw checks each record against the bits of those kept.
- `chain_order(chain, order, rng)`: a chain's facts in derivation order (NeedleBench v1) or shuffled (v2).

All randomness comes from the caller's `random.Random`; nothing here touches global random state.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from functools import cache, lru_cache
from typing import Literal

from needlec.languages.needlebench.files import read_verified
from needlec.languages.needlebench.models import (
    ChainFile,
    Fact,
    Language,
    NeedleDataError,
    ReasoningChain,
    RetrievalFile,
    RetrievalRecord,
)

LANGUAGES: tuple[Language, ...] = ("en", "zh")
STEP_COUNTS: tuple[int, ...] = (2, 3, 4, 5)
ChainOrder = Literal["chain", "shuffled"]

__all__ = [
    "LANGUAGES",
    "STEP_COUNTS",
    "ChainOrder",
    "ClashTable",
    "Fact",
    "NeedleDataError",
    "ReasoningChain",
    "RetrievalRecord",
    "chain_order",
    "draw_retrieval",
    "keyword_clash",
    "keywords_overlap",
    "reasoning_chains",
    "retrieval_records",
]


def _check_language(lang: str) -> Language:
    if lang not in LANGUAGES:
        raise NeedleDataError(f"NeedleBench data has no language {lang!r}; available: {', '.join(LANGUAGES)}")
    return lang


@cache
def retrieval_records(lang: str) -> tuple[RetrievalRecord, ...]:
    """All retrieval records of one language (`en` or `zh`), in file order, validated and sha256-checked."""
    language = _check_language(lang)
    parsed = RetrievalFile.model_validate(read_verified(f"retrieval_{language}.json"))
    if parsed.language != language:
        raise NeedleDataError(f"retrieval_{language}.json declares language {parsed.language!r}")
    return parsed.records


@cache
def _all_chains(language: Language) -> tuple[ReasoningChain, ...]:
    parsed = ChainFile.model_validate(read_verified(f"chains_{language}.json"))
    if parsed.language != language:
        raise NeedleDataError(f"chains_{language}.json declares language {parsed.language!r}")
    return parsed.chains


def reasoning_chains(lang: str, steps: int | None = None) -> tuple[ReasoningChain, ...]:
    """The reasoning chains of one language; with `steps`, only those with that many facts (2-5)."""
    chains = _all_chains(_check_language(lang))
    if steps is None:
        return chains
    if steps not in STEP_COUNTS:
        raise NeedleDataError(f"M-RS chains have 2 to 5 steps, not {steps}")
    return tuple(c for c in chains if c.steps == steps)


def draw_retrieval(
    rng: random.Random, n: int, lang: str, pool: Sequence[RetrievalRecord] | None = None
) -> list[RetrievalRecord]:
    """Draw n distinct records for one item, in drawn order (the caller assigns them to depths).

    `pool` replaces the shipped records of `lang` (e.g. a user's extended data set, validated by the same model).

    Records are taken in a random order and each is kept only if it does not clash with those already kept: equal
    or case-insensitively nested subjects or keywords, or a keyword inside another kept record's subject or needle.
    The shipped data has no clash at all, so this only matters for extended data sets; it never silently returns
    fewer than n records.
    """
    records = retrieval_records(lang) if pool is None else tuple(pool)
    if n < 0 or n > len(records):
        raise NeedleDataError(f"cannot draw {n} retrieval needles: the {lang} data holds {len(records)} records")
    if pool is None:  # the shipped records: each one's clashes are bits worked out once
        kept = _shipped(lang).draw(rng, n)
    else:
        kept = []
        shuffled = list(records)
        rng.shuffle(shuffled)
        for record in shuffled:
            if len(kept) == n:
                break
            if _fits(record, kept):
                kept.append(record)
    if len(kept) < n:
        raise NeedleDataError(f"only {len(kept)} mutually compatible {lang} retrieval records, {n} requested")
    return kept


@lru_cache(maxsize=4096)
def _folded(record: RetrievalRecord) -> tuple[str, tuple[str, ...], tuple[str, ...]]:
    """Case-folded subject, accepted spellings, and (keyword, subject, needle) of a record, computed once."""
    subject = record.subject.casefold()
    return (
        subject,
        tuple(a.casefold() for a in record.answers),
        (record.keyword.casefold(), subject, record.needle.casefold()),
    )


def _fits(record: RetrievalRecord, kept: list[RetrievalRecord]) -> bool:
    """Whether `record` can join `kept`: no nested subjects, and no accepted spelling of one record's keyword inside
    the other's keyword, subject or needle (in either direction, case-insensitive)."""
    subject, spellings, text = _folded(record)
    for other in kept:
        o_subject, o_spellings, o_text = _folded(other)
        if subject in o_subject or o_subject in subject:
            return False
        if any(a in t for a in spellings for t in o_text) or any(a in t for a in o_spellings for t in text):
            return False
    return True


def keywords_overlap(a: RetrievalRecord, b: RetrievalRecord) -> bool:
    """Whether an accepted spelling of `a`'s keyword occurs inside one of `b`'s (case-insensitive)."""
    mine, theirs = _folded(a)[1], _folded(b)[1]
    return any(x in y for x in mine for y in theirs)


def keyword_clash(records: Sequence[RetrievalRecord], lang: str | None = None) -> tuple[int, int] | None:
    """The first pair (i, j), i != j, in row order, where record i's keyword overlaps record j's
    (`keywords_overlap`), or None. With `lang`, a draw of the shipped records is cleared by their clash
    bits (`ClashTable`), and only a draw with an overlap is searched pair by pair."""
    if lang is not None and _shipped(_check_language(lang)).clear(records):
        return None
    for i, a in enumerate(records):
        for j, b in enumerate(records):
            if i != j and keywords_overlap(a, b):
                return i, j
    return None


class ClashTable:
    """For each of a set of records: a bit for every other record that it cannot be drawn with (`_fits`),
    and a bit for every other record whose keyword overlaps its own either way (`keywords_overlap`). Both
    relations are symmetric, so a draw is checked against the bits of what it holds rather than record by
    record. Made once per language for the shipped records (about 7,000 pairs)."""

    def __init__(self, records: Sequence[RetrievalRecord]) -> None:
        self.records = tuple(records)
        n = len(self.records)
        self.fits = [0] * n
        self.overlaps = [0] * n
        self._at = {id(r): i for i, r in enumerate(self.records)}
        for i in range(n):
            for j in range(i + 1, n):
                a, b = self.records[i], self.records[j]
                if not _fits(a, [b]):
                    self.fits[i] |= 1 << j
                    self.fits[j] |= 1 << i
                if keywords_overlap(a, b) or keywords_overlap(b, a):
                    self.overlaps[i] |= 1 << j
                    self.overlaps[j] |= 1 << i

    def draw(self, rng: random.Random, n: int) -> list[RetrievalRecord]:
        """Up to n records, taken in a random order, each kept unless it clashes with one kept before it:
        the records `draw_retrieval` keeps from the same `rng`."""
        order = list(range(len(self.records)))
        rng.shuffle(order)  # the permutation shuffling the records themselves would make
        kept: list[RetrievalRecord] = []
        taken = 0
        for i in order:
            if len(kept) == n:
                break
            if not self.fits[i] & taken:
                kept.append(self.records[i])
                taken |= 1 << i
        return kept

    def clear(self, records: Sequence[RetrievalRecord]) -> bool:
        """True when `records` are distinct records of this table and no two of their keywords overlap;
        False when they may (then `keyword_clash` compares them pair by pair)."""
        at = [self._at.get(id(r), -1) for r in records]
        if -1 in at or len(set(at)) != len(at):
            return False
        taken = 0
        for i in at:
            taken |= 1 << i
        return not any(self.overlaps[i] & taken for i in at)


@cache
def _shipped(lang: str) -> ClashTable:
    return ClashTable(retrieval_records(_check_language(lang)))


def chain_order(chain: ReasoningChain, order: ChainOrder, rng: random.Random) -> list[Fact]:
    """The facts of a chain in insertion order: derivation order (`chain`, NeedleBench v1) or `shuffled` (v2).

    `shuffled` permutes a copy with the caller's RNG; the chain itself is never changed. The permutation is recorded
    by the caller (each fact keeps its triple, so the derivation stays checkable whatever the order).
    """
    facts = list(chain.facts)
    if order == "chain":
        return facts
    if order == "shuffled":
        rng.shuffle(facts)
        return facts
    raise NeedleDataError(f"chain order must be 'chain' or 'shuffled', not {order!r}")
