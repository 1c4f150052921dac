"""Haystack builders: how source documents become the haystacks items are cut from.

`concat` joins every document into one haystack (Kamradt's essays, a corpus in order).
`snippets` builds several distinct haystacks from continuous snippets of randomly chosen
documents, as NoLiMa does: random concatenation keeps a model from recalling a known book.

A builder kind is a config model (with a `type` tag) registered in `needlec.registry.BUILDERS`
together with a factory that takes the validated config and returns a `HaystackBuilder`.
"""

from __future__ import annotations

import bisect
import hashlib
import random
from pathlib import Path
from typing import Literal, Protocol

from pydantic import Field

from needlec.errors import SourceError
from needlec.haystacks.index import Haystack, boundary_positions
from needlec.haystacks.sources.base import SourceDocument
from needlec.registry import BUILDERS
from needlec.spec.base import StrictModel
from needlec.spec.components import TokenizerConfig
from needlec.tokenizer import Tokenizer, load_tokenizer


class HaystackBuilder(Protocol):
    """What the compiler asks of a haystack builder."""

    def haystack_ids(self) -> list[str]:
        """Ids of the haystacks it will build, known without building them."""
        ...

    def build(self, documents: list[SourceDocument], joiner: str, seed: int, spec_dir: Path) -> list[Haystack]:
        """The haystacks, from the (filtered) documents of every source, in order."""
        ...


class ConcatBuilder(StrictModel):
    """One haystack: all documents of all sources, in order, joined by `haystack.joiner`."""

    type: Literal["concat"] = Field(description="Selects the concatenating builder.")


class SnippetBuilder(StrictModel):
    """Several haystacks, each a random sequence of continuous snippets from the documents."""

    type: Literal["snippets"] = Field(description="Selects the snippet builder.")
    count: int = Field(5, ge=1, le=100, description="Number of distinct haystacks.")
    snippet_tokens: int = Field(
        250, ge=16, description="Each snippet stays under this many tokens; snippets are whole sentences."
    )
    target_tokens: int = Field(
        gt=0,
        description="Each haystack grows until it has at least this "
        "many tokens (set it above the largest context length, or the "
        "haystack is repeated).",
        examples=[40000],
    )
    tokenizer: TokenizerConfig = Field(
        "cl100k_base", validate_default=True, description="Tokenizer that measures snippets and haystacks."
    )
    min_document_tokens: int = Field(
        0, ge=0, description="Only draw from documents with at least this many tokens (approximated as characters / 4)."
    )


class ConcatHaystacks:
    """`concat`: one haystack `h0` of every document joined in order."""

    def __init__(self, config: ConcatBuilder) -> None:
        self.config = config

    def haystack_ids(self) -> list[str]:
        return ["h0"]

    def build(self, documents: list[SourceDocument], joiner: str, seed: int, spec_dir: Path) -> list[Haystack]:
        return build_concat(documents, joiner)


class SnippetHaystacks:
    """`snippets`: `count` haystacks of random continuous snippets, measured by the builder's tokenizer."""

    def __init__(self, config: SnippetBuilder) -> None:
        self.config = config

    def haystack_ids(self) -> list[str]:
        return [f"h{i}" for i in range(self.config.count)]

    def build(self, documents: list[SourceDocument], joiner: str, seed: int, spec_dir: Path) -> list[Haystack]:
        measure = load_tokenizer(self.config.tokenizer, spec_dir)
        return build_snippets(documents, joiner, self.config, measure, seed)


BUILDERS.register("concat", ConcatBuilder)(ConcatHaystacks)
BUILDERS.register("snippets", SnippetBuilder)(SnippetHaystacks)


def haystack_builder(config: StrictModel) -> HaystackBuilder:
    """The builder a validated `haystack.builder` config selects (by its `type` tag)."""
    kind: str = config.type  # type: ignore[attr-defined]  # every builder model has a `type` tag
    builder: HaystackBuilder = BUILDERS.get(kind).factory(config)
    return builder


def build_concat(documents: list[SourceDocument], joiner: str) -> list[Haystack]:
    return [Haystack("h0", joiner.join(d.text for d in documents if d.text))]


def build_snippets(
    documents: list[SourceDocument], joiner: str, config: SnippetBuilder, tokenizer: Tokenizer, seed: int
) -> list[Haystack]:
    """`count` haystacks of snippets; haystack i depends only on the seed, i and the documents."""
    books = [d for d in documents if len(d.text) // 4 >= config.min_document_tokens and d.text.strip()]
    if not books:
        raise SourceError(
            f"haystack.builder: no document has at least {config.min_document_tokens} tokens "
            "(`min_document_tokens`); lower it or add longer documents"
        )
    starts = {d.id: [*boundary_positions(d.text, "sentence"), len(d.text)] for d in books}
    haystacks = []
    for i in range(config.count):
        digest = hashlib.sha256(f"{seed}|snippets|{i}".encode()).digest()
        rng = random.Random(int.from_bytes(digest[:8], "big"))
        pieces: list[str] = []
        total = 0
        while total < config.target_tokens:
            book = rng.choice(books)
            bounds = starts[book.id]
            first = rng.randrange(max(1, len(bounds) - 1))
            snippet, tokens = _snippet(book.text, bounds, first, config.snippet_tokens, tokenizer)
            if not snippet:
                continue
            pieces.append(snippet)
            total += tokens
        haystacks.append(Haystack(f"h{i}", joiner.join(pieces)))
    return haystacks


def _snippet(text: str, bounds: list[int], first: int, limit: int, tokenizer: Tokenizer) -> tuple[str, int]:
    """Whole sentences from bounds[first] on, as many as fit under `limit` tokens (at least one
    sentence, cut at the limit when a single sentence is longer)."""
    start = bounds[first]
    # grow an estimate in characters, then shrink to whole sentences under the limit
    guess = bisect.bisect_right(bounds, start + limit * 4) - 1
    end_index = max(first + 1, guess)
    while end_index > first + 1:
        piece = text[start : bounds[end_index]].strip()
        count = tokenizer.count_pieces(piece)
        if count < limit:
            return piece, count
        end_index -= 1
    piece = text[start : bounds[first + 1]].strip()
    count = tokenizer.count_pieces(piece)
    if count >= limit:
        cut = tokenizer.token_starts(piece)[limit - 1]
        piece = piece[: int(cut)].rstrip()
        count = tokenizer.count_pieces(piece)
    return piece, count
