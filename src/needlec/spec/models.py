"""The spec language: the raw shape of a benchmark spec as authors write it.

Every mapping is strict (unknown keys are errors, with a "did you mean"). Component mappings
(`sources`, `needle`, `scoring`, `tokenizers`) are chosen by their `type:` (or `metric:`) key
and validated by the model that kind registered.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, StrictBool, model_validator

from needlec.spec.base import KeyedValueError, StrictModel
from needlec.spec.components import BuilderConfig, MetricConfig, NeedleConfig, SourceConfig, TokenizerConfig
from needlec.spec.grid import Grid
from needlec.spec.reports import ReportsSpec

SLUG = r"^[a-z0-9][a-z0-9_-]{0,63}$"  # at most 64 characters: it names folders and files


class Budget(StrictModel):
    """An upper bound on one overlap statistic; the compile fails listing every item above it."""

    metric: Literal["rouge1_precision", "rouge2_precision", "rougeL_precision"] = Field(
        description="Which ROUGE precision of the question is bounded."
    )
    max: float = Field(ge=0, le=1, description="Largest allowed value (0..1).")
    against: Literal["needle", "context"] = Field(
        "needle",
        description="`needle`: the question against the needle text (the evidence, as "
        "the NoLiMa paper measures it); `context`: against the whole context (haystack plus "
        "needles; common words make this high for any natural haystack).",
    )
    stem: StrictBool = Field(
        False,
        description="Bound the stemmed figure: both sides pass through the Porter stemmer first (as "
        '`rouge-score`\'s `use_stemmer`), so "eats" in the needle matches "eating" in the question.',
    )


class HaystackSpec(StrictModel):
    """Where haystack text comes from and how documents are joined into one haystack."""

    sources: list[SourceConfig] = Field(
        min_length=1,
        description="Haystack sources, concatenated in order. Each is a mapping "
        "with a `type`: `builtin`, `files` or `url`.",
        examples=[[{"type": "builtin", "corpus": "web-bible"}]],
    )
    joiner: str = Field(
        "\n\n",
        description="Text placed between documents, and between copies when a haystack is repeated to reach a length.",
    )
    start: Literal["beginning", "random"] = Field(
        "beginning",
        description="Where each item's window starts: at the `beginning` of the "
        "haystack, or at a `random` sentence start (seeded per item).",
    )
    builder: BuilderConfig = Field(
        default_factory=lambda: {"type": "concat"},
        validate_default=True,
        description="How documents become haystacks: `concat` (one haystack of everything, the "
        "default) or `snippets` (several haystacks of random continuous snippets).",
        examples=[{"type": "snippets", "count": 5, "snippet_tokens": 250, "target_tokens": 40000}],
    )


class StepDepths(StrictModel):
    """Each needle a fixed step deeper than the one before (NeedleBench's reasoning needles)."""

    step: float = Field(
        gt=0,
        le=100,
        description="Percentage points between consecutive needles: needle i sits at d + i*step (capped at "
        "100), where d is the grid depth.",
        examples=[10],
    )


class RandomDepthsRule(StrictModel):
    """Where random depths may fall and how close two may be."""

    low: float = Field(0, ge=0, le=100, description="Smallest depth in percent.")
    high: float = Field(100, ge=0, le=100, description="Largest depth in percent.")
    min_gap: float = Field(
        0,
        ge=0,
        le=100,
        description="Smallest distance in percentage points between any two needles (targets and distractors).",
    )

    @model_validator(mode="after")
    def _feasible(self) -> RandomDepthsRule:
        if self.high < self.low:
            raise KeyedValueError(f"high ({self.high}) is below low ({self.low})", "high")
        return self


class RandomDepths(StrictModel):
    """Every needle, distractors included, at its own random depth drawn from the item's RNG."""

    random: RandomDepthsRule = Field(
        description="Range and minimum gap of the depths; the grid depth is ignored (use `depths: [0]`).",
        examples=[{"min_gap": 5}],
    )


class PlacementSpec(StrictModel):
    """How needles are positioned: the boundary they snap to and how several needles spread."""

    snap: Literal["sentence", "line", "paragraph", "none"] = Field(
        "sentence",
        description="Boundary a needle is inserted at: the nearest `sentence`, "
        "`line` or `paragraph` start to the target depth, or `none` (the exact token position, "
        "which may split a word).",
    )
    window: Literal["start", "needle"] = Field(
        "start",
        description="How the haystack window is chosen: `start` opens it at the drawn haystack start and "
        "snaps each needle to the boundary nearest its depth (at short lengths one sentence can be several "
        "points of depth); `needle` moves the start forward by less than one sentence (line, paragraph) so "
        "that a boundary sits at the first needle's target depth by the haystack's token count; the needle "
        "then lands within a few tokens of it (where it joins the text, and the window's first token).",
    )
    edges: Literal["token", "boundary"] = Field(
        "token",
        description="Where the haystack window ends: `token` cuts it at the token that makes the length "
        "exact (the last sentence may be cut, as in Kamradt's test); `boundary` opens and ends it on `snap` "
        "boundaries (whole sentences, lines or paragraphs, never inside a word), trying window starts "
        "after the drawn one until a whole-sentence window has exactly the length; needles at depth 100 "
        "end their context themselves.",
    )
    joiner: str | None = Field(
        None,
        description="Text inserted after each needle to separate "
        "it from the haystack. Default: a space for `sentence`, a newline "
        "for `line`, a blank line for `paragraph`, nothing for `none`.",
    )
    multi: (
        Literal["spread"]
        | Annotated[list[Annotated[float, Field(ge=0, le=100)]], Field(min_length=1)]
        | StepDepths
        | RandomDepths
    ) = Field(
        "spread",
        description="With several needles: `spread` puts needle i of n at "
        "d + i*(100-d)/n, where d is the grid depth (Kamradt's rule); a list gives each needle "
        "a fixed depth in percent and replaces the grid's depths; `{step: s}` puts needle i at d + i*s "
        "(capped at 100); `{random: {low, high, min_gap}}` draws every needle's depth, distractors "
        "included, at random with a minimum gap.",
        examples=["spread", [10, 50, 90], {"step": 10}, {"random": {"min_gap": 5}}],
    )
    depth_tolerance: float = Field(
        5.0,
        ge=0,
        le=100,
        description="Largest allowed distance, in percentage points, between "
        "a needle's target and achieved depth (snapping moves needles). The compile fails if an "
        "item exceeds it.",
    )

    def joiner_text(self) -> str:
        if self.joiner is not None:
            return self.joiner
        return {"sentence": " ", "line": "\n", "paragraph": "\n\n", "none": ""}[self.snap]


class PromptSpec(StrictModel):
    """The chat a runner sends, as Jinja2 templates rendered in a sandbox."""

    system: str | None = Field(
        None, description="System message template; omitted when null.", examples=["You are a careful reader."]
    )
    user: str = Field(
        description="User message template. Must contain `{{ context }}` exactly "
        "once; `{{ question }}` before or after it sets where the question sits.",
        examples=["{{ context }}\n\nQuestion: {{ question }}"],
    )
    vars: dict[str, str] = Field(default_factory=dict, description="Extra constants for the templates.")
    answer_prefix: str | None = Field(
        None,
        description="Template of the text a runner appends after the messages (e.g. the start of the "
        "assistant's answer, for completion models or prefill); written into every item's `answer_prefix`.",
        examples=["The special magic number is"],
    )
    max_new_tokens: int | None = Field(
        None,
        ge=1,
        description="Generation budget written into every item's `max_new_tokens` (a needle kind may set "
        "its own per item).",
        examples=[128],
    )


class LengthSpec(StrictModel):
    """The length contract: what is counted and how exact it must be."""

    counted: Literal["context", "prompt", "needles"] = Field(
        "context",
        description="`context`: haystack plus needles; `prompt`: every message's content in full or, for a "
        "tokenizer with a chat template, the whole chat that template renders (its special tokens and the "
        "generation prompt included); `needles`: the "
        "context is the needles alone, in the kind's order, joined by the placement joiner, with no "
        "haystack text and no length target (the achieved length is recorded; the grid's single length "
        "is only a label in item ids).",
    )
    tolerance: int = Field(
        0, ge=0, description="Allowed distance in tokens between target and achieved length (0 = exact)."
    )
    buffer: int = Field(
        0,
        ge=0,
        description="Tokens kept free of the counted text for what a runner adds around it (the chat "
        "template's own tokens, the reply): the context (or, with `counted: prompt`, the whole prompt) "
        "is cut to the grid length minus this, while items keep the grid length as `context_length`, so "
        'a "128K" item fits a 128,000-token window. Kamradt\'s test cut every context 200 tokens short '
        "of its length. Not allowed with `counted: needles`.",
        examples=[200],
    )
    reserve: Literal["max_new_tokens"] | None = Field(
        None,
        description="`max_new_tokens`: RULER's length rule. The prompt is cut so that its tokens plus the "
        "item's `max_new_tokens` (the reply's budget) equal the grid length minus `buffer`, exactly for "
        "each tokenizer (with its chat template where it has one); the answer prefix, which the runner sends "
        "as the start of the reply, counts as prompt. Items record `length_reserve`. Needs "
        "`counted: prompt` and a `max_new_tokens` (from `prompt` or the needle kind). Null: the length "
        "counts the prompt or context alone.",
        examples=["max_new_tokens"],
    )

    @model_validator(mode="after")
    def _buffer(self) -> LengthSpec:
        if self.buffer and self.counted == "needles":
            raise KeyedValueError(
                "`buffer` has no meaning when `counted` is `needles` (there is no length target)", "buffer"
            )
        if self.reserve is not None and self.counted != "prompt":
            raise KeyedValueError(
                "`reserve` keeps the reply's tokens free of the whole prompt: it needs `counted: prompt`", "reserve"
            )
        return self


class ItemLanguages(StrictModel):
    """Languages of an item's parts, when they differ from the spec's first language."""

    needle: str | None = Field(None, description="Language of the needles (ISO 639-1).", examples=["zh"])
    haystack: str | None = Field(
        None, description="Language of the haystack (ISO 639-1; `mul` for a mixed haystack).", examples=["en"]
    )
    question: str | None = Field(None, description="Language of the question (ISO 639-1).", examples=["zh"])


class Spec(StrictModel):
    """A benchmark spec: metadata, tokenizers, haystack, grid, needles, prompt and scoring."""

    spec_version: Literal[1] = Field(1, description="Version of the spec language.")
    extends: str | None = Field(
        None,
        description="Path of a spec this one builds on; its keys "
        "are merged under this file's (mappings merge, other values are "
        "replaced).",
        examples=["niah.yaml"],
    )
    name: str = Field(
        pattern=SLUG,
        description="Short identifier used in item ids and the manifest (lowercase letters, digits, `-`, `_`).",
        examples=["niah"],
    )
    title: str = Field(description="Human-readable title.", examples=["Needle in a Haystack"])
    family: str | None = Field(
        None,
        pattern=SLUG,
        description="Benchmark family written into every item's `family` (e.g. `niah`, `nolima`, `ruler`), "
        "so results of several specs aggregate by family. Default: the spec's `name`.",
        examples=["niah"],
    )
    task: str | None = Field(
        None,
        description="Task name written into every item's `task` (e.g. `s-rt`); set it per config under "
        "`variants`. Default: the config name.",
        examples=["s-rt"],
    )
    description: str = Field("", description="What the benchmark measures (Markdown).")
    license: str = Field("CC-BY-4.0", description="License of the compiled dataset (SPDX id).")
    citation: str = Field("", description="BibTeX or plain citation of the method.")
    languages: list[str] = Field(
        default_factory=lambda: ["en"], description="Languages of the items (ISO 639-1), for the dataset card."
    )
    item_languages: ItemLanguages | None = Field(
        None,
        description="Languages written into every item's `languages` (needle, haystack, question); a part "
        "left out takes the first entry of `languages`. Set it per config for cross-lingual variants.",
        examples=[{"needle": "zh", "haystack": "en", "question": "zh"}],
    )
    seed: int = Field(
        0,
        description="Root seed; every item's RNG derives from it and the item's "
        "key, so items never depend on each other.",
    )
    tokenizers: list[TokenizerConfig] = Field(
        default_factory=lambda: ["cl100k_base"],
        min_length=1,
        validate_default=True,
        description="Tokenizers to count lengths with; each gets its own items, exact to its own "
        "count. A bare name means a tiktoken encoding.",
        examples=[["cl100k_base", "o200k_base"], [{"type": "hf", "path": "tok.json", "name": "mytok"}]],
    )
    haystack: HaystackSpec = Field(description="Haystack sources and assembly.")
    grid: Grid = Field(description="Lengths, depths and repeats.")
    needle: NeedleConfig = Field(description="What is hidden and asked; a mapping with a `type` (default `template`).")
    placement: PlacementSpec = Field(
        default_factory=PlacementSpec,  # type: ignore[arg-type]
        description="Needle positioning.",
    )
    prompt: PromptSpec = Field(description="Chat messages.")
    length: LengthSpec = Field(
        default_factory=LengthSpec,  # type: ignore[arg-type]
        description="Length contract.",
    )
    overlap_budgets: list[Budget] = Field(
        default_factory=list,
        description="Upper bounds on the question's lexical overlap (ROUGE "
        "precision); the compile fails and lists every item above a bound.",
        examples=[[{"metric": "rouge1_precision", "max": 0.1, "against": "needle"}]],
    )
    scoring: MetricConfig = Field(
        description="How a response is scored: any registered metric, by its `metric:` name "
        "(see the scoring page of the docs).",
        examples=[{"metric": "contains"}, {"metric": "final_answer", "then": {"metric": "contains"}}],
    )
    reports: ReportsSpec | None = Field(
        None,
        description="What `needlec score` reports for this benchmark: the aggregates shown, the headline "
        "effective-length rule and threshold, and the baseline of relative rules. Null: every aggregate that "
        "applies, no baseline. Recorded per config in the manifest.",
        examples=[{"show": ["heatmap", "by_length", "effective_length"], "effective_length": {"rule": "ruler"}}],
    )
    variants: dict[str, dict[str, dict[str, Any]]] = Field(
        default_factory=dict,
        description="Named axes of overrides: `{axis: {value: {key: "
        "override}}}`. The cartesian product of all axes' values becomes the dataset's configs "
        "(named by the values joined with `-`). Configs are paired: the same grid cell draws the same "
        "values and window start in every config, so configs differing only in wording compare cleanly. "
        "The reserved key `redraw: true` inside a value's overrides makes that config draw afresh.",
        examples=[{"needle_count": {"single": {}, "multi": {"needle": {"needles": ["A.", "B."]}}}}],
    )

    @model_validator(mode="after")
    def _consistent(self) -> Spec:
        labels = [t.label for t in self.tokenizers]
        for i, label in enumerate(labels):
            if label in labels[:i]:
                raise KeyedValueError(
                    f"tokenizer name {label!r} is used twice; names must be distinct", "tokenizers", i
                )
        if self.length.counted == "needles" and len(self.grid.length_points()) != 1:
            raise KeyedValueError(
                "`length.counted: needles` builds contexts from the needles alone, so `grid.lengths` must "
                "hold exactly one value (a label)",
                "grid",
                "lengths",
            )
        if self.length.buffer and self.length.buffer >= min(self.grid.length_points()):
            raise KeyedValueError(
                f"`buffer` ({self.length.buffer}) must be smaller than every grid length "
                f"(the smallest is {min(self.grid.length_points())})",
                "length",
                "buffer",
            )
        for axis, values in self.variants.items():
            if not values:
                raise KeyedValueError(f"variant axis {axis!r} has no values", "variants", axis)
        return self


def json_schema() -> dict[str, Any]:
    """The JSON Schema of the spec language, for editors and `needlec schema`."""
    schema = Spec.model_json_schema(mode="validation")
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = "https://needlec.dev/schema/spec-v1.json"
    return schema
