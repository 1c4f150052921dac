"""`llm_answer_candidates`: ask a chat model whether a stretch of haystack answers a question.

NoLiMa's second filtering step, made repeatable. The text is read in overlapping chunks (1000
characters, stride 800); each chunk is paired with each question and sent with a short
instruction and four worked examples (two answers, two `N/A`). A chunk whose reply is not N/A is
flagged: the sentences holding the reply (or, if the reply is not in the text, every sentence of
the chunk) are taken out. The text around each cut is then checked again, until a round flags
nothing or `max_rounds` is reached. A decision file can overrule any verdict.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import Field, model_validator

from needlec.haystacks.filters.base import (
    FILTERS,
    Document,
    EditParams,
    FilterContext,
    FilterError,
    FilterResult,
    Removal,
)
from needlec.haystacks.filters.edits import EditedText, covering, merge, normalize, plan_edits, sentence_spans
from needlec.haystacks.filters.llm_client import (
    ChatClient,
    Endpoint,
    Messages,
    RetryPolicy,
    VerdictCache,
    chat_cache_path,
    request_key,
)
from needlec.haystacks.filters.review import file_sha256, load_decisions
from needlec.spec.base import StrictModel
from needlec.util.progress import bar as progress_bar

INSTRUCTION = (
    "You check passages of a long document for text that answers a question. If the passage states "
    "the answer, or says something from which the answer can be worked out, reply with that answer "
    "in a few words. If it does not, reply with exactly N/A. Reply with nothing else."
)
NA = {"n/a", "na", "n.a", "none", "no answer", "not applicable", "unknown", ""}


class FewShotExample(StrictModel):
    """A worked example shown to the model before each real question."""

    passage: str = Field(description="An example passage.")
    question: str = Field(description="The question asked about it.")
    answer: str = Field(description="The reply the model should give: a short answer, or `N/A`.")


EXAMPLES = (
    FewShotExample(
        passage="The orchard behind the mill had been quiet for years. That spring Tomas finally rented "
        "the small flat across the square from the Semper Opera House, and he wrote to his sister that "
        "the music carried over the river every evening. The apples that autumn were small and sour.",
        question="Which character has been to Dresden?",
        answer="Tomas",
    ),
    FewShotExample(
        passage="Rain had settled over the harbour by noon. The fishermen hauled their boats higher onto "
        "the shingle and sat in the net shed, mending what the storm had torn. Nobody mentioned the "
        "lighthouse, and nobody went near the cliff path.",
        question="Which character has been to Dresden?",
        answer="N/A",
    ),
    FewShotExample(
        passage="The old key was never lost. It hung on a nail behind the pantry door, where only the "
        "cook ever thought to look, and she kept that to herself for eleven winters.",
        question="Where is the key to the cellar kept?",
        answer="On a nail behind the pantry door",
    ),
    FewShotExample(
        passage="She counted the sacks of grain twice, then a third time, and wrote the total in the "
        "ledger. Outside, the cart horses stamped in the cold. The price of barley had risen again.",
        question="What is the best thing to do on a rainy afternoon?",
        answer="N/A",
    ),
)


class LlmAnswerCandidatesFilter(EditParams):
    """Ask a chat model, chunk by chunk, whether the haystack answers the spec's questions."""

    operational = frozenset({"concurrency", "timeout", "retries", "backoff", "max_wait", "base_url_env", "api_key_env"})

    type: Literal["llm_answer_candidates"] = Field(description="Selects the LLM answer-candidate filter.")
    model: str | None = Field(
        None,
        description="Model name sent to the server. Part of the cache key; give this or `model_env`.",
        examples=["llama-3.3-70b-instruct"],
    )
    model_env: str | None = Field(
        None,
        description="Environment variable holding the model name, when it is not written in the spec.",
        examples=["NEEDLEC_LLM_MODEL"],
    )
    base_url_env: str = Field(
        "OPENAI_BASE_URL",
        description="Environment variable holding the "
        "server's base URL (an OpenAI-compatible API, e.g. `http://127.0.0.1:8000/v1`).",
    )
    api_key_env: str = Field(
        "OPENAI_API_KEY",
        description="Environment variable holding the API key. "
        "The key itself is never written anywhere; a server without keys needs "
        "the variable unset or set to anything.",
    )
    questions: list[str] = Field(
        default_factory=list,
        description="Questions asked besides those taken from the spec.",
        examples=[["Which character has been to Dresden?"]],
    )
    from_spec: list[str] = Field(
        default_factory=lambda: ["questions"],
        description="Groups of the spec's texts used as questions (see `literal_terms`).",
    )
    chunk_chars: int = Field(1000, ge=100, le=100_000, description="Characters per chunk.")
    stride: int = Field(
        800,
        ge=50,
        le=100_000,
        description="Characters from one chunk's start to the "
        "next; less than `chunk_chars`, so chunks overlap and no sentence is only cut.",
    )
    instruction: str | None = Field(
        None,
        description="System message telling the model what to do; "
        "null: the built-in instruction (answer in a few words, or N/A).",
    )
    examples: list[FewShotExample] = Field(
        default_factory=lambda: list(EXAMPLES),
        description="Worked examples sent before each question (by default two answers and two `N/A`).",
    )
    scope: Literal["answer", "chunk"] = Field(
        "answer",
        description="What a flagged chunk loses: `answer`, the sentences containing the "
        "model's reply (every sentence of the chunk when the reply is not found in it); `chunk`, "
        "every sentence of the chunk.",
    )
    max_rounds: int = Field(
        3,
        ge=1,
        le=20,
        description="Rounds of checking: after the first, only the text around each cut is asked about again.",
    )
    decisions: str | None = Field(
        None,
        description="A review file (`needlec filter --review`), "
        "relative to the spec; its `keep`/`remove` decisions overrule the "
        "model for the chunks they name.",
        examples=["reviews/llm.yaml"],
    )
    max_tokens: int = Field(32, ge=1, le=4096, description="Longest reply, in tokens.")
    temperature: float = Field(0.0, ge=0, le=2, description="Sampling temperature (0: greedy).")
    concurrency: int = Field(4, ge=1, le=256, description="Requests in flight at once.")
    timeout: float = Field(60.0, gt=0, description="Seconds to wait for one reply.")
    retries: int = Field(
        5,
        ge=0,
        le=50,
        description="Extra attempts after a 429, a 5xx, a timeout, a dropped connection or a malformed reply.",
    )
    backoff: float = Field(
        1.0,
        ge=0,
        description="First wait before a retry, in seconds; doubled "
        "each attempt (a 429's Retry-After is used instead when given).",
    )
    max_wait: float = Field(60.0, ge=0, description="Longest wait between two attempts, in seconds.")

    @model_validator(mode="after")
    def _checks(self) -> LlmAnswerCandidatesFilter:
        if (self.model is None) == (self.model_env is None):
            raise ValueError("give exactly one of `model` and `model_env`")
        if self.stride > self.chunk_chars:
            raise ValueError("`stride` must not exceed `chunk_chars`")
        return self


def is_na(answer: str) -> bool:
    text = normalize(answer, False).strip().strip("\"'.`*")
    return text in NA or text.startswith(("n/a", "n.a.")) or text.split(" ", 1)[0] in ("n/a", "n/a.")


def windows(length: int, size: int, stride: int) -> list[tuple[int, int]]:
    out = []
    start = 0
    while start < length:
        out.append((start, min(length, start + size)))
        if start + size >= length:
            break
        start += stride
    return out


def chunk_id(question: str, chunk: str) -> str:
    return hashlib.sha256(f"{question}\0{chunk}".encode()).hexdigest()[:16]


class LlmAnswerCandidates:
    """Chunks that a chat model says answer one of the spec's questions."""

    version = "1"

    def model(self, params: LlmAnswerCandidatesFilter) -> str:
        if params.model is not None:
            return params.model
        assert params.model_env is not None
        value = os.environ.get(params.model_env, "").strip()
        if not value:
            raise FilterError(
                f"llm_answer_candidates: environment variable {params.model_env} (the model name) is not set"
            )
        return value

    def _questions(self, params: LlmAnswerCandidatesFilter, ctx: FilterContext) -> list[str]:
        found = {q for q in params.questions if q.strip()}
        for texts in ctx.terms(params.from_spec).values():
            found.update(texts)
        return sorted(found)

    def key_inputs(self, params: LlmAnswerCandidatesFilter, ctx: FilterContext) -> dict[str, Any]:
        inputs: dict[str, Any] = {"model": self.model(params), "questions": self._questions(params, ctx)}
        if params.decisions:
            inputs["decisions_sha256"] = file_sha256(ctx.resolve(params.decisions))
        return inputs

    def messages(self, params: LlmAnswerCandidatesFilter, passage: str, question: str) -> Messages:
        out = [{"role": "system", "content": params.instruction or INSTRUCTION}]
        for ex in params.examples:
            out.append({"role": "user", "content": f"Passage:\n{ex.passage}\n\nQuestion: {ex.question}"})
            out.append({"role": "assistant", "content": ex.answer})
        out.append({"role": "user", "content": f"Passage:\n{passage}\n\nQuestion: {question}"})
        return out

    def _client(self, params: LlmAnswerCandidatesFilter, ctx: FilterContext) -> ChatClient:
        base_url = os.environ.get(params.base_url_env, "").strip()
        if not base_url:
            raise FilterError(
                f"llm_answer_candidates: environment variable {params.base_url_env} (the "
                "server's base URL) is not set, and some verdicts are not cached yet"
            )
        endpoint = Endpoint(base_url, self.model(params), os.environ.get(params.api_key_env, ""))
        policy = RetryPolicy(params.timeout, params.retries, params.backoff, params.max_wait)
        return ChatClient(endpoint, policy, params.max_tokens, params.temperature, params.concurrency, ctx.log)

    def run(self, params: LlmAnswerCandidatesFilter, documents: Sequence[Document], ctx: FilterContext) -> FilterResult:
        questions = self._questions(params, ctx)
        model = self.model(params)
        cache = VerdictCache(chat_cache_path(ctx.filter_dir("llm"), model))
        decided: dict[str, str] = {}
        if params.decisions:
            for entry in load_decisions(ctx.resolve(params.decisions), "llm_answer_candidates"):
                if "id" in entry:
                    decided[str(entry["id"])] = entry["decision"]
        client: ChatClient | None = None
        texts = {d.id: d.text for d in documents}
        removed: dict[str, list[Removal]] = {d.id: [] for d in documents}
        current = {d.id: EditedText(d.text, []) for d in documents}
        regions = {d.id: windows(len(d.text), params.chunk_chars, params.stride) for d in documents}
        review: list[dict[str, Any]] = []
        counts = {"questions": len(questions), "chunks_asked": 0, "flagged": 0, "overruled": 0, "rounds": 0}
        while questions and any(regions.values()) and counts["rounds"] < params.max_rounds:
            counts["rounds"] += 1
            asks = [(doc, s, e, q) for doc, spans in regions.items() for s, e in spans for q in questions]
            requests = {
                request_key(
                    model, self.messages(params, current[doc].text[s:e], q), params.max_tokens, params.temperature
                ): self.messages(params, current[doc].text[s:e], q)
                for doc, s, e, q in asks
            }
            missing = sum(1 for k in requests if k not in cache)
            ctx.activity.cached_verdicts += len(requests) - missing
            if missing:
                client = client or self._client(params, ctx)
                bar = progress_bar(missing, f"llm round {counts['rounds']}", "ask", enabled=ctx.progress)

                def answered(bar: Any = bar) -> None:
                    ctx.activity.model_calls += 1
                    bar.update(1)

                try:
                    client.ask_all(requests, cache, answered)
                finally:
                    bar.close()
            counts["chunks_asked"] += len(asks)
            new: dict[str, list[Removal]] = {doc: [] for doc in texts}
            sentences: dict[str, list[tuple[int, int]]] = {}  # per document, for this round's text
            for doc, s, e, q in asks:
                chunk = current[doc].text[s:e]
                answer = cache.get(
                    request_key(model, self.messages(params, chunk, q), params.max_tokens, params.temperature)
                )
                assert answer is not None
                cid = chunk_id(q, chunk)
                flagged = not is_na(answer)
                decision = decided.get(cid, "remove" if flagged else None)
                if decision is None:
                    continue
                counts["flagged"] += flagged
                if (decision == "remove") != flagged:
                    counts["overruled"] += 1
                start, end = current[doc].to_original(s), current[doc].to_original(max(s, e - 1)) + 1
                review.append(
                    {
                        "kind": "chunk",
                        "id": cid,
                        "document": doc,
                        "start": start,
                        "end": end,
                        "question": q,
                        "answer": answer,
                        "decision": decision,
                        "chunk": chunk,
                    }
                )
                if decision == "remove":
                    if doc not in sentences:
                        sentences[doc] = sentence_spans(current[doc].text)
                    new[doc].extend(
                        self._spans(
                            params, doc, current[doc], covering(sentences[doc], s, e), (s, e), q, answer, flagged
                        )
                    )
            regions = {}
            for doc, found in new.items():
                known = {(r.start, r.end) for r in removed[doc]}
                fresh = [r for r in found if (r.start, r.end) not in known]
                if not fresh:
                    continue
                before = {(e.start, e.end) for e in plan_edits(texts[doc], list(known), params.action, "")}
                removed[doc].extend(fresh)
                edits = plan_edits(
                    texts[doc], [(r.start, r.end) for r in removed[doc]], params.action, params.redaction
                )
                current[doc] = EditedText(texts[doc], edits)
                seams = [p for p, e in zip(current[doc].seams, edits, strict=True) if (e.start, e.end) not in before]
                half = params.chunk_chars // 2
                spans = [
                    (max(0, p - half), min(len(current[doc].text), max(0, p - half) + params.chunk_chars))
                    for p in seams
                ]
                regions[doc] = [s for s in merge(spans) if s[1] > s[0]]
        removals = sorted(
            {(r.document, r.start, r.end, r.detail["question"]): r for rs in removed.values() for r in rs}.values(),
            key=lambda r: (r.document, r.start),
        )
        return FilterResult(removals=removals, review=review, counts=counts)

    def _spans(
        self,
        params: LlmAnswerCandidatesFilter,
        doc: str,
        text: EditedText,
        spans: list[tuple[int, int]],
        chunk: tuple[int, int],
        question: str,
        answer: str,
        flagged: bool,
    ) -> list[Removal]:
        """Sentences (original coordinates) to take out for one flagged chunk, given the chunk's sentences."""
        s, e = chunk
        why = "decision file" if not flagged else "chunk flagged"
        needle = normalize(answer, False).strip().strip(".")
        if params.scope == "answer" and flagged and len(needle) >= 2:
            hits = [sp for sp in spans if needle in normalize(text.text[sp[0] : sp[1]], False)]
            if hits:
                spans, why = hits, "sentence contains the reply"
            else:
                why = "reply not found in the chunk: whole chunk"
        detail = {"question": question, "answer": answer, "why": why, "chunk": chunk_id(question, text.text[s:e])}
        return [
            Removal(doc, text.to_original(a), text.to_original(b - 1) + 1, "answer_candidate", detail) for a, b in spans
        ]


FILTERS.register("llm_answer_candidates", LlmAnswerCandidatesFilter)(LlmAnswerCandidates)
