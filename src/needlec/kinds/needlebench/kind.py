"""The `needlebench` needle kind: NeedleBench's S-RT, M-RT and M-RS needles in English or Chinese.

- `s-rt` (single-needle retrieval): one fictional fact record; the question asks for its keyword.
- `m-rt` (multi-needle retrieval): `needles` records with pairwise-distinct subjects and keywords, no keyword
  inside another record's keyword, subject or needle (checked by `draw_retrieval`, and again here); one question
  per record, asked together, and one required fact per needle.
- `m-rs` (multi-needle reasoning): a fictional chain of 2-5 facts; only following every fact from the question's
  entity reaches the answer. The facts go in derivation order (`ordered`, v1) or `shuffled` (v2).

One case per task unit: `main` for S-RT, `n<count>` for M-RT, `steps<k>` for each M-RS chain length. With
`draw: per_repeat` (the reference design) every length, depth and haystack of one repeat shares the draw; with
`per_item` each item draws its own. Each item records the records or chain it uses under `structure`, with the
rule that derives the answer, so a checker can recompute it without this module.
"""

from __future__ import annotations

import random
from typing import Any, Literal

from pydantic import Field, StrictBool, model_validator

from needlec.kinds.base import Draw, NeedleKindBase
from needlec.kinds.needlebench.data import (
    STEP_COUNTS,
    NeedleDataError,
    ReasoningChain,
    RetrievalRecord,
    chain_order,
    draw_retrieval,
    keyword_clash,
    reasoning_chains,
)
from needlec.registry import NEEDLES
from needlec.spec.base import StrictModel

Task = Literal["s-rt", "m-rt", "m-rs"]
Lang = Literal["en", "zh"]

JOINERS: dict[str, str] = {"en": " ", "zh": ""}
"""Between sentences of one language: a space in English, nothing in Chinese."""
RECALL_GUIDES: dict[str, str] = {
    "en": "Before you answer, look back through the document for the passages that bear on the question.",
    "zh": "作答之前，请先在文档中找出与问题有关的内容。",
}
"""The recall guide: a sentence that asks the model to look back at the document before answering."""
FORMAT_LEADS: dict[str, str] = {
    "en": "Reply with this sentence, the blank filled in: ",
    "zh": "请按下面的句式作答，把空白处填上：",
}
"""Introduces the answer-format sentence(s)."""
DERIVATION = (
    "Start at `question_entity`. At each hop take the fact whose `subject` is the current entity and move to its "
    "`object`; after `steps` hops the current entity is the answer. `facts` are listed in insertion order; "
    "`position` is each fact's place in the derivation."
)


class NeedleBenchNeedle(StrictModel):
    """NeedleBench needles from the packaged fictional records and chains, in English or Chinese."""

    type: Literal["needlebench"] = Field("needlebench", description="Selects NeedleBench needles.")
    task: Task = Field(
        description="`s-rt`: one fact, one question. `m-rt`: `needles` facts, one question each, all asked at "
        "once. `m-rs`: a chain of facts that must be combined to answer one question."
    )
    language: Lang = Field(description="Language of the needles and questions: `en` or `zh`.")
    needles: int | list[int] | None = Field(
        None,
        description="M-RT: the number of needles per item (default 20; keep it equal to the length of "
        "`placement.multi`). M-RS: the chain length(s), 2 to 5, one case each (default all four). Not used by S-RT.",
        examples=[20, [2, 3, 4, 5]],
    )
    order: Literal["ordered", "shuffled"] = Field(
        "ordered",
        description="M-RS: insert the chain's facts in derivation order (`ordered`, v1) or in a random order "
        "drawn per item (`shuffled`, v2).",
    )
    draw: Literal["per_repeat", "per_item"] = Field(
        "per_repeat",
        description="`per_repeat` (the reference design): every length, depth and haystack of one repeat uses the "
        "same records or chain, so cells differ only in where the needle sits. `per_item`: each item draws its own.",
    )
    recall_guide: StrictBool = Field(
        True,
        description="Fill the template value `recall_guide` with a sentence asking the model to look back through "
        "the document before answering; false leaves it empty (NeedleBench's guide switch).",
    )

    @model_validator(mode="after")
    def _needles(self) -> NeedleBenchNeedle:
        n = self.needles
        if self.task == "s-rt" and n not in (None, 1):
            raise ValueError("S-RT has exactly one needle; leave `needles` out")
        if self.task == "m-rt" and not (n is None or (isinstance(n, int) and n >= 1)):
            raise ValueError("M-RT takes one needle count (an integer, at least 1)")
        if self.task == "m-rs":
            steps = [n] if isinstance(n, int) else (n or [])
            bad = [s for s in steps if s not in STEP_COUNTS]
            if bad or len(set(steps)) != len(steps):
                raise ValueError(f"M-RS chain lengths must be distinct values from 2 to 5, not {n}")
        return self

    def mrt_count(self) -> int:
        """Needles per M-RT item."""
        return self.needles if isinstance(self.needles, int) else 20

    def mrs_steps(self) -> list[int]:
        """The M-RS chain lengths, one case each."""
        if isinstance(self.needles, int):
            return [self.needles]
        return list(self.needles) if self.needles else list(STEP_COUNTS)


def _record_entry(record: RetrievalRecord) -> dict[str, object]:
    return {
        "id": record.id,
        "category": record.category,
        "subject": record.subject,
        "keyword": record.keyword,
        "aliases": list(record.aliases),
    }


def _answer_sentence(formats: list[str], lang: str) -> str:
    return FORMAT_LEADS[lang] + JOINERS[lang].join(formats)


def check_keywords(records: list[RetrievalRecord], lang: str | None = None) -> None:
    """Refuse a draw whose keywords repeat or nest: every accepted spelling of one record's keyword must differ
    from, and not occur inside, every spelling of another's (case-insensitive). With `lang`, a draw of the
    shipped records is checked by their clash bits (`keyword_clash`)."""
    clash = keyword_clash(records, lang)
    if clash is not None:
        i, j = clash
        raise NeedleDataError(f"keywords of {records[i].id} and {records[j].id} overlap")


class NeedleBenchKind(NeedleKindBase):
    """Draws NeedleBench needles for one task and language from the packaged data."""

    def __init__(self, config: NeedleBenchNeedle) -> None:
        self.config = config

    def default_reports(self) -> dict[str, Any] | None:
        """NeedleBench reports by length and depth and its weighted overall score; it defines no effective length."""
        return {
            "show": ["by_length", "by_depth", "heatmap", "position", "needlebench_overall"],
            "effective_length": {"rule": "none"},
        }

    def cases(self) -> list[str]:
        if self.config.task == "m-rt":
            return [f"n{self.config.mrt_count()}"]
        if self.config.task == "m-rs":
            return [f"steps{k}" for k in self.config.mrs_steps()]
        return ["main"]

    def all_case_ids(self) -> list[str]:
        return self.cases()

    def template_vars(self) -> list[str]:
        return ["answer_format", "recall_guide"]

    def draw_per_repeat(self) -> bool:
        return self.config.draw == "per_repeat"

    def _values(self, formats: list[str]) -> dict[str, str]:
        lang = self.config.language
        return {
            "answer_format": _answer_sentence(formats, lang),
            "recall_guide": RECALL_GUIDES[lang] if self.config.recall_guide else "",
        }

    def draw(self, case: str, rng: random.Random) -> Draw:
        if self.config.task == "m-rs":
            return self._reasoning(case, rng)
        return self._retrieval(case, rng)

    def _retrieval(self, case: str, rng: random.Random) -> Draw:
        lang = self.config.language
        task = self.config.task
        count = 1 if task == "s-rt" else self.config.mrt_count()
        records = draw_retrieval(rng, count, lang)
        check_keywords(records, lang)
        structure: dict[str, object] = {"task": task, "records": [_record_entry(r) for r in records]}
        if task == "m-rt":
            structure["keywords"] = [r.keyword for r in records]
        return Draw(
            case=case,
            needles=tuple(r.needle for r in records),
            question=JOINERS[lang].join(r.question for r in records),
            answers=tuple(r.answers for r in records),
            values=self._values([r.answer_format for r in records]),
            forbidden=tuple(a for r in records for a in r.answers),
            languages=(lang,) * len(records),
            structure=structure,
            scoring={"per_needle": True} if task == "m-rt" else {},
            task=task,
        )

    def _reasoning(self, case: str, rng: random.Random) -> Draw:
        lang = self.config.language
        steps = int(case.removeprefix("steps"))
        chain: ReasoningChain = rng.choice(reasoning_chains(lang, steps))
        order = chain_order(chain, "chain" if self.config.order == "ordered" else "shuffled", rng)
        positions = {fact: i for i, fact in enumerate(chain.facts)}
        return Draw(
            case=case,
            needles=tuple(f.text for f in order),
            question=chain.question,
            answers=(chain.answers,),
            values=self._values([chain.answer_format]),
            forbidden=chain.answers,
            languages=(lang,) * len(order),
            structure={
                "task": "m-rs",
                "chain_id": chain.id,
                "steps": chain.steps,
                "order": self.config.order,
                "question_entity": chain.question_entity,
                "facts": [
                    {"subject": f.subject, "relation": f.relation, "object": f.object, "position": positions[f]}
                    for f in order
                ],
                "derivation": DERIVATION,
            },
            task="m-rs",
        )


NEEDLES.register("needlebench", NeedleBenchNeedle)(NeedleBenchKind)
