"""Build one item: draw the needle, place it, splice the context into the messages.

Pure apart from reading the prepared haystack index: same key and seed give the same item.
"""

from __future__ import annotations

import dataclasses
import random
from functools import lru_cache
from typing import Any, Literal

from needlec.compile.frame import prompt_frame, reserved_tokens
from needlec.compile.overlap import precision
from needlec.compile.plan import CONTEXT_SENTINEL, ConfigPlan, ItemKey, random_depths, render_messages
from needlec.dataset.item import (
    ITEM_SCHEMA_VERSION,
    ContextSpan,
    Group,
    HaystackRef,
    Item,
    Languages,
    Message,
    NeedleRecords,
    Option,
    Scoring,
)
from needlec.errors import ContractError, NeedlecError
from needlec.kinds.base import Draw, NeedleKind
from needlec.placement.layouts import Request, layout_for, layout_name
from needlec.placement.view import HaystackView
from needlec.spec.models import RandomDepths, Spec
from needlec.spec.templates import render

__all__ = [
    "ITEM_SCHEMA_VERSION",
    "HaystackView",
    "build_drawn",
    "build_item",
    "context_of",
    "draw_item",
    "gold_aliases",
    "item_languages",
]

DISTRACTOR_ZONE = (20.0, 80.0)
DISTRACTOR_GAP = 20.0


def context_of(item: Item | dict[str, Any]) -> str:
    """The item's context: the span of its messages that holds the haystack and needles."""
    if isinstance(item, Item):
        return item.context()
    span = item["context_span"]
    return str(item["messages"][span["message"]]["content"][span["start"] : span["end"]])


def item_languages(spec: Spec) -> Languages:
    """Languages of an item: the spec's `item_languages`, else its first `languages` entry for each part."""
    first = spec.languages[0] if spec.languages else "en"
    given = spec.item_languages
    return Languages(
        needle=given.needle if given and given.needle else first,
        haystack=given.haystack if given and given.haystack else first,
        question=given.question if given and given.question else first,
    )


def distractor_depth(needle_depth: float, rng: random.Random) -> float:
    """A depth in the distractor zone at least DISTRACTOR_GAP points away from the needle."""
    lo, hi = DISTRACTOR_ZONE
    spans = [(lo, min(hi, needle_depth - DISTRACTOR_GAP)), (max(lo, needle_depth + DISTRACTOR_GAP), hi)]
    spans = [(a, b) for a, b in spans if b >= a]
    total = sum(b - a for a, b in spans)
    pick = rng.uniform(0, total)
    for a, b in spans:
        if pick <= b - a:
            return round(a + pick, 4)
        pick -= b - a
    return round(spans[-1][1], 4)


def _answer_prefix(spec: Spec, draw: Draw) -> str | None:
    """The prompt's `answer_prefix` template rendered with the item's values (None when unset)."""
    template = spec.prompt.answer_prefix
    if template is None:
        return None
    return render(template, {**spec.prompt.vars, **draw.values, "question": draw.question})


def _group(benchmark: str, key: ItemKey, draw: Draw) -> Group | None:
    """Group membership: the group's id is the item id with the case replaced by the group's name."""
    if draw.group is None:
        return None
    name, rotation, size = draw.group
    return Group(id=dataclasses.replace(key, case=name).id(benchmark), rotation=rotation, size=size)


def _question_position(question: str, prefix: str, suffix: str) -> Literal["after", "before", "both"] | None:
    """Where the question sits in the user message relative to the context (None when elsewhere)."""
    if not question:
        return None
    before, after = question in prefix, question in suffix
    if before and after:
        return "both"
    if before:
        return "before"
    return "after" if after else None


@lru_cache(maxsize=256)
def _needle_names(targets: int, distractors: int) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The ids and roles of an item's needle records: `n0`, `n1`, ... for the targets, `d0`, ... after them."""
    ids = (*(f"n{i}" for i in range(targets)), *(f"d{i}" for i in range(distractors)))
    return ids, ("target",) * targets + ("distractor",) * distractors


def gold_aliases(draw: Draw) -> tuple[str, ...]:
    """Every answer of the draw and every forbidden term: what no distractor passage may hold."""
    return tuple(sorted({*draw.forbidden, *(a for fact in draw.answers for a in fact)}))


class _NotFitted(Exception):
    """The kind's needles do not scale (`NeedleKind.draw_fitted` gave None)."""


def draw_item(
    config: ConfigPlan, key: ItemKey, view: HaystackView, kind: NeedleKind, needle_tokens: int | None = None
) -> tuple[int, random.Random, int, Draw]:
    """The item's seed, its RNG (after the draws below), its window start and its needle draw; with
    `needle_tokens` (what the plain draw's needles took), the kind's fitted draw (`draw_fitted`)."""
    spec = config.spec
    seed = dataclasses.replace(key, case=kind.seed_case(key.case)).seed(spec.seed)
    rng = random.Random(seed)
    # the window start is drawn first, so configs whose needle kinds use the RNG differently
    # (e.g. multiple-choice options) still share windows for the same grid cell
    start = rng.choice(view.starts) if spec.haystack.start == "random" else 0
    draw_rng = rng
    if kind.draw_per_repeat():
        shared = dataclasses.replace(key, case=kind.seed_case(key.case), length=0, depth=0.0, haystack="")
        draw_rng = random.Random(shared.seed(spec.seed))
    if needle_tokens is None:
        return seed, rng, start, kind.draw_at(key.case, draw_rng, key.length)
    refit = getattr(kind, "draw_fitted", None)  # (a kind written before the hook has none)
    fitted = refit(key.case, draw_rng, key.length, needle_tokens) if refit is not None else None
    if fitted is None:
        raise _NotFitted
    return seed, rng, start, fitted


def build_item(
    benchmark: str, config: ConfigPlan, key: ItemKey, view: HaystackView, kind: NeedleKind
) -> tuple[Item, list[str]]:
    """The item, and the forbidden terms found in its haystack window (empty when clean)."""
    item, leaks, _ = build_drawn(benchmark, config, key, view, kind)
    return item, leaks


def build_drawn(
    benchmark: str,
    config: ConfigPlan,
    key: ItemKey,
    view: HaystackView,
    kind: NeedleKind,
    needle_tokens: int | None = None,
) -> tuple[Item, list[str], Draw]:
    """`build_item`, and the draw it was built from (whose needle texts are the item's targets', as the kind
    made them: a `Lines` block keeps its tally there, which the item's validated strings do not).

    Where the layout finds no room for the needles, the item is built once more from the kind's draw fitted to
    what they took (`NeedleKind.draw_fitted`; `needle_tokens`), if the kind has one: only items that failed
    change."""
    spec = config.spec
    seed, rng, start, draw = draw_item(config, key, view, kind, needle_tokens)
    messages = render_messages(spec, draw.question, draw.values)
    prefix, suffix = messages[-1]["content"].split(CONTEXT_SENTINEL)
    counted_prompt = spec.length.counted == "prompt"
    # what is counted around the context: the rendered chat where the tokenizer has a chat template
    answer_prefix = _answer_prefix(spec, draw)
    frame = prompt_frame(messages, view.index.tokenizer, answer_prefix if spec.length.reserve else None)
    others = frame.others
    reserve = reserved_tokens(spec, draw.max_new_tokens or spec.prompt.max_new_tokens)
    multi = spec.placement.multi
    if isinstance(multi, RandomDepths):
        drawn = random_depths(multi.random, len(draw.needles) + len(draw.distractors), rng)
        if draw.depth_order:  # the kind's reading order takes the depths shallowest first
            ranked = iter(sorted(drawn))
            for index in draw.depth_order:
                drawn[index] = next(ranked)
        target_depths, distractor_depths = drawn[: len(draw.needles)], drawn[len(draw.needles) :]
    else:
        target_depths = config.needle_depths(key.depth, len(draw.needles))
        distractor_depths = [distractor_depth(key.depth, rng) for _ in draw.distractors]
    texts = list(draw.needles) + list(draw.distractors)
    request = Request(
        target=key.length - spec.length.buffer - (others + reserve if counted_prompt else 0),
        depth=key.depth,
        needles=texts,
        targets=len(draw.needles),
        depths=target_depths + distractor_depths,
        start=start,
        prefix=frame.prefix if counted_prompt else "",
        suffix=frame.suffix if counted_prompt else "",
        frame=(frame.prefix, frame.suffix),
        seed=seed,
        rng=rng,
        forbidden=draw.forbidden,
        question=draw.question,
        aliases=gold_aliases(draw),
        structure=draw.structure,
        placement=spec.placement,
        builder=spec.haystack.builder,
    )
    needed = kind.layout()
    if needed is not None and layout_name(spec) != needed[0]:
        raise ContractError(
            f"task {draw.task or spec.task!r} needs the `{needed[0]}` layout: set `haystack.builder.type: {needed[1]}`"
        )
    try:
        laid = layout_for(spec).place(view, request)
    except ContractError:
        if needle_tokens is not None:
            raise
        joiner = spec.placement.joiner_text()
        took = sum(view.counter.joined_tokens(text, joiner) for text in texts)
        if took <= request.target:
            raise
        try:
            return build_drawn(benchmark, config, key, view, kind, took)
        except (_NotFitted, NeedlecError):  # no fitted draw, or it fails too: the first failure is the one to fix
            pass
        raise
    placement = laid.placement
    structure = {**(draw.structure or {}), **laid.structure} if laid.structure else draw.structure
    if laid.target_depths is not None:
        target_depths = laid.target_depths[: len(draw.needles)]
        distractor_depths = laid.target_depths[len(draw.needles) :]
    alone = spec.length.counted == "needles"
    content = messages[-1]["content"] = placement.context(view.index.text, prefix, suffix)
    context_end = len(content) - len(suffix)
    if counted_prompt or alone:
        prompt_tokens = placement.total_tokens + others
    else:
        inserts = list(placement.inserts)
        delta = view.counter.frame_delta(placement.start, placement.end, inserts, frame.prefix, frame.suffix)
        prompt_tokens = others + placement.context_tokens + delta
    achieved = placement.depths()
    wanted = target_depths + distractor_depths
    languages = item_languages(spec)
    if draw.item_languages:  # the kind's own languages (e.g. MLNeedle's question language) win
        languages = languages.model_copy(update=draw.item_languages)
    ids, roles = _needle_names(len(draw.needles), len(draw.distractors))
    spoken = [*draw.languages[: len(texts)], *[languages.needle] * (len(texts) - len(draw.languages))]
    offsets, chars_at = placement.needle_tokens, placement.needle_chars
    # kept as columns (CWE has 300 needles): a record each would cost more than the rest of the item
    placed = NeedleRecords.from_columns(ids, roles, spoken, texts, wanted, achieved, offsets, chars_at)
    item = Item(
        id=key.id(benchmark),
        benchmark=benchmark,
        family=spec.family or benchmark,
        task=draw.task or spec.task or config.name,
        config=config.name,
        tokenizer=key.tokenizer,
        context_length=placement.context_tokens if alone else key.length,
        context_tokens=placement.context_tokens,
        prompt_tokens=prompt_tokens,
        length_counted=spec.length.counted,
        length_reserve=spec.length.reserve,
        depth_percent=key.depth,
        needles=placed,
        languages=languages,
        messages=[Message(role=m["role"], content=m["content"]) for m in messages],  # type: ignore[arg-type]
        context_span=ContextSpan(message=len(messages) - 1, start=len(prefix), end=context_end),
        question=draw.question,
        answer_prefix=answer_prefix,
        answers=[list(fact) for fact in draw.answers],
        scoring=Scoring.model_validate({"version": 1, **spec.scoring.model_dump(mode="json"), **draw.scoring}),
        expected=draw.expected,
        group=_group(benchmark, key, draw),
        options=[Option(letter=letter, text=text) for letter, text in draw.options] or None,
        answer_letter=draw.answer_letter,
        structure=structure,
        question_position=_question_position(draw.question, prefix, suffix),
        max_new_tokens=draw.max_new_tokens or spec.prompt.max_new_tokens,
        haystack=HaystackRef(
            id=key.haystack,
            sha256=view.index.haystack.sha256,
            start_char=placement.start,
            end_char=placement.end,
            repeated=placement.end > view.base_chars,
        ),
        case=key.case,
        repeat=key.repeat,
        seed=seed,
        overlap=precision(draw.question, draw.needles),
        values=dict(draw.values) or None,
    )
    return item, view.leaks(draw.forbidden, placement.start, placement.end), draw
