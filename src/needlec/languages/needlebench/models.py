"""Typed, validated shapes of the NeedleBench data files (retrieval records and reasoning chains).

Each model checks what a single record can check on its own (the needle names its subject and keyword, the question
names the subject but not the keyword, a chain's facts link up into a path); rules over a whole file (pairwise-unique
keywords, no keyword inside another) are checked when drawing and by the tests.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from needlec.errors import NeedlecError

Language = Literal["en", "zh"]
BLANK = "____"
"""The placeholder in an answer-format sentence where the answer goes."""


class NeedleDataError(NeedlecError):
    """The packaged NeedleBench data is damaged, or a request cannot be met from it (e.g. too many needles)."""


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class RetrievalRecord(_Frozen):
    """One fictional fact for S-RT/M-RT: a subject (arg1), its keyword answer (arg2), and the sentences around it."""

    id: str = Field(description="Stable record id, e.g. `nb-rt-en-007`; recorded in every item that uses it.")
    category: str = Field(description="Which kind of fact this is (e.g. `island-relic`), for stratified analysis.")
    subject: str = Field(min_length=1, description="The entity the question asks about (arg1).")
    keyword: str = Field(min_length=1, description="The answer the needle states (arg2).")
    aliases: tuple[str, ...] = Field(description="Other spellings of the keyword that also count as correct.")
    needle: str = Field(min_length=1, description="The sentence hidden in the haystack; names subject and keyword.")
    question: str = Field(min_length=1, description="The question about the subject; never contains the keyword.")
    answer_format: str = Field(description="A sentence with one blank `____` where the answer goes.")

    @model_validator(mode="after")
    def _consistent(self) -> RetrievalRecord:
        if self.subject.casefold() not in self.needle.casefold():
            raise ValueError(f"{self.id}: needle does not name the subject")
        if self.keyword not in self.needle:
            raise ValueError(f"{self.id}: needle does not contain the keyword")
        if self.subject.casefold() not in self.question.casefold():
            raise ValueError(f"{self.id}: question does not name the subject")
        if self.keyword.casefold() in self.question.casefold():
            raise ValueError(f"{self.id}: question gives the keyword away")
        if self.answer_format.count(BLANK) != 1 or self.keyword.casefold() in self.answer_format.casefold():
            raise ValueError(f"{self.id}: answer format needs exactly one blank and no keyword")
        if self.keyword in self.aliases or len(set(self.aliases)) != len(self.aliases):
            raise ValueError(f"{self.id}: aliases must differ from the keyword and from each other")
        return self

    @property
    def answers(self) -> tuple[str, ...]:
        """The keyword followed by its aliases: one required fact with its accepted spellings."""
        return (self.keyword, *self.aliases)


class Fact(_Frozen):
    """One bridge fact of a reasoning chain: its sentence and the (subject, relation, object) triple it states."""

    text: str = Field(min_length=1, description="The needle sentence inserted into the haystack.")
    subject: str = Field(min_length=1, description="The entity the fact starts from.")
    relation: str = Field(min_length=1, description="Machine-readable relation name, e.g. `born_in`.")
    object: str = Field(min_length=1, description="The entity the fact leads to.")

    @model_validator(mode="after")
    def _names_both(self) -> Fact:
        if self.subject not in self.text or self.object not in self.text:
            raise ValueError(f"fact {self.text!r} must name its subject and object")
        return self


class ReasoningChain(_Frozen):
    """A fictional multi-hop question for M-RS: the facts must be combined, in path order, to reach the answer."""

    id: str = Field(description="Stable chain id, e.g. `nb-rs-zh-3-07`.")
    steps: int = Field(ge=2, le=5, description="Number of facts (hops) between the question's entity and the answer.")
    facts: tuple[Fact, ...] = Field(
        description="The bridge facts in derivation order (fact i links path[i]->path[i+1])."
    )
    question: str = Field(min_length=1, description="Names the first entity only; describes each hop by its relation.")
    answer_format: str = Field(description="A sentence with one blank `____` where the answer goes.")
    question_entity: str = Field(min_length=1, description="The entity named in the question (path[0]).")
    answer: str = Field(min_length=1, description="The entity reached by the last hop (path[-1]).")
    aliases: tuple[str, ...] = Field(description="Other spellings of the answer that also count as correct.")
    path: tuple[str, ...] = Field(description="The hop path from the question's entity to the answer.")

    @model_validator(mode="after")
    def _linked(self) -> ReasoningChain:
        if len(self.facts) != self.steps or len(self.path) != self.steps + 1:
            raise ValueError(f"{self.id}: {self.steps} steps need {self.steps} facts and {self.steps + 1} path entries")
        if len(set(self.path)) != len(self.path):
            raise ValueError(f"{self.id}: the path visits an entity twice")
        for i, fact in enumerate(self.facts):
            if (fact.subject, fact.object) != (self.path[i], self.path[i + 1]):
                raise ValueError(f"{self.id}: fact {i} does not link path[{i}] to path[{i + 1}]")
        if (self.question_entity, self.answer) != (self.path[0], self.path[-1]):
            raise ValueError(f"{self.id}: question entity and answer must be the ends of the path")
        if self.question_entity not in self.question or any(e in self.question for e in self.path[1:]):
            raise ValueError(f"{self.id}: the question must name its entity and no other entity of the path")
        for i, fact in enumerate(self.facts):
            if (self.question_entity in fact.text) != (i == 0) or (self.answer in fact.text) != (i == self.steps - 1):
                raise ValueError(
                    f"{self.id}: the question's entity may occur only in the first fact, the answer only in the last"
                )
        if self.answer_format.count(BLANK) != 1:
            raise ValueError(f"{self.id}: answer format needs exactly one blank")
        return self

    @property
    def answers(self) -> tuple[str, ...]:
        """The answer followed by its aliases."""
        return (self.answer, *self.aliases)


class RetrievalFile(_Frozen):
    """The contents of `retrieval_<lang>.json`."""

    language: Language
    version: int
    records: tuple[RetrievalRecord, ...]


class ChainFile(_Frozen):
    """The contents of `chains_<lang>.json`."""

    language: Language
    version: int
    chains: tuple[ReasoningChain, ...]


class Manifest(_Frozen):
    """`manifest.json`: the sha256 of every data file, so that an edited or truncated file is refused."""

    version: int
    files: dict[str, str]
