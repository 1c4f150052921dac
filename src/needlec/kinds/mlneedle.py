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
"""

from __future__ import annotations

import random
from typing import Any, Literal

from pydantic import Field, model_validator

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
        "from the haystack, `expected: no`). Drawn per item from its seeded RNG.",
    )
    items: list[str] | None = Field(
        None,
        description="Only these items of the needle set (ids such as `ml001`); all when omitted.",
        examples=[["ml001", "ml002"]],
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
        """MLNeedle: by length and position, the language matrix, existence balanced accuracy, effective length."""
        return {"show": ["by_length", "by_depth", "position", "languages", "existence", "effective_length"]}

    def cases(self) -> list[str]:
        return ["main"]

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
        return Draw(
            case=case,
            needles=() if absent else (item.passage[cfg.needle_language],),
            question=item.question[cfg.question_language],
            answers=(aliases,),
            values={"needle_id": item.id},
            forbidden=aliases,
            languages=() if absent else (cfg.needle_language,),
            expected=("no" if absent else "yes") if existence else None,
            structure={"needle_id": item.id, "needle_present": not absent},
            task=f"mlneedle-{cfg.mode}",
            # recorded on the item even where a spec's `item_languages` forgets to say them
            item_languages={"needle": cfg.needle_language, "question": cfg.question_language},
        )


NEEDLES.register("mlneedle", MLNeedleConfig)(MLNeedleKind)

__all__ = ["LANGUAGES", "MLNeedleConfig", "MLNeedleKind"]
