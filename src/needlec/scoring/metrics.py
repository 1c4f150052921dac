"""Scoring metadata: which metric an external runner should apply, with its parameters.

needlec never runs a model; it records how answers are judged and offers the reference scorer
so every runner judges the same way.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import Field

from needlec.registry import METRICS
from needlec.spec.base import StrictModel

_WS = re.compile(r"\s+")


class ContainsMetric(StrictModel):
    """Score 1 when the response contains any accepted answer, else 0."""

    metric: Literal["contains"] = Field(description="Any accepted answer appears in the response.")
    case_sensitive: bool = Field(False, description="Compare letter case exactly.")


class ContainsAllMetric(StrictModel):
    """Score the fraction of accepted answers (e.g. one per needle) found in the response."""

    metric: Literal["contains_all"] = Field(
        description="Fraction of the answers that appear in the response (multi-needle retrieval)."
    )
    case_sensitive: bool = Field(False, description="Compare letter case exactly.")


MetricConfig = Annotated[ContainsMetric | ContainsAllMetric, Field(discriminator="metric")]


def _norm(text: str, case_sensitive: bool) -> str:
    text = _WS.sub(" ", text).strip()
    return text if case_sensitive else text.casefold()


def score(metric: ContainsMetric | ContainsAllMetric, response: str, answers: list[list[str]]) -> float:
    """Reference scorer for a response against an item's required facts (each a list of aliases).

    A fact is found when any of its aliases occurs. `contains` gives 1 when every fact is found,
    `contains_all` the fraction of facts found.
    """
    hay = _norm(response, metric.case_sensitive)
    hits = [any(_norm(a, metric.case_sensitive) in hay for a in fact) for fact in answers]
    if isinstance(metric, ContainsAllMetric):
        return sum(hits) / len(hits) if hits else 0.0
    return 1.0 if hits and all(hits) else 0.0


METRICS.register("contains", ContainsMetric)(score)
METRICS.register("contains_all", ContainsAllMetric)(score)
