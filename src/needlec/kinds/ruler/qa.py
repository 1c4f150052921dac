"""Passage QA (RULER qa_squad / qa_hotpot) and the RAG-chunk variant: gold document(s) among distractors.

RULER shuffles the documents with one fixed seed, and the gold document is always first before the
shuffle, so the gold document sits in the same slot in every item with the same document count.
Here the gold position is either given (a grid-controlled slot, see `gold_slot_for_depth`) or
drawn from the item's own rng, and it is always recorded. Distractor passages are checked to be
answer-free (no gold answer alias occurs in them, compared casefolded), and the dropped ones are
reported. The same builder serves the RAG-chunk variant: k chunks, the gold chunk at rank j.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from needlec.kinds.ruler.common import RulerGenerationError

QuestionPosition = Literal["after", "before", "both"]


@dataclass(frozen=True)
class Passage:
    """One document of a QA corpus (a paragraph, or a chunk for the RAG variant)."""

    id: str
    text: str
    title: str = ""


@dataclass(frozen=True)
class QAExample:
    """A question with its answer aliases (any one counts), gold passages, and preferred distractors.

    `related` holds passages to use as distractors first (RULER: the other paragraphs of the same
    SQuAD article, or HotpotQA's own distractor paragraphs).
    """

    id: str
    question: str
    answers: tuple[str, ...]
    gold: tuple[Passage, ...]
    related: tuple[Passage, ...] = ()


@dataclass(frozen=True)
class QAWording:
    """Templates of a QA item; {index} and {text} in `document`, {question} in `question`."""

    document: str = "Document {index}:\n{text}"
    separator: str = "\n\n"
    instruction: str = (
        "Answer the question using only the documents below. Reply with the answer alone, without explanation."
    )
    question: str = "Question: {question}"
    answer_prefix: str = "Answer:"


@dataclass(frozen=True)
class QASpec:
    """How a QA item is laid out: numbering base, question position (RULER: instruction on both sides)."""

    index_base: int = 1
    question_position: QuestionPosition = "both"
    wording: QAWording = field(default_factory=QAWording)


@dataclass(frozen=True)
class QAItem:
    """A drawn QA item; `gold_positions` are 0-based slots of the gold passages in `documents`."""

    example_id: str
    documents: tuple[Passage, ...]
    gold_positions: tuple[int, ...]
    context: str
    instruction: str
    question: str
    answer_prefix: str
    answers: tuple[tuple[str, ...], ...]
    """One required fact whose aliases are the gold answers (`string_match_part`: any alias counts)."""
    question_position: QuestionPosition
    dropped_distractors: tuple[str, ...]
    """Ids of candidate distractors skipped because they contain a gold answer."""


def gold_slot_for_depth(depth_percent: float, num_docs: int) -> int:
    """Map a grid depth (0-100) to a document slot: 0 is the first document, 100 the last."""
    if num_docs < 1 or not 0 <= depth_percent <= 100:
        raise RulerGenerationError(f"no slot for depth {depth_percent} among {num_docs} documents")
    return round(depth_percent / 100 * (num_docs - 1))


def _answer_free(passage: Passage, answers: Sequence[str]) -> bool:
    text = passage.text.casefold()
    return not any(answer.casefold() in text for answer in answers)


def build_qa_item(
    rng: random.Random,
    example: QAExample,
    corpus: Sequence[Passage],
    num_docs: int,
    spec: QASpec | None = None,
    gold_position: int | None = None,
) -> QAItem:
    """Assemble `num_docs` documents: the gold passage(s) plus answer-free distractors.

    With `gold_position` the first gold passage goes to that slot and any further gold passages to
    random free slots; without it every gold slot is drawn from `rng`. Distractors come from
    `example.related` first, then from `corpus` in an order drawn per item.
    """
    spec = spec or QASpec()
    num_gold = len(example.gold)
    if num_gold < 1 or num_docs < num_gold:
        raise RulerGenerationError(f"{num_docs} documents cannot hold {num_gold} gold passages")
    if gold_position is not None and not 0 <= gold_position < num_docs:
        raise RulerGenerationError(f"gold position {gold_position} is outside 0..{num_docs - 1}")
    taken = {passage.id for passage in example.gold}
    dropped: list[str] = []
    distractors: list[Passage] = []
    needed = num_docs - num_gold
    order = list(range(len(corpus)))
    rng.shuffle(order)
    candidates = [*example.related, *(corpus[index] for index in order)]
    for passage in candidates:
        if len(distractors) == needed:
            break
        if passage.id in taken:
            continue
        taken.add(passage.id)
        if _answer_free(passage, example.answers):
            distractors.append(passage)
        else:
            dropped.append(passage.id)
    if len(distractors) < needed:
        raise RulerGenerationError(
            f"only {len(distractors)} answer-free distractors available for question {example.id!r}, need {needed}"
        )
    rng.shuffle(distractors)
    slots = list(range(num_docs))
    if gold_position is None:
        gold_slots = rng.sample(slots, num_gold)
    else:
        others = [slot for slot in slots if slot != gold_position]
        gold_slots = [gold_position, *rng.sample(others, num_gold - 1)]
    placed: list[Passage | None] = [None] * num_docs
    for slot, passage in zip(gold_slots, example.gold, strict=True):
        placed[slot] = passage
    fill = iter(distractors)
    documents = tuple(passage if passage is not None else next(fill) for passage in placed)
    wording = spec.wording
    context = wording.separator.join(
        wording.document.format(index=index + spec.index_base, text=passage.text)
        for index, passage in enumerate(documents)
    )
    return QAItem(
        example_id=example.id,
        documents=documents,
        gold_positions=tuple(gold_slots),
        context=context,
        instruction=wording.instruction,
        question=wording.question.format(question=example.question),
        answer_prefix=wording.answer_prefix,
        answers=(example.answers,),
        question_position=spec.question_position,
        dropped_distractors=tuple(dropped),
    )


def render_prompt(item: QAItem) -> str:
    """The user message: instruction and question after, before, or on both sides of the documents."""
    head = f"{item.instruction}\n\n{item.question}"
    if item.question_position == "before":
        return f"{head}\n\n{item.context}"
    if item.question_position == "after":
        return f"{item.context}\n\n{head}"
    return f"{head}\n\n{item.context}\n\n{head}"
