"""The `locker_code` needle kind: a locker number and its four-letter code, one case per locker."""

from __future__ import annotations

import random
import string
from typing import Literal

from pydantic import Field

from needlec.kinds.base import Draw, NeedleKindBase
from needlec.registry import NEEDLES
from needlec.spec.base import StrictModel


class LockerCodeNeedle(StrictModel):
    """A locker's code hidden in the haystack; the question asks for it."""

    type: Literal["locker_code"] = Field(description="Selects the locker-code needle.")
    lockers: list[int] = Field(min_length=1, description="Locker numbers; each is a case of the grid.")


class LockerCodeKind(NeedleKindBase):
    """Draws a fresh four-letter code per item."""

    def __init__(self, config: LockerCodeNeedle) -> None:
        self.config = config

    def cases(self) -> list[str]:
        return [f"locker-{n}" for n in self.config.lockers]

    def draw(self, case: str, rng: random.Random) -> Draw:
        number = case.removeprefix("locker-")
        code = "".join(rng.choice(string.ascii_uppercase) for _ in range(4))
        return Draw(
            case=case,
            needles=(f"The code of locker {number} is {code}.",),
            question=f"What is the code of locker {number}?",
            answers=((code,),),  # required facts, each a tuple of accepted spellings
            values={"locker": number, "code": code},
        )


NEEDLES.register("locker_code", LockerCodeNeedle)(LockerCodeKind)
