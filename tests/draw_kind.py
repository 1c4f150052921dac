"""A small multiple-choice needle kind for `test_draw_fields.py`, registered on import.

Four rotations of one question; the drawn colours are shared because the rotations share a seed
(`seed_case`). `main(spec, out)` compiles a spec with this kind available.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Literal

from needlec.kinds.base import Draw, NeedleKindBase
from needlec.registry import NEEDLES
from needlec.spec.base import StrictModel


class RotatingChoice(StrictModel):
    type: Literal["test_rotating_choice"] = "test_rotating_choice"


class RotatingChoiceKind(NeedleKindBase):
    """Four rotations of one question; the drawn colour is shared because the rotations share a seed."""

    COLOURS = ("amber", "cobalt", "crimson", "jade", "ochre", "slate", "teal", "umber")

    def __init__(self, config: RotatingChoice) -> None:
        self.config = config

    def cases(self) -> list[str]:
        return [f"q@{r}" for r in range(4)]

    def seed_case(self, case: str) -> str:
        return case.split("@")[0]

    def draw(self, case: str, rng: random.Random) -> Draw:
        rotation = int(case.split("@")[1])
        colours = rng.sample(self.COLOURS, 4)
        right = colours[0]
        order = colours[rotation:] + colours[:rotation]
        letters = "ABCD"
        return Draw(
            case=case,
            needles=(f"The lantern on the pier was painted {right}.",),
            question="What colour was the lantern on the pier painted?",
            answers=((right,),),
            values={"options": " ".join(f"{letter}. {c}" for letter, c in zip(letters, order, strict=True))},
            languages=("de",),
            structure={"colours": colours},
            options=tuple(zip(letters, order, strict=True)),
            answer_letter=letters[order.index(right)],
            group=("q", rotation, 4),
            expected="yes",
            scoring={"metric": "choice"},
            task="lantern",
            max_new_tokens=3,
        )


NEEDLES.register("test_rotating_choice", RotatingChoice)(RotatingChoiceKind)


def main(spec: str, out: str) -> None:
    from needlec.compile.pipeline import CompileOptions, compile_spec

    compile_spec(Path(spec), Path(out), CompileOptions(progress=False))
