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
    _postings: dict[str, list[tuple[int, int]]] = field(default_factory=dict, init=False)
    _lengths: list[int] = field(default_factory=list, init=False)
    _cache: dict[str, Any] = field(default_factory=dict, init=False)  # query -> its scores (a float64 array)
    _arrays: dict[str, tuple[Any, Any]] = field(default_factory=dict, init=False)
    _norms: Any = field(default=None, init=False)

    def __post_init__(self) -> None:
        for i, text in enumerate(self.texts):
            counts = Counter(terms(text))
            self._lengths.append(sum(counts.values()))
            for term in sorted(counts):
                self._postings.setdefault(term, []).append((i, counts[term]))

    def _term(self, term: str) -> tuple[Any, Any]:
        """A term's postings as arrays: the texts it occurs in and its frequency in each (float64)."""
        got = self._arrays.get(term)
        if got is None:
            import numpy as np

            ids, tfs = zip(*self._postings[term], strict=True)
            got = self._arrays[term] = (np.array(ids, dtype=np.int64), np.array(tfs, dtype=np.float64))
        return got

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
            postings = self._postings.get(term)
            if not postings:
                continue
            idf = math.log(1.0 + (n - len(postings) + 0.5) / (len(postings) + 0.5))
            ids, tfs = self._term(term)
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
