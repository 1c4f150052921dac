"""The `existence` metric: a yes/no answer to "is the fact in the text?", judged against `expected`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import Field

from needlec.registry import METRICS
from needlec.scoring.metrics.base import MetricConfig, Result
from needlec.scoring.normalize import find_word, normalize, resolve

_DEFAULT_YES = ("yes", "true", "是", "有", "はい", "sí", "si", "oui", "ja", "sim", "да", "हाँ", "हां", "نعم", "ใช่")
_DEFAULT_NO = ("no", "false", "否", "没有", "不是", "いいえ", "non", "nein", "não", "nao", "нет", "नहीं", "لا", "ไม่")


class ExistenceConfig(MetricConfig):
    """Score 1 when the first yes/no word of the response matches the item's `expected`."""

    metric: Literal["existence"] = Field(
        description="Yes/no existence question; the report adds balanced accuracy over positives and negatives."
    )
    yes: tuple[str, ...] | None = Field(
        None,
        description="Words read as yes, matched whole-word after standard normalisation; `null` uses the "
        "built-in list: " + ", ".join(_DEFAULT_YES) + ".",
    )
    no: tuple[str, ...] | None = Field(
        None,
        description="Words read as no; `null` uses the built-in list: " + ", ".join(_DEFAULT_NO) + ".",
    )


def read_verdict(response: str, yes: tuple[str, ...], no: tuple[str, ...]) -> str | None:
    """ "yes", "no", or None: whichever listed word comes first in the response (whole word)."""
    said = normalize(response, resolve("standard"))
    best: tuple[int, int, str] | None = None
    for verdict, words in (("yes", yes), ("no", no)):
        for word in words:
            w = normalize(word, resolve("standard"))
            at = find_word(said, w) if w else -1
            # Earliest wins; at the same place the longer word wins ("没有" over "有").
            if at != -1 and (best is None or (at, -len(w)) < (best[0], best[1])):
                best = (at, -len(w), verdict)
    return best[2] if best else None


@METRICS.register("existence", ExistenceConfig)
def existence(cfg: ExistenceConfig, response: str, item: Mapping[str, Any]) -> Result:
    """1 when the verdict equals `expected` ("yes" when the item has none), else 0."""
    expected = str(item.get("expected") or "yes").lower()
    verdict = read_verdict(response, cfg.yes or _DEFAULT_YES, cfg.no or _DEFAULT_NO)
    return (1.0 if verdict == expected else 0.0), {"verdict": verdict, "expected": expected}
