"""The `final_answer` metric: score only the answer a reasoning response ends with.

A chain-of-thought response mentions many candidates while reasoning; scoring the whole text
credits any of them. `final_answer` extracts the final answer first, then hands it to another
metric (by default `contains`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import Field, field_validator

from needlec.registry import METRICS
from needlec.scoring.metrics.base import MetricConfig, Result

_ANSWER_LINE = re.compile(
    r"^[\s*#>_-]*(?:the\s+)?(?:final\s+)?answer(?:\s+is)?\s*[:：]?\s*[*_]*\s*(?P<a>\S.*)$", re.IGNORECASE | re.MULTILINE
)
_BOXED = "\\boxed{"

Extractor = Literal["boxed", "answer_line", "last_line"]


def boxed(text: str) -> str | None:
    """Content of the last `\\boxed{...}` (nested braces allowed), or None."""
    start = text.rfind(_BOXED)
    while start != -1:
        depth, i = 1, start + len(_BOXED)
        while i < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            i += 1
        if depth == 0:
            return text[start + len(_BOXED) : i - 1]
        start = text.rfind(_BOXED, 0, start)
    return None


def answer_line(text: str) -> str | None:
    """The rest of the last line that starts with "Answer:" (or "Final answer:", "The answer is")."""
    found = None
    for m in _ANSWER_LINE.finditer(text):
        found = m.group("a").strip()
    return found


def last_line(text: str) -> str | None:
    """The last non-empty line."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else None


_EXTRACTORS = {"boxed": boxed, "answer_line": answer_line, "last_line": last_line}


def extract(text: str, order: tuple[Extractor, ...]) -> tuple[str | None, str | None]:
    """(extracted answer, extractor name) from the first extractor in `order` that finds one."""
    for name in order:
        got = _EXTRACTORS[name](text)
        if got is not None:
            return got, name
    return None, None


class FinalAnswerConfig(MetricConfig):
    """Extract the final answer of a reasoning response, then score it with another metric."""

    metric: Literal["final_answer"] = Field(
        description="Score only the extracted final answer (boxed, 'Answer:' line, or last line)."
    )
    extract: tuple[Extractor, ...] = Field(
        ("boxed", "answer_line", "last_line"),
        min_length=1,
        description="Extractors tried in order: `boxed` (last \\boxed{...}), `answer_line` (the last line "
        "starting 'Answer:', 'Final answer:' or 'The answer is'), `last_line` (last non-empty line).",
    )
    then: dict[str, Any] = Field(
        default_factory=lambda: {"metric": "contains"},
        validate_default=True,
        description="The metric applied to the extracted answer, as a `scoring:` mapping.",
    )

    @field_validator("then")
    @classmethod
    def _check_then(cls, value: dict[str, Any]) -> dict[str, Any]:
        name = value.get("metric")
        if name == "final_answer":
            raise ValueError("final_answer cannot wrap itself")
        if name not in METRICS:
            raise ValueError(f"unknown metric {name!r}; known: {', '.join(METRICS.names())}")
        config = METRICS.get(str(name)).config.model_validate({k: v for k, v in value.items() if k != "version"})
        dumped: dict[str, Any] = config.model_dump(mode="json")
        if "version" in value and value["version"] != dumped.get("version"):
            raise ValueError(
                f"{name} version {value['version']} is not the implemented version {dumped.get('version')}"
            )
        return dumped


@METRICS.register("final_answer", FinalAnswerConfig)
def final_answer(cfg: FinalAnswerConfig, response: str, item: Mapping[str, Any]) -> Result:
    """The wrapped metric's score on the extracted answer; 0 when nothing can be extracted."""
    answer, how = extract(response, cfg.extract)
    if answer is None:
        return 0.0, {"extracted": None}
    component = METRICS.get(str(cfg.then["metric"]))
    inner = component.config.model_validate({k: v for k, v in cfg.then.items() if k != "version"})
    score, details = component.factory(inner, answer, item)
    return score, {"extracted": answer, "by": how, **details}
