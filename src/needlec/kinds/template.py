"""The `template` needle kind: needle sentences, a question and answers as Jinja2 templates.

Templates may use random values drawn per item (a passkey, a code) from the item's seeded RNG.
"""

from __future__ import annotations

import random
import string
from typing import Annotated, Literal

from pydantic import Field, model_validator

from needlec.kinds.base import Draw, NeedleKindBase
from needlec.registry import NEEDLES
from needlec.spec.base import StrictModel
from needlec.spec.templates import render


class RandomValue(StrictModel):
    """A value drawn per item from the item's seeded RNG, usable in needle templates."""

    kind: Literal["digits", "letters", "hex", "choice"] = Field(
        description="`digits` (0-9), `letters` (A-Z), `hex` (0-9a-f) strings of `length`, or one of `choices`."
    )
    length: int = Field(7, ge=1, le=256, description="Characters to draw (not used by `choice`).")
    choices: list[str] | None = Field(None, description="Values to pick from for `choice`.")

    @model_validator(mode="after")
    def _choices(self) -> RandomValue:
        if self.kind == "choice" and not self.choices:
            raise ValueError("`choice` needs a non-empty `choices` list")
        return self

    def draw(self, rng: random.Random) -> str:
        if self.kind == "choice":
            assert self.choices is not None
            return rng.choice(self.choices)
        alphabet = {"digits": string.digits, "letters": string.ascii_uppercase, "hex": "0123456789abcdef"}[self.kind]
        return "".join(rng.choice(alphabet) for _ in range(self.length))


class TemplateNeedle(StrictModel):
    """One or more needle sentences, a question and accepted answers, all Jinja2 templates."""

    type: Literal["template"] = Field("template", description="Selects template needles.")
    needles: list[str] = Field(
        min_length=1,
        description="Needle texts, inserted in this order. "
        "Several needles make a multi-needle test (see `placement.multi`).",
        examples=[["The lighthouse keeper's cat is named Saffron."]],
    )
    question: str = Field(
        description="The question asked about the needles.", examples=["What is the lighthouse keeper's cat named?"]
    )
    answers: list[str | Annotated[list[str], Field(min_length=1)]] = Field(
        min_length=1,
        description="Required facts, in order (templates too). Each entry is one fact: a string (one accepted "
        "form) or a list of strings (aliases, any of which counts). `contains` scoring needs every fact, "
        "`contains_all` scores the fraction found.",
        examples=[["Saffron"], [["Dong-hyun", "Donghyun"]], ["roasted chestnuts", "smoked paprika"]],
    )
    vars: dict[str, RandomValue] = Field(
        default_factory=dict,
        description="Random values drawn per item and available to every template by name, e.g. a passkey.",
        examples=[{"code": {"kind": "digits", "length": 7}}],
    )


class TemplateKind(NeedleKindBase):
    """Renders the configured templates with the values drawn for each item."""

    def __init__(self, config: TemplateNeedle) -> None:
        self.config = config

    def cases(self) -> list[str]:
        return ["main"]

    def template_vars(self) -> list[str]:
        return sorted(self.config.vars)

    def draw(self, case: str, rng: random.Random) -> Draw:
        values = {name: spec.draw(rng) for name, spec in sorted(self.config.vars.items())}
        return Draw(
            case=case,
            needles=tuple(render(t, values) for t in self.config.needles),
            question=render(self.config.question, values),
            answers=tuple(
                (render(fact, values),) if isinstance(fact, str) else tuple(render(a, values) for a in fact)
                for fact in self.config.answers
            ),
            values=values,
        )


NEEDLES.register("template", TemplateNeedle)(TemplateKind)
