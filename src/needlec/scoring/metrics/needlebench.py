"""The `needlebench` metric: keyword hit, else a scaled Levenshtein similarity (NeedleBench v1/v2)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import Field, StrictBool

from needlec.registry import METRICS
from needlec.scoring.metrics.base import MetricConfig, Result, answer_sets

_WS = re.compile(r"\s+")


def levenshtein(a: str, b: str) -> int:
    """Character-level edit distance (insertions, deletions, substitutions all cost 1)."""
    if len(a) < len(b):
        a, b = b, a
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


class NeedleBenchConfig(MetricConfig):
    """1 if a keyword (an answer alias) is in the raw response, else alpha x (1 - distance / length)."""

    metric: Literal["needlebench"] = Field(
        description="NeedleBench: 1 on a case-sensitive keyword hit, else alpha x Levenshtein similarity to the needle."
    )
    alpha: float = Field(
        0.2, ge=0, le=1, description="Weight of the similarity part (0.2 in v1; 0 gives v2's binary keyword hit)."
    )
    remove_whitespace: StrictBool = Field(True, description="Delete all whitespace from response and reference first.")
    trim: StrictBool = Field(
        False, description="Cut the response to at most 1.2 x the reference length before the distance."
    )
    per_needle: StrictBool = Field(
        False,
        description="Multi-needle retrieval (M-RT): the share of required facts with a keyword (any alias) in the raw "
        "response, case-sensitive, with no similarity part. Off: one keyword hit anywhere scores 1.",
    )


@METRICS.register("needlebench", NeedleBenchConfig)
def needlebench(cfg: NeedleBenchConfig, response: str, item: Mapping[str, Any]) -> Result:
    """Keyword check on the raw response; otherwise similarity to the target needle sentence(s)."""
    facts = answer_sets(item)
    if cfg.per_needle:
        hits = [any(a and a in response for a in fact) for fact in facts]
        return (sum(hits) / len(hits) if hits else 0.0), {"hits": hits}
    keywords = [a for fact in facts for a in fact if a]
    if any(k in response for k in keywords):
        return 1.0, {"keyword": True}
    if cfg.alpha == 0:
        return 0.0, {"keyword": False}
    needles = item.get("needles") or []
    reference = "".join(n.get("text", "") for n in needles if n.get("role", "target") == "target")
    pred = response
    if cfg.remove_whitespace:
        pred, reference = _WS.sub("", pred), _WS.sub("", reference)
    if cfg.trim and len(pred) > 1.2 * len(reference):
        pred = pred[: int(1.2 * len(reference))]
    longest = max(len(pred), len(reference))
    if longest == 0:
        return 0.0, {"keyword": False, "distance": 0}
    distance = levenshtein(pred, reference)
    return cfg.alpha * (1 - distance / longest), {"keyword": False, "distance": distance}
