"""A lexical retriever (Okapi BM25) over a haystack's chunks, for RAG-chunk contexts ranked by retrieval.

Terms come from the script-aware word table (`languages/words.py`): NFKC and case-folded runs of
letters, marks and digits where the script has spaces, single characters where it has none (Chinese,
Japanese, Thai). Scores use the usual BM25 weights (k1 = 1.2, b = 0.75, idf = ln(1 + (N - n + 0.5) /
(n + 0.5))) and are summed in a fixed order, so a ranking is the same on every machine. Ties go to the
earlier chunk.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from needlec.languages import words

__all__ = ["BM25", "terms"]

K1 = 1.2
B = 0.75


def terms(text: str) -> list[str]:
    """The word table's terms of `text`, in order (folded)."""
    found: list[str] = words.word_token_regex().findall(words.fold(text))
    return found


SCORE_MEMO = 256
"""Queries whose scores a `BM25` keeps (the memo is emptied when full)."""


@dataclass
class BM25:
    """An inverted index of `texts` and BM25 scores of a query against every one of them.

    A query's scores are worked out with numpy, a term at a time in sorted order: each operation is the
    one the formula names, in the formula's order, on float64, so every score is the float a loop over
    the postings gives (`tests/test_rag_chunks.py` checks both against each other).
    """

    texts: Sequence[str]
    _spans: dict[str, tuple[int, int]] = field(default_factory=dict, init=False)  # term -> its postings' slice
    _ids: Any = field(default=None, init=False)  # every posting's text (int64), a term's postings together
    _tfs: Any = field(default=None, init=False)  # every posting's term frequency (float64), in `_ids`'s order
    _lengths: list[int] = field(default_factory=list, init=False)
    _cache: dict[str, Any] = field(default_factory=dict, init=False)  # query -> its scores (a float64 array)
    _norms: Any = field(default=None, init=False)

    def __post_init__(self) -> None:
        import numpy as np

        postings: dict[str, tuple[list[int], list[int]]] = {}
        for i, text in enumerate(self.texts):
            counts = Counter(terms(text))
            self._lengths.append(sum(counts.values()))
            for term, tf in counts.items():
                got = postings.get(term)
                if got is None:
                    got = postings[term] = ([], [])
                got[0].append(i)
                got[1].append(tf)
        # one pair of flat arrays for every term's postings (in text order), sliced per term: a query's
        # terms need no conversion of their own, however many terms a compile's questions bring
        ids: list[int] = []
        tfs: list[int] = []
        for term, (texts, freqs) in postings.items():
            self._spans[term] = (len(ids), len(ids) + len(texts))
            ids += texts
            tfs += freqs
        self._ids = np.array(ids, dtype=np.int64)
        self._tfs = np.array(tfs, dtype=np.float64)

    def _term(self, term: str) -> tuple[Any, Any] | None:
        """A term's postings as arrays (the texts it occurs in, its frequency in each), or None if no text has it."""
        span = self._spans.get(term)
        if span is None:
            return None
        return self._ids[span[0] : span[1]], self._tfs[span[0] : span[1]]

    def scores(self, query: str) -> list[float]:
        """One score per text (0.0 where no query term occurs), memoised by query."""
        scored: list[float] = self._scores(query).tolist()
        return scored

    def _scores(self, query: str) -> Any:
        """`scores` as a float64 array, memoised for the last `SCORE_MEMO` queries (an item's question is
        new, and a kept list of a thousand scores costs about 30 KB)."""
        got = self._cache.get(query)
        if got is not None:
            return got
        import numpy as np

        n = len(self.texts)
        average = (sum(self._lengths) / n) if n else 0.0
        if self._norms is None:
            lengths = np.array(self._lengths, dtype=np.float64)
            # K1 * (1 - B + B * length / average), grouped as Python groups the scalar formula
            self._norms = K1 * ((1.0 - B) + (B * lengths) / average) if average else np.full(n, K1)
        # each term's postings and weights, in sorted term order, summed into the scores in one `bincount`,
        # which adds an array's weights in the order they come: per text, term after term from 0.0
        columns = []
        for term in sorted(set(terms(query))):
            postings = self._term(term)
            if postings is None:
                continue
            ids, tfs = postings
            idf = math.log(1.0 + (n - len(ids) + 0.5) / (len(ids) + 0.5))
            columns.append((ids, ((idf * tfs) * (K1 + 1.0)) / (tfs + self._norms[ids])))
        if columns:
            ids = np.concatenate([c[0] for c in columns])
            out = np.bincount(ids, weights=np.concatenate([c[1] for c in columns]), minlength=n)
        else:
            out = np.zeros(n, dtype=np.float64)
        if len(self._cache) >= SCORE_MEMO:
            self._cache.clear()
        self._cache[query] = out
        return out

    def ranking(self, query: str, among: Sequence[int] | None = None) -> list[int]:
        """Indices of the texts (all, or those in `among`) by decreasing score, ties to the earlier one."""
        import numpy as np

        scored = self._scores(query)
        pool = np.arange(len(self.texts)) if among is None else np.asarray(among, dtype=np.int64)
        if len(pool) > 1 and not bool(np.all(pool[1:] > pool[:-1])):  # not in index order: sort by both keys
            scores = scored.tolist()
            return sorted(pool.tolist(), key=lambda i: (-scores[i], i))
        # in index order, a stable sort by score alone leaves ties to the earlier text
        order = np.argsort(-scored[pool], kind="stable")
        ranked: list[int] = pool[order].tolist()
        return ranked
