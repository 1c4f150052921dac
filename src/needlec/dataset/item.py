"""The compiled item: one JSONL row of a dataset, as a typed, versioned model.

Every family (NIAH, NoLiMa, NeedleBench, MLNeedle, RULER) writes the same shape, so scoring and
aggregation read flat keys (`family`, `task`, `languages`, needle roles) without knowing which
generator made the row. Optional fields are left out of the JSON when unset.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Annotated, Any, Literal, overload

from pydantic import BaseModel, ConfigDict, Field, GetCoreSchemaHandler, TypeAdapter

if TYPE_CHECKING:
    from pydantic_core import CoreSchema

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


NEEDLE_FIELDS = tuple(Needle.model_fields)
"""A needle record's fields, in the order of `Needle`."""

_ROLES = frozenset(("target", "distractor"))


class NeedleRecords(Sequence[Needle]):
    """An item's needle records (`Item.needles`): a sequence of `Needle`, kept as one column per field where the
    compile made them (`from_columns`). A word list's item has hundreds of needles (CWE's 300), and a record each
    cost more than the rest of the item; the columns serialise to the same rows (`rows`), and the `Needle`
    objects are made when one is first read. Read from a dataset, the records are validated `Needle`s."""

    __slots__ = ("_columns", "_records")

    def __init__(self, records: Sequence[Needle] = ()) -> None:
        made = list(records)
        if not all(isinstance(record, Needle) for record in made):
            raise TypeError("NeedleRecords holds `Needle` records (validate dicts with `Item.model_validate`)")
        self._records: list[Needle] | None = made
        self._columns: tuple[list[Any], ...] | None = None

    @classmethod
    def from_columns(
        cls,
        ids: Sequence[str],
        roles: Sequence[str],
        languages: Sequence[str],
        texts: Sequence[str],
        target_depths: Sequence[float],
        depths: Sequence[float],
        token_offsets: Sequence[int],
        char_offsets: Sequence[int],
    ) -> NeedleRecords:
        """Records from one sequence per field, each value taken as `Needle` validation takes it (depths as
        floats, offsets as integers, a `str` subclass as its text); a string that is not one, or a role other
        than the two, is an error, as it is in validation."""
        columns = (ids, roles, languages, texts, target_depths, depths, token_offsets, char_offsets)
        if len({len(column) for column in columns}) > 1:
            raise ValueError(f"needle columns of different lengths: {[len(column) for column in columns]}")
        if not _ROLES.issuperset(roles):
            raise ValueError(f"needle roles must be `target` or `distractor`, got {sorted(set(roles) - _ROLES)}")
        made = cls.__new__(cls)
        made._records = None
        made._columns = (
            _as(str, ids),
            list(roles),
            _as(str, languages),
            _as(str, texts),
            _as(float, target_depths),
            _as(float, depths),
            _as(int, token_offsets),
            _as(int, char_offsets),
        )
        return made

    def column(self, name: str) -> list[Any]:
        """One field of every record, in order (not a copy where the records are kept as columns: not to be
        changed)."""
        at = NEEDLE_FIELDS.index(name)
        if self._columns is not None:
            return self._columns[at]
        return [getattr(record, name) for record in self._records or ()]

    def rows(self) -> list[dict[str, Any]]:
        """The records as JSON-ready dicts (what `Item.row` writes for them)."""
        if self._columns is None:
            return [record.model_dump(mode="json") for record in self._records or ()]
        return [
            {
                "id": i,
                "role": r,
                "language": lang,
                "text": t,
                "target_depth_percent": aimed,
                "depth_percent": got,
                "token_offset": tokens,
                "char_offset": chars,
            }  # (a dict display: several times faster than a dict of a zip; the keys are `NEEDLE_FIELDS`)
            for i, r, lang, t, aimed, got, tokens, chars in zip(*self._columns, strict=True)
        ]

    def _made(self) -> list[Needle]:
        if self._records is None:
            self._records = _RECORDS.validate_python(self.rows())
        return self._records

    def __len__(self) -> int:
        return len(self._columns[0]) if self._columns is not None else len(self._records or ())

    @overload
    def __getitem__(self, index: int) -> Needle: ...
    @overload
    def __getitem__(self, index: slice) -> list[Needle]: ...
    def __getitem__(self, index: int | slice) -> Needle | list[Needle]:
        return self._made()[index]

    def __iter__(self) -> Iterator[Needle]:
        return iter(self._made())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, NeedleRecords):
            return self.rows() == other.rows()
        if isinstance(other, Sequence) and not isinstance(other, str):
            return list(self._made()) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"NeedleRecords({len(self)} needles)"

    def __reduce__(self) -> tuple[Any, ...]:
        return (_from_rows, (self.rows(),))

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        """Validated as a list of `Needle` (records given as `NeedleRecords` are taken as they are), serialised as
        the list of their rows."""
        from pydantic_core import core_schema

        records = handler.generate_schema(list[Needle])
        listed = core_schema.no_info_after_validator_function(cls, records)
        return core_schema.json_or_python_schema(
            json_schema=listed,
            python_schema=core_schema.union_schema([core_schema.is_instance_schema(cls), listed]),
            serialization=core_schema.wrap_serializer_function_ser_schema(_serialised, info_arg=True, schema=records),
        )


def _as(kind: type, column: Sequence[Any]) -> list[Any]:
    """`column` as a list of values of exactly `kind`: copied where they are (the compile's columns), else
    validated as a `Needle` field of that type is (a `str` subclass becomes its text, an int depth a float, a
    whole float offset an int; what validation refuses raises its `ValidationError`)."""
    if set(map(type, column)) <= {kind}:
        return list(column)
    converted: list[Any] = _COLUMNS[kind].validate_python(list(column))
    return converted


def _serialised(records: Sequence[Needle], handler: Any, info: Any) -> Any:
    """An item's needles as `model_dump` writes them: a `NeedleRecords`' own rows, or (with `include` or `exclude`
    reaching into them, or a plain list of `Needle` set without validation, by `model_copy(update=...)`) as the
    list of records serialises."""
    if isinstance(records, NeedleRecords) and info.include is None and info.exclude is None:
        return records.rows()
    return handler(list(records))


def needle_column(needles: Sequence[Needle], name: str) -> list[Any]:
    """One field of every needle record, in order, for `NeedleRecords` (its column) or any sequence of `Needle`."""
    if isinstance(needles, NeedleRecords):
        return needles.column(name)
    return [getattr(needle, name) for needle in needles]


def _from_rows(rows: list[dict[str, Any]]) -> NeedleRecords:
    return NeedleRecords(_RECORDS.validate_python(rows))


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
    needles: NeedleRecords = Field(
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


_RECORDS = TypeAdapter(list[Needle])
"""Validates needle records at once."""
_COLUMNS: dict[type, TypeAdapter[Any]] = {kind: TypeAdapter(list[kind]) for kind in (str, float, int)}  # type: ignore[valid-type]
"""Validates one column of needle records, where its values are not all of their field's type (`_as`)."""
