"""The `exact_token` metric: 1 when an answer appears in the response as a whole word."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import Field

from needlec.registry import METRICS
from needlec.spec.base import StrictModel


class ExactTokenMetric(StrictModel):
    """Score 1 when any accepted answer occurs in the response as a whole word."""

    metric: Literal["exact_token"] = Field(description="Whole-word match of an accepted answer.")
    case_sensitive: bool = Field(True, description="Compare letter case exactly.")


@METRICS.register("exact_token", ExactTokenMetric)
def exact_token(config: ExactTokenMetric, response: str, item: Mapping[str, Any]) -> tuple[float, dict[str, Any]]:
    """1.0 when an alias of a required fact is a whole word of the response, else 0.0."""
    flags = 0 if config.case_sensitive else re.IGNORECASE
    aliases = [alias for fact in item["answers"] for alias in fact]
    hit = any(re.search(rf"(?<!\w){re.escape(a)}(?!\w)", response, flags) for a in aliases)
    return (1.0 if hit else 0.0), {"hit": hit}
