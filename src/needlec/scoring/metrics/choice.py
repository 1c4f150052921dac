"""Multiple-choice metrics: `choice` (one option picked) and `circular` (CircularEval groups).

The chosen options are every option letter written on its own (A, (B), "C.", "Answer: D", "答案是B",
full-width letters included) and every option text found as a whole word. Exactly one chosen
option that is the right one scores 1; a response that picks several options, or none, scores 0,
so listing every option never pays and a hedge ("B or C", "B/C", "B 或 C", "either A or D",
"B、C") is wrong even when one of its options is right.

Version 2: a lone capital "A" or "I" followed by a lower-case word is taken for the English article
or pronoun ("A good guess is B") only when that word is not one that follows an option ("or",
"and", "is", ...); version 1 dropped every letter followed by a lower-case word, so "A or D" and
"B or C" counted as one option.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from typing import Any, ClassVar, Literal

from pydantic import Field, StrictBool

from needlec.registry import METRICS
from needlec.scoring.metrics.base import MetricConfig, Result, answer_sets
from needlec.scoring.metrics.extract import Extractor, extract
from needlec.scoring.normalize import find_word, normalize, resolve


def _options(item: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(letter, text) pairs of an item's options."""
    out = []
    for i, opt in enumerate(item.get("options") or []):
        if isinstance(opt, str):
            out.append((chr(ord("A") + i), opt))
        else:
            out.append((str(opt.get("letter", chr(ord("A") + i))), str(opt.get("text", ""))))
    return out


def _right_letter(item: Mapping[str, Any], options: list[tuple[str, str]]) -> str | None:
    letter = item.get("answer_letter")
    if letter:
        return str(letter)
    norm = resolve("standard")
    answers = {normalize(a, norm) for fact in answer_sets(item) for a in fact}
    for opt_letter, text in options:
        if normalize(text, norm) in answers:
            return opt_letter
    return None


# Capital letters that are also English words (the article "A", the pronoun "I").
_WORD_LETTERS = frozenset({"A", "I"})
# Lower-case words that follow a letter naming an option, not the article or pronoun: "A or D",
# "A and B", "A is right", "either A nor B". "I" and "A" before any other lower-case word are English.
_AFTER_OPTION = frozenset(
    {
        "or",
        "and",
        "nor",
        "vs",
        "versus",
        "but",
        "then",
        "too",
        "also",
        "is",
        "was",
        "seems",
        "appears",
        "looks",
        "sounds",
        "fits",
        "matches",
        "would",
        "could",
        "should",
        "might",
        "must",
        "will",
        "can",
        "may",
    }
)


def _names_letter(text: str, letter: str) -> bool:
    """Whether `letter` stands alone somewhere in `text` as an option letter."""
    pattern = rf"(?<![A-Za-z0-9]){re.escape(letter)}(?![A-Za-z0-9])(?:\s+([a-z]+)\b)?"
    for match in re.finditer(pattern, text):
        follower = match.group(1)
        if letter in _WORD_LETTERS and follower is not None and follower not in _AFTER_OPTION:
            continue  # "A good guess", "I think": English, not an option
        return True
    return False


def chosen_options(response: str, options: list[tuple[str, str]], letters: bool = True) -> set[str]:
    """Letters of every option the response picks, by letter or by text."""
    picked: set[str] = set()
    if letters:
        text = unicodedata.normalize("NFKC", response)  # full-width Ｂ is B
        for letter, _ in options:
            if _names_letter(text, letter):
                picked.add(letter)
    norm = resolve("standard")
    said = normalize(response, norm)
    for letter, text in options:
        wanted = normalize(text, norm)
        if wanted and find_word(said, wanted) != -1:
            picked.add(letter)
    return picked


class ChoiceConfig(MetricConfig):
    """Score 1 when the response picks exactly one option and it is the right one."""

    VERSION: ClassVar[int] = 2

    metric: Literal["choice"] = Field(description="Multiple choice: exactly one option, the right one, is picked.")
    letters: StrictBool = Field(True, description="Accept option letters (A, B, ...) as well as option texts.")
    extract: tuple[Extractor, ...] = Field(
        (),
        description="Extract the final answer first (see `final_answer`); empty scores the whole response.",
    )


def _judge(cfg: ChoiceConfig, response: str, item: Mapping[str, Any]) -> Result:
    options = _options(item)
    if not options:
        # Options given only as answers (no `options` field): every alias list is one option.
        return 0.0, {"error": "item has no options"}
    text = response
    if cfg.extract:
        got, _ = extract(response, cfg.extract)
        text = got or ""
    picked = chosen_options(text, options, cfg.letters)
    right = _right_letter(item, options)
    score = 1.0 if right is not None and picked == {right} else 0.0
    return score, {"picked": sorted(picked), "right": right}


@METRICS.register("choice", ChoiceConfig)
def choice(cfg: ChoiceConfig, response: str, item: Mapping[str, Any]) -> Result:
    """1 if the response picks exactly the right option, else 0."""
    return _judge(cfg, response, item)


class CircularConfig(ChoiceConfig):
    """`choice` per item; a question counts only if all its rotations (its `group`) are right."""

    metric: Literal["circular"] = Field(  # type: ignore[assignment]
        description="CircularEval: per-item choice; the group score needs every rotation right."
    )


@METRICS.register("circular", CircularConfig)
def circular(cfg: CircularConfig, response: str, item: Mapping[str, Any]) -> Result:
    """Per-item choice score; the report's `circular` aggregate combines each group's rotations."""
    score, details = _judge(cfg, response, item)
    group = item.get("group") or {}
    return score, {**details, "group": group.get("id"), "rotation": group.get("rotation")}
