"""The `mlneedle` needle kind: one fictional passage, aligned across seven languages, as the needle.

MLNeedle asks how retrieval changes when the needle passage, the haystack and the question are
in different languages. Each item draws one aligned item of the packaged needle set
(`needlec.languages.mlneedle`), inserts its passage in `needle_language` and asks its question in
`question_language`. The accepted answers are the gold aliases of every language, so a response
in any of them counts (`contains` over the multilingual list).

`mode: existence` asks instead whether any passage answers the question. A share
`negative_ratio` of its items are negatives: the needle is left out (the placement engine refills
the length from the haystack) and the item records `expected: "no"`; the others record
`expected: "yes"`. Without negatives a model that always says yes would score 100%.

`baseline: true` is the no-distractor baseline, for a spec whose `length.counted` is `needles`: the
context is the needle passage alone (one passage, so no `[i]` number), with no filler; an
existence negative holds, instead of nothing, the passage of another item in the same language whose
length is nearest the drawn one's (it states another invented fact, so it answers nothing asked).

Pairing: the draw (which item, negative or not) depends only on the grid cell's case and repeat,
never on the haystack, so configs that differ only in needle, haystack or question language, and
the lengths and positions of one repeat, all ask the same item (`draw_per_repeat`).
"""

from __future__ import annotations

import random
from typing import Any, Literal

from pydantic import Field, StrictBool, model_validator

from needlec.kinds.base import Draw, NeedleKindBase
from needlec.languages.mlneedle import LANGUAGES, MLItem, load
from needlec.registry import NEEDLES
from needlec.spec.base import KeyedValueError, StrictModel

Language = Literal["en", "ar", "de", "es", "hi", "vi", "zh"]


class MLNeedleConfig(StrictModel):
    """A multilingual needle passage from the packaged aligned set, asked about in any language."""

    type: Literal["mlneedle"] = Field(description="Selects MLNeedle's aligned multilingual needles.")
    needle_language: Language = Field(
        "en", description="Language of the inserted needle passage (en, ar, de, es, hi, vi or zh)."
    )
    question_language: Language = Field("en", description="Language of the question (en, ar, de, es, hi, vi or zh).")
    mode: Literal["exact", "existence"] = Field(
        "exact",
        description="`exact`: ask the question; any gold alias in any language counts. `existence`: ask whether "
        "any passage answers the question; a share `negative_ratio` of the items leave the needle out and "
        "expect `no`.",
    )
    negative_ratio: float = Field(
        0.5,
        ge=0,
        le=1,
        description="`existence` only: the chance that an item is a negative (needle left out, length refilled "
        "from the haystack, `expected: no`). Drawn per repeat, so all language variants of a grid cell agree.",
    )
    items: list[str] | None = Field(
        None,
        description="Only these items of the needle set (ids such as `ml001`); all when omitted.",
        examples=[["ml001", "ml002"]],
    )
    baseline: StrictBool = Field(
        False,
        description="The no-distractor baseline (use with `length.counted: needles`): the context is the needle "
        "passage alone (unnumbered), with no filler; an existence negative holds another item's passage of the "
        "nearest length in the same language instead of nothing. The item records "
        "`structure.passages.baseline: true`.",
    )

    @model_validator(mode="after")
    def _known_items(self) -> MLNeedleConfig:
        if self.items is not None:
            if not self.items:
                raise KeyedValueError("`items` lists no item; leave it out to use every item", "items")
            known = {item.id for item in load().items}
            for i, name in enumerate(self.items):
                if name not in known:
                    shown = name if len(name) <= 40 else f"{name[:40]}... ({len(name):,} characters)"
                    raise KeyedValueError(f"unknown MLNeedle item {shown!r} (known: ml001..)", "items", i)
        if self.mode == "exact" and self.negative_ratio != 0.5 and "negative_ratio" in self.model_fields_set:
            raise KeyedValueError("`negative_ratio` applies to `mode: existence` only", "negative_ratio")
        return self


class MLNeedleKind(NeedleKindBase):
    """Draws one aligned item per grid cell; configs that differ only in language draw the same item."""

    def __init__(self, config: MLNeedleConfig) -> None:
        self.config = config
        pool = load().items
        wanted = config.items
        self.pool: list[MLItem] = [i for i in pool if wanted is None or i.id in wanted]

    def default_reports(self) -> dict[str, Any] | None:
        """MLNeedle: by length and position, the language matrix, existence balanced accuracy, and the
        paper's effective length: score >= 0.75 x the no-distractor baseline of the same needle and
        question languages."""
        return {
            "show": ["by_length", "by_depth", "position", "languages", "existence", "effective_length"],
            "effective_length": {"rule": "mlneedle"},
            "baseline": {"items": "no_distractors"},
        }

    def cases(self) -> list[str]:
        return ["main"]

    def draw_per_repeat(self) -> bool:
        """True: the item's RNG is seeded by case and repeat only (see the module docstring on pairing).

        The item seed's RNG first draws the haystack window, and the number of random bits that takes
        depends on how many windows the haystack offers, so a draw from it would differ between
        haystack languages.
        """
        return True

    def substitute(self, item: MLItem) -> str:
        """The passage of another item, in the needle language, whose length is nearest `item`'s.

        Ties go to the earlier item; an item whose passage holds any of `item`'s aliases is skipped
        (the data file forbids that, this keeps the negative honest even for a damaged subset).
        """
        lang = self.config.needle_language
        own = len(item.passage[lang])
        aliases = item.all_aliases()
        others = [o for o in load().items if o.id != item.id and not any(a in o.passage[lang] for a in aliases)]
        return min(others, key=lambda o: abs(len(o.passage[lang]) - own)).passage[lang]

    def filter_terms(self) -> dict[str, list[str]]:
        """`gold_answers`: every gold alias of every drawn-from item in every language, for `literal_terms`."""
        return {"gold_answers": sorted({alias for item in self.pool for alias in item.all_aliases()})}

    def draw(self, case: str, rng: random.Random) -> Draw:
        cfg = self.config
        item = rng.choice(self.pool)
        # drawn for every mode, so exact and existence configs stay paired item for item
        negative = rng.random() < cfg.negative_ratio
        existence = cfg.mode == "existence"
        absent = existence and negative
        aliases = item.all_aliases()
        needles = () if absent else (item.passage[cfg.needle_language],)
        # the baseline's negative: a passage of the same shape that answers nothing, as a distractor
        distractors = (self.substitute(item),) if absent and cfg.baseline else ()
        structure: dict[str, Any] = {"needle_id": item.id, "needle_present": not absent}
        if cfg.baseline:
            structure["passages"] = {
                "count": 1,
                "needle_index": [] if absent else [0],
                "filler_tokens": 0,
                "filler": None,
                "numbered": False,
                "baseline": True,
            }
        return Draw(
            case=case,
            needles=needles,
            question=item.question[cfg.question_language],
            answers=(aliases,),
            values={"needle_id": item.id},
            distractors=distractors,
            forbidden=aliases,
            languages=(cfg.needle_language,) * (len(needles) + len(distractors)),
            expected=("no" if absent else "yes") if existence else None,
            structure=structure,
            task=f"mlneedle-{cfg.mode}",
            # recorded on the item even where a spec's `item_languages` forgets to say them
            item_languages={"needle": cfg.needle_language, "question": cfg.question_language},
        )


NEEDLES.register("mlneedle", MLNeedleConfig)(MLNeedleKind)

__all__ = ["LANGUAGES", "MLNeedleConfig", "MLNeedleKind"]
