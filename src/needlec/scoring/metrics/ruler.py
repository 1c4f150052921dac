"""RULER's metrics, bit for bit: `string_match_all` and `string_match_part`.

The prediction's control characters become newlines and the ends are stripped; then each
reference is searched as a lower-cased substring of the lower-cased prediction (no word
boundaries, no other normalisation). With aliases, a fact counts when any alias is found.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import Field

from needlec.registry import METRICS
from needlec.scoring.metrics.base import MetricConfig, Result, answer_sets

_CONTROL = re.compile(r"[\x00-\x1f]")


def _hits(response: str, item: Mapping[str, Any]) -> list[bool]:
    pred = _CONTROL.sub("\n", response).strip().lower()
    return [any(a.lower() in pred for a in fact) for fact in answer_sets(item)]


class StringMatchAllConfig(MetricConfig):
    """RULER `string_match_all`: share of references found as lower-cased substrings."""

    metric: Literal["string_match_all"] = Field(description="RULER: share of references found (lowercase substring).")


class StringMatchPartConfig(MetricConfig):
    """RULER `string_match_part`: 1 if any reference is found as a lower-cased substring."""

    metric: Literal["string_match_part"] = Field(
        description="RULER: 1 if any reference is found (lowercase substring)."
    )


@METRICS.register("string_match_all", StringMatchAllConfig)
def string_match_all(cfg: StringMatchAllConfig, response: str, item: Mapping[str, Any]) -> Result:
    """Share of required facts found; 0 for an item without answers."""
    hits = _hits(response, item)
    return (sum(hits) / len(hits) if hits else 0.0), {"hits": hits}


@METRICS.register("string_match_part", StringMatchPartConfig)
def string_match_part(cfg: StringMatchPartConfig, response: str, item: Mapping[str, Any]) -> Result:
    """1 if any required fact is found."""
    hits = _hits(response, item)
    return (1.0 if any(hits) else 0.0), {"hits": hits}
