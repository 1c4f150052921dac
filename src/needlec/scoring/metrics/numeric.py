"""The `numeric` metric: numbers compared by value, so "7,504,196" equals "7504196"."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import Field

from needlec.registry import METRICS
from needlec.scoring.metrics.base import MetricConfig, Result, answer_sets

# A number: optional sign, digits with optional grouping (comma, underscore, space, thin or
# no-break space, apostrophe) in groups of three, optional decimal part.
_NUMBER = re.compile(
    r"(?<![\w.])[-+−]?\d{1,3}(?:[,_ \u2009\u202f\u00a0']\d{3})+(?:\.\d+)?(?![\w])|(?<![\w.])[-+−]?\d+(?:\.\d+)?(?![\w])"
)
_GROUPING = re.compile(r"[,_ \u2009\u202f\u00a0']")


def parse_numbers(text: str) -> list[float]:
    """Every number written in `text`, in order; digit grouping is removed, "−" is a minus sign."""
    text = unicodedata.normalize("NFKC", text)
    out = []
    for m in _NUMBER.finditer(text):
        raw = _GROUPING.sub("", m.group(0)).replace("−", "-")
        try:
            out.append(float(raw))
        except ValueError:  # pragma: no cover - the pattern only admits valid numbers
            continue
    return out


class NumericConfig(MetricConfig):
    """Score 1 when a number in the response equals the answer within a tolerance."""

    metric: Literal["numeric"] = Field(description="A number in the response equals the answer's value.")
    abs_tol: float = Field(0.0, ge=0, description="Largest accepted absolute difference.")
    rel_tol: float = Field(0.0, ge=0, description="Largest accepted difference relative to the answer's magnitude.")
    pick: Literal["any", "first", "last", "only"] = Field(
        "any",
        description="Which number of the response counts: any of them, the first, the last, or the only "
        "one (a response with several numbers then scores 0).",
    )


@METRICS.register("numeric", NumericConfig)
def numeric(cfg: NumericConfig, response: str, item: Mapping[str, Any]) -> Result:
    """Fraction of required facts whose value appears among the picked numbers of the response."""
    said = parse_numbers(response)
    if cfg.pick == "first":
        said = said[:1]
    elif cfg.pick == "last":
        said = said[-1:]
    elif cfg.pick == "only" and len(said) != 1:
        said = []
    facts = answer_sets(item)
    hits = []
    for fact in facts:
        wanted = [v for alias in fact for v in parse_numbers(alias)[:1]]
        hits.append(any(abs(s - w) <= max(cfg.abs_tol, cfg.rel_tol * abs(w)) for s in said for w in wanted))
    return (sum(hits) / len(hits) if hits else 0.0), {"numbers": said[:20], "hits": hits}
