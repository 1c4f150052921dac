"""Plugin code with a fault, for needlec's tests of how a plugin's failure is reported: the `faulty_locker`
needle kind and the `faulty_metric` metric each go wrong in the way their `fault` setting names."""

from __future__ import annotations

import multiprocessing
import random
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import Field

from needlec.kinds.base import Draw, NeedleKindBase
from needlec.registry import METRICS, NEEDLES
from needlec.spec.base import StrictModel


class FaultyLockerNeedle(StrictModel):
    """A locker-code needle whose draw goes wrong."""

    type: Literal["faulty_locker"] = Field(description="Selects the faulty needle kind.")
    fault: Literal["raise", "dict", "flat_answers", "items"] = Field(
        description="How the draw goes wrong (`items`: only when an item is built in a worker process)."
    )


class FaultyLockerKind(NeedleKindBase):
    def __init__(self, config: FaultyLockerNeedle) -> None:
        self.config = config

    def cases(self) -> list[str]:
        return ["locker-7"]

    def draw(self, case: str, rng: random.Random) -> Draw:
        code = "".join(rng.choice("KLMN") for _ in range(4))
        if self.config.fault == "raise":
            raise ValueError("the locker register is empty")
        if self.config.fault == "dict":
            return {"needles": [f"Locker 7 opens with {code}."], "answers": [[code]]}  # type: ignore[return-value]
        if self.config.fault == "flat_answers":
            return Draw(
                case=case,
                needles=(f"Locker 7 opens with {code}.",),
                question="What opens locker 7?",
                answers=(code,),  # type: ignore[arg-type]  # the fault: one fact of aliases, not a tuple of facts
            )
        return Draw(
            case=case, needles=(f"Locker 7 opens with {code}.",), question="What opens locker 7?", answers=((code,),)
        )

    def draw_at(self, case: str, rng: random.Random, length: int) -> Draw:
        if self.config.fault == "items" and multiprocessing.parent_process() is not None:
            raise ValueError(f"the locker register has no page for {length} tokens")
        return self.draw(case, rng)


NEEDLES.register("faulty_locker", FaultyLockerNeedle)(FaultyLockerKind)


class FaultyMetric(StrictModel):
    """A metric that returns a verdict word instead of (score, details)."""

    metric: Literal["faulty_metric"] = Field(description="Selects the faulty metric.")


@METRICS.register("faulty_metric", FaultyMetric)
def faulty_metric(config: FaultyMetric, response: str, item: Mapping[str, Any]) -> Any:
    return "yes"
