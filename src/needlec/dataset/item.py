"""The compiled item: one JSONL row of a dataset, as a typed, versioned model.

Every family (NIAH, NoLiMa, NeedleBench, MLNeedle, RULER) writes the same shape, so scoring and
aggregation read flat keys (`family`, `task`, `languages`, needle roles) without knowing which
generator made the row. Optional fields are left out of the JSON when unset.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

ITEM_SCHEMA_VERSION = 2
SCHEMA_ID = f"https://needlec.dev/schema/item-v{ITEM_SCHEMA_VERSION}.json"


class _Row(BaseModel):
    """Base of every part of an item: unknown keys are errors, so the schema is the whole truth."""

    model_config = ConfigDict(extra="forbid")


class Needle(_Row):
    """A text inserted into the haystack: a target the question asks about, or a distractor."""

    id: str = Field(description="Needle id within the item: `n0`, `n1`, ... for targets, `d0`, ... for distractors.")
    role: Literal["target", "distractor"] = Field(
        description="`target`: the question asks about it; `distractor`: inserted to mislead or to add noise."
    )
    language: str = Field(description="Language of the needle text (ISO 639-1).")
    text: str = Field(description="The inserted text, exactly as it appears in the context.")
    target_depth_percent: float = Field(description="Depth the needle was aimed at, in percent of the context.")
    depth_percent: float = Field(description="Achieved depth: context tokens before the needle / context tokens x 100.")
    token_offset: int = Field(description="Tokens of context before the needle (item's tokenizer).")
    char_offset: int = Field(description="Characters of context before the needle.")


class Languages(_Row):
    """Languages of an item's parts (ISO 639-1 codes; `mul` for a mixed haystack)."""

    needle: str = Field(description="Language of the target needles.")
    haystack: str = Field(description="Language of the haystack (`mul` when mixed).")
    question: str = Field(description="Language of the question.")


class Message(_Row):
    """One chat message a runner sends."""

    role: Literal["system", "user", "assistant"] = Field(description="Chat role.")
    content: str = Field(description="Message text.")


class ContextSpan(_Row):
    """Where the context (haystack plus needles) sits inside the messages."""

    message: int = Field(description="Index of the message holding the context.")
    start: int = Field(description="Character offset of the context's start in that message.")
    end: int = Field(description="Character offset just after the context's end.")


class Scoring(BaseModel):
    """How a runner scores a response: a metric name, its version and its parameters."""

    model_config = ConfigDict(extra="allow")

    metric: str = Field(description="Name of a registered metric, e.g. `contains` or `contains_all`.")
    version: int = Field(description="Version of the metric's definition; a changed definition bumps it.")


class HaystackRef(_Row):
    """The haystack window an item's context was cut from."""

    id: str = Field(description="Haystack id within the config (`h0`, `h1`, ...).")
    sha256: str = Field(description="sha256 of the haystack text.")
    start_char: int = Field(description="Start of the window in the (repeated) haystack text.")
    end_char: int = Field(description="End of the window in the (repeated) haystack text.")
    repeated: bool = Field(description="True when the window runs past the haystack's first copy.")


class Group(_Row):
    """Membership in a group of items judged together (e.g. CircularEval rotations)."""

    id: str = Field(description="Group id, shared by every member.")
    rotation: int = Field(description="This member's rotation (0-based).")
    size: int = Field(description="Members in the group.")


class Option(_Row):
    """One option of a multiple-choice question."""

    letter: str = Field(description="Option letter, e.g. `A`.")
    text: str = Field(description="Option text.")


Fact = Annotated[list[str], Field(min_length=1)]  # accepted aliases of one required fact


class Item(_Row):
    """One compiled benchmark item (item schema version 2)."""

    id: str = Field(description="Unique id: benchmark/config/tokenizer/length/depth/case/haystack/repeat.")
    benchmark: str = Field(description="The spec's `name`.")
    family: str = Field(description="Benchmark family (spec `family`, default the spec name), e.g. `niah`.")
    task: str = Field(description="Task within the family (spec `task`, default the config name), e.g. `s-rt`.")
    config: str = Field(description="Dataset config (variant values joined with `-`, or `default`).")
    tokenizer: str = Field(description="Label of the tokenizer the lengths are exact for.")
    context_length: int = Field(description="Target length in tokens.")
    context_tokens: int = Field(description="Tokens of the context (haystack plus needles).")
    prompt_tokens: int = Field(
        description="Tokens of every message's content; for a tokenizer with a chat template, of the chat it "
        "renders (generation prompt included). With `length_reserve` set, the answer prefix counts too."
    )
    length_counted: Literal["context", "prompt", "needles"] = Field(
        description="What `context_length` counts; `needles`: the context is the needles alone and "
        "`context_length` is the length they achieved."
    )
    length_reserve: Literal["max_new_tokens"] | None = Field(
        default=None,
        description="Set when the spec's length rule reserves the reply's budget (RULER's rule): "
        "`prompt_tokens + max_new_tokens` equals `context_length` (less the spec's buffer).",
    )
    depth_percent: float = Field(description="Grid depth in percent.")
    needles: list[Needle] = Field(
        description="Inserted texts in context order of insertion: targets, then distractors."
    )
    languages: Languages = Field(description="Languages of needle, haystack and question.")
    messages: list[Message] = Field(min_length=1, description="The chat to send.")
    context_span: ContextSpan = Field(description="Where the context sits in the messages.")
    question: str = Field(description="The question asked.")
    answer_prefix: str | None = Field(default=None, description="Text a runner appends after the messages, if any.")
    answers: list[Fact] = Field(
        min_length=1,
        description="Required facts; each is a non-empty list of accepted aliases, e.g. "
        '`[["roasted chestnuts"], ["smoked paprika"]]`.',
    )
    scoring: Scoring = Field(description="The metric, its version and parameters.")
    expected: Literal["yes", "no"] | None = Field(default=None, description="For existence items: the correct verdict.")
    group: Group | None = Field(default=None, description="Group membership (e.g. rotations of one question).")
    options: list[Option] | None = Field(default=None, description="Multiple-choice options.")
    answer_letter: str | None = Field(default=None, description="Letter of the correct option.")
    structure: dict[str, Any] | None = Field(default=None, description="Free-form structure of generated needles.")
    question_position: Literal["after", "before", "both"] | None = Field(
        default=None, description="Where the question sits relative to the context."
    )
    prompt_variant: str | None = Field(default=None, description="Name of the prompt variant used.")
    max_new_tokens: int | None = Field(default=None, description="Suggested generation budget.")
    haystack: HaystackRef = Field(description="The haystack window.")
    case: str = Field(description="Needle-kind case (e.g. a question-needle pair), or `main`.")
    repeat: int = Field(description="Repeat index within the grid cell.")
    seed: int = Field(description="The item's RNG seed (63 bits).")
    overlap: dict[str, float] = Field(description="ROUGE precision of the question against the target needles.")
    values: dict[str, str] | None = Field(default=None, description="Values drawn for this item (e.g. a passkey).")

    def context(self) -> str:
        """The context: the span of the messages that holds the haystack and needles."""
        span = self.context_span
        return self.messages[span.message].content[span.start : span.end]

    def targets(self) -> list[Needle]:
        """The target needles (the ones the question asks about)."""
        return [n for n in self.needles if n.role == "target"]

    def row(self) -> dict[str, Any]:
        """The item as a JSON-ready dict, unset optional fields left out."""
        return self.model_dump(mode="json", exclude_none=True)


def item_json_schema() -> dict[str, Any]:
    """The JSON Schema of one item row (published as `schema/item.schema.json`)."""
    schema = Item.model_json_schema(mode="serialization")
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = SCHEMA_ID
    return schema
