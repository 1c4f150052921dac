"""Build one item: draw the needle, place it, splice the context into the messages.

Pure apart from reading the prepared haystack index: same key and seed give the same item.
"""

from __future__ import annotations

import bisect
import dataclasses
import hashlib
import random
from dataclasses import dataclass, field
from typing import Any, Literal

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
    Needle,
    Option,
    Scoring,
)
from needlec.errors import ContractError
from needlec.haystacks.index import HaystackIndex
from needlec.kinds.base import Draw, NeedleKind
from needlec.placement.engine import Counter, Placement, needles_alone, place
from needlec.spec.models import RandomDepths, Spec
from needlec.spec.templates import render

__all__ = [
    "ITEM_SCHEMA_VERSION",
    "HaystackView",
    "build_item",
    "context_of",
    "draw_item",
    "gold_aliases",
    "item_languages",
]

DISTRACTOR_ZONE = (20.0, 80.0)
DISTRACTOR_GAP = 20.0


@dataclass
class HaystackView:
    """What an item needs of a haystack: its index for one tokenizer and where windows may start."""

    index: HaystackIndex
    counter: Counter
    starts: list[int]  # sentence starts in the first copy (for `start: random`)
    base_chars: int
    _occurrences: dict[str, list[int]] = field(default_factory=dict)
    _folded: str | None = None
    passages: Any = None  # PassageTable of a `passages` haystack, built on first use
    rankers: dict[str, Any] = field(default_factory=dict)  # PassageRanker by rank settings (compile/ranking.py)

    def occurrences(self, term: str) -> list[int]:
        """Start offsets of `term` as a whole word or phrase, in any letter case (cached)."""
        if term not in self._occurrences:
            if self._folded is None:
                folded_text = self.index.text.lower()
                # lower() keeps offsets only if no character changes length; else match exactly
                self._folded = folded_text if len(folded_text) == len(self.index.text) else self.index.text
            folded = self._folded
            needle = term.lower() if folded is not self.index.text else term
            spots = []
            at = folded.find(needle)
            while at >= 0:
                end = at + len(needle)
                if (at == 0 or not folded[at - 1].isalnum()) and (end >= len(folded) or not folded[end].isalnum()):
                    spots.append(at)
                at = folded.find(needle, at + 1)
            self._occurrences[term] = spots
        return self._occurrences[term]

    def leaks(self, terms: tuple[str, ...], start: int, end: int) -> list[str]:
        """Terms that occur in the haystack window [start, end) (needles are not part of it)."""
        found = []
        for term in terms:
            if not term:
                continue
            spots = self.occurrences(term)
            i = bisect.bisect_left(spots, start)
            if i < len(spots) and spots[i] + len(term) <= end:
                found.append(term)
        return found


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


def gold_aliases(draw: Draw) -> tuple[str, ...]:
    """Every answer of the draw and every forbidden term: what no distractor passage may hold."""
    return tuple(sorted({*draw.forbidden, *(a for fact in draw.answers for a in fact)}))


def _place_passages(
    view: HaystackView,
    spec: Spec,
    key: ItemKey,
    draw: Draw,
    start: int,
    prefix: str,
    suffix: str,
    others: int,
    seed: int,
) -> tuple[Placement, dict[str, Any]]:
    """Whole-passage placement for a `passages` haystack (one needle at most, no distractors)."""
    from needlec.compile.passages import PassageTable, place_passages, place_ranked

    if len(draw.needles) > 1 or draw.distractors:
        raise ContractError("a `passages` haystack takes at most one needle and no distractor sentences")
    if view.passages is None:
        view.passages = PassageTable.of(view.index.text)
    tokenizer = view.index.tokenizer
    counted_prompt = spec.length.counted == "prompt"

    def measure(context: str) -> int:
        return tokenizer.count(prefix + context + suffix) if counted_prompt else tokenizer.count(context)

    builder = spec.haystack.builder
    rank = getattr(builder, "rank", None)
    if rank is not None and getattr(builder, "distractors", True):
        ranker = view.rankers.get(rank.model_dump_json())
        if ranker is None:
            raise ContractError("haystack.builder.rank: the rankings were not prepared for this haystack")
        return place_ranked(
            tokenizer,
            ranker,
            ranker.rank(draw.question, gold_aliases(draw)),
            target=key.length - others if counted_prompt else key.length,
            needle=draw.needles[0] if draw.needles else None,
            depth=key.depth,
            filler=str(getattr(builder, "filler", " .")),
            numbered=bool(getattr(builder, "numbered", True)),
            measure=measure,
            rng=random.Random(hashlib.sha256(f"{seed}|rank".encode()).digest()),
        )

    return place_passages(
        view.index,
        view.passages,
        start=start,
        target=key.length - spec.length.buffer - (others if counted_prompt else 0),
        needle=draw.needles[0] if draw.needles else None,
        depth=key.depth,
        filler=str(getattr(spec.haystack.builder, "filler", " .")),
        numbered=bool(getattr(spec.haystack.builder, "numbered", True)),
        distractors=bool(getattr(spec.haystack.builder, "distractors", True)),
        measure=measure,
    )


def _place_documents(
    view: HaystackView,
    spec: Spec,
    key: ItemKey,
    draw: Draw,
    start: int,
    prefix: str,
    suffix: str,
    others: int,
    rng: random.Random,
) -> tuple[Placement, dict[str, Any]]:
    """Numbered whole documents for a `ruler_documents` haystack, the draw's needles as gold documents."""
    from needlec.compile.documents import DocumentLayout, place_documents
    from needlec.compile.passages import PassageTable

    if getattr(spec.haystack.builder, "type", None) != "ruler_documents":
        raise ContractError(
            f"task {draw.task!r} shows numbered documents: it needs `haystack.builder.type: ruler_documents`"
        )
    if draw.distractors or not draw.needles:
        raise ContractError("a `ruler_documents` haystack takes one or more gold documents and no distractor sentences")
    if view.passages is None:
        view.passages = PassageTable.of(view.index.text)
    tokenizer = view.index.tokenizer
    counted_prompt = spec.length.counted == "prompt"

    def measure(context: str) -> int:
        return tokenizer.count(prefix + context + suffix) if counted_prompt else tokenizer.count(context)

    layout = DocumentLayout(**(draw.structure or {}).get("document_layout", {}))
    layout = dataclasses.replace(layout, filler=str(getattr(spec.haystack.builder, "filler", " .")))
    return place_documents(
        view.index,
        view.passages,
        start=start,
        target=key.length - others if counted_prompt else key.length,
        golds=draw.needles,
        depth=key.depth,
        rng=rng,
        layout=layout,
        measure=measure,
        forbidden=draw.forbidden,
    )


def draw_item(
    config: ConfigPlan, key: ItemKey, view: HaystackView, kind: NeedleKind
) -> tuple[int, random.Random, int, Draw]:
    """The item's seed, its RNG (after the draws below), its window start and its needle draw."""
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
    return seed, rng, start, kind.draw_at(key.case, draw_rng, key.length)


def build_item(
    benchmark: str, config: ConfigPlan, key: ItemKey, view: HaystackView, kind: NeedleKind
) -> tuple[Item, list[str]]:
    """The item, and the forbidden terms found in its haystack window (empty when clean)."""
    spec = config.spec
    seed, rng, start, draw = draw_item(config, key, view, kind)
    messages = render_messages(spec, draw.question, draw.values)
    user = messages[-1]["content"]
    prefix, suffix = user.split(CONTEXT_SENTINEL)
    tokenizer = view.index.tokenizer
    others = sum(tokenizer.count(m["content"]) for m in messages[:-1])
    counted_prompt = spec.length.counted == "prompt"
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
    structure = draw.structure
    builder = spec.haystack.builder
    alone = spec.length.counted == "needles"
    if alone:  # the needles are the whole context: no haystack text, no length target
        placement = needles_alone(view.index.tokenizer, texts, spec.placement.joiner_text(), prefix, suffix)
        target_depths = list(placement.depths()[: len(draw.needles)])
        distractor_depths = list(placement.depths()[len(draw.needles) :])
    elif getattr(builder, "type", None) == "passages":
        # whole passages and a declared filler instead of a token cut (see compile/passages.py)
        placement, layout = _place_passages(view, spec, key, draw, start, prefix, suffix, others, seed)
        structure = {**(structure or {}), "passages": layout}
        target_depths = [key.depth] * len(texts)
        distractor_depths = []
    elif getattr(builder, "type", None) == "ruler_documents" or "document_layout" in (structure or {}):
        # numbered whole documents, the gold ones at grid-controlled slots (see compile/documents.py)
        placement, layout = _place_documents(view, spec, key, draw, start, prefix, suffix, others, rng)
        structure = {**(structure or {}), "documents": layout}
        # the first gold document follows the grid; the others sit where they were drawn
        target_depths = [key.depth, *placement.depths()[1:]]
        distractor_depths = []
    else:
        placement = place(
            view.index,
            view.counter,
            start=start,
            target=key.length - spec.length.buffer - (others if counted_prompt else 0),
            needles=texts,
            depths=target_depths + distractor_depths,
            snap=spec.placement.snap,
            joiner=spec.placement.joiner_text(),
            prefix=prefix if counted_prompt else "",
            suffix=suffix if counted_prompt else "",
            window=spec.placement.window,
        )
    context = placement.context(view.index.text)
    messages[-1]["content"] = prefix + context + suffix
    if counted_prompt or alone:
        prompt_tokens = placement.total_tokens + others
    else:
        prompt_tokens = others + view.counter.count(
            placement.start, placement.end, list(placement.inserts), prefix, suffix
        )
    achieved = placement.depths()
    wanted = target_depths + distractor_depths
    languages = item_languages(spec)
    if draw.item_languages:  # the kind's own languages (e.g. MLNeedle's question language) win
        languages = languages.model_copy(update=draw.item_languages)
    n = len(draw.needles)
    placed = [
        Needle(
            id=f"n{i}" if i < n else f"d{i - n}",
            role="target" if i < n else "distractor",
            language=draw.languages[i] if i < len(draw.languages) else languages.needle,
            text=text,
            target_depth_percent=wanted[i],
            depth_percent=achieved[i],
            token_offset=placement.needle_tokens[i],
            char_offset=placement.needle_chars[i],
        )
        for i, text in enumerate(texts)
    ]
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
        depth_percent=key.depth,
        needles=placed,
        languages=languages,
        messages=[Message(role=m["role"], content=m["content"]) for m in messages],  # type: ignore[arg-type]
        context_span=ContextSpan(message=len(messages) - 1, start=len(prefix), end=len(prefix) + len(context)),
        question=draw.question,
        answer_prefix=_answer_prefix(spec, draw),
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
        overlap=precision(draw.question, " ".join(draw.needles)),
        values=dict(draw.values) or None,
    )
    return item, view.leaks(draw.forbidden, placement.start, placement.end)
