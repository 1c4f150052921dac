"""Haystack builders of the RULER family: repeated noise sentences, needle filler and word lists.

These builders make their text from needlec's frozen word lists and the spec seed; they ignore the
spec's sources (give any small source, e.g. a builtin corpus, to satisfy the spec's shape).

- `repeat`: the shipped noise sentences, cycled `cycles` times (RULER's "noise" haystack).
- `needle_filler`: `count` key-value sentences with fresh keys and values (RULER's "needle"
  haystack); the `ruler` kind excludes every token of it from its own draws, so a queried key or
  value never occurs in the filler.
- `ruler_words`: a word list, one word per line. Mode `cwe`: rounds of the non-reserved CWE words,
  each word `freq` times inside its round; mode `fwe`: rounds of `vocabulary` coded words, every
  coded line followed by a line holding the noise token. Any window holds a word at most
  `freq` x (rounds it spans) times, so the kind's inserted words stay the most frequent.
- `ruler_documents`: `count` short fictional documents about invented people and organisations
  (`needlec.kinds.ruler.qa_corpus`), one paragraph each, separated by blank lines: the distractor
  documents of the QA and RAG-chunk tasks. Items over it take whole documents, numbered, with the
  gold document(s) at a grid-controlled index (`needlec.compile.documents`).
"""

from __future__ import annotations

import hashlib
import random
from pathlib import Path
from typing import ClassVar, Literal

from pydantic import Field

from needlec.haystacks.index import Haystack
from needlec.haystacks.sources.base import SourceDocument
from needlec.kinds.ruler.common import DistinctPool
from needlec.kinds.ruler.keyvalue import KeyValueSpec, TokenKind, generate_keyvalue
from needlec.kinds.ruler.kind import coded_word, haystack_cwe_words
from needlec.kinds.ruler.qa_corpus import filler_documents
from needlec.languages.wordlists import cwe_words, noise_sentences
from needlec.registry import BUILDERS
from needlec.spec.base import StrictModel


def _rng(seed: int, name: str) -> random.Random:
    digest = hashlib.sha256(f"{seed}|{name}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


class RepeatBuilder(StrictModel):
    """One haystack: the shipped noise sentences, cycled."""

    reads_sources: ClassVar[bool] = False  # its text is generated: the spec's sources are not read

    type: Literal["repeat"] = Field(description="Selects the repeated noise sentences (RULER's noise haystack).")
    cycles: int = Field(
        6000,
        ge=1,
        le=1_000_000,
        description="Times the sentences are repeated; the compile repeats the haystack again if a length needs more.",
    )


class NeedleFillerBuilder(StrictModel):
    """One haystack of key-value sentences with fresh keys and values (RULER's needle haystack)."""

    reads_sources: ClassVar[bool] = False  # its text is generated: the spec's sources are not read

    type: Literal["needle_filler"] = Field(description="Selects the needle-filler haystack.")
    count: int = Field(12000, ge=1, le=1_000_000, description="Filler sentences.")
    key_kind: TokenKind = Field("words", description="Keys: `words`, `numbers` or `uuids`.")
    value_kind: TokenKind = Field("numbers", description="Values: `words`, `numbers` or `uuids`.")


class RulerWordsBuilder(StrictModel):
    """One haystack: a word list, one word per line, for RULER's CWE or FWE."""

    reads_sources: ClassVar[bool] = False  # its text is generated: the spec's sources are not read

    type: Literal["ruler_words"] = Field(description="Selects the word-list haystack of CWE and FWE.")
    mode: Literal["cwe", "fwe"] = Field(description="`cwe`: real and pseudo words; `fwe`: coded words and noise.")
    freq: int = Field(3, ge=1, le=20, description="Times each word occurs in one round.")
    rounds: int = Field(4, ge=1, le=100, description="Rounds of the vocabulary, each shuffled anew.")
    vocabulary: int = Field(5000, ge=10, le=100_000, description="FWE: coded words in the vocabulary.")


class RulerDocumentsBuilder(StrictModel):
    """One haystack of short fictional documents, the distractors of RULER's QA and RAG-chunk tasks."""

    reads_sources: ClassVar[bool] = False  # its text is generated: the spec's sources are not read

    layout: ClassVar[str] = "documents"  # items over these haystacks use the `documents` layout

    type: Literal["ruler_documents"] = Field(
        description="Selects the fictional-documents haystack of the QA 1 / QA 2 and RAG-chunk tasks."
    )
    count: int = Field(
        4000,
        ge=10,
        le=200_000,
        description="Documents in the haystack (about 70 tokens each); the default holds 128K-token items "
        "from any start without repeating a document.",
    )
    filler: str = Field(
        " .",
        min_length=1,
        description="Declared padding after the last whole document, repeated until the item has exactly its "
        "token length; items record its token count in `structure.documents.filler_tokens`.",
    )


class RepeatHaystacks:
    """`repeat`: haystack `h0`, the noise sentences cycled."""

    def __init__(self, config: RepeatBuilder) -> None:
        self.config = config

    def haystack_ids(self) -> list[str]:
        return ["h0"]

    def build(self, documents: list[SourceDocument], joiner: str, seed: int, spec_dir: Path) -> list[Haystack]:
        cycle = " ".join(noise_sentences())
        return [Haystack("h0", " ".join([cycle] * self.config.cycles))]


class NeedleFillerHaystacks:
    """`needle_filler`: haystack `h0`, key-value sentences drawn from the seed."""

    def __init__(self, config: NeedleFillerBuilder) -> None:
        self.config = config

    def haystack_ids(self) -> list[str]:
        return ["h0"]

    def build(self, documents: list[SourceDocument], joiner: str, seed: int, spec_dir: Path) -> list[Haystack]:
        c = self.config
        spec = KeyValueSpec(key_kind=c.key_kind, value_kind=c.value_kind, num_keys=1, num_values=1, num_queries=1)
        item = generate_keyvalue(_rng(seed, "needle_filler"), spec, num_filler=c.count)
        return [Haystack("h0", " ".join(n.text for n in item.filler))]


class RulerWordsHaystacks:
    """`ruler_words`: haystack `h0`, a word list for CWE or FWE."""

    def __init__(self, config: RulerWordsBuilder) -> None:
        self.config = config

    def haystack_ids(self) -> list[str]:
        return ["h0"]

    def build(self, documents: list[SourceDocument], joiner: str, seed: int, spec_dir: Path) -> list[Haystack]:
        c = self.config
        rng = _rng(seed, f"ruler_words|{c.mode}")
        if c.mode == "cwe":
            vocab = list(haystack_cwe_words())
        else:
            pool = DistinctPool(rng, cwe_words())
            vocab = [pool.draw(coded_word, "coded word") for _ in range(c.vocabulary)]
        lines: list[str] = []
        for _ in range(c.rounds):
            words = [word for word in vocab for _ in range(c.freq)]
            rng.shuffle(words)
            for word in words:
                lines.append(word)
                if c.mode == "fwe":
                    lines.append("...")
        return [Haystack("h0", "\n".join(lines))]


class RulerDocumentsHaystacks:
    """`ruler_documents`: haystack `h0`, fictional documents separated by blank lines."""

    def __init__(self, config: RulerDocumentsBuilder) -> None:
        self.config = config

    def haystack_ids(self) -> list[str]:
        return ["h0"]

    def build(self, documents: list[SourceDocument], joiner: str, seed: int, spec_dir: Path) -> list[Haystack]:
        docs = filler_documents(_rng(seed, "ruler_documents"), self.config.count)
        return [Haystack("h0", "\n\n".join(docs))]


BUILDERS.register("repeat", RepeatBuilder)(RepeatHaystacks)
BUILDERS.register("needle_filler", NeedleFillerBuilder)(NeedleFillerHaystacks)
BUILDERS.register("ruler_words", RulerWordsBuilder)(RulerWordsHaystacks)
BUILDERS.register("ruler_documents", RulerDocumentsBuilder)(RulerDocumentsHaystacks)
