"""Passkey items: a key hidden in filler text, as a number from a range or a pattern such as ADJ-NOUN-DDDD.

Numeric keys are drawn uniformly from [low, high] (the classic passkey uses 1..50000); pattern
keys fill `{ADJ}`, `{NOUN}` and `{WORD}` slots from the frozen word lists and `{D...}` slots with
that many digits, e.g. "{ADJ}-{NOUN}-{DDDD}" gives "AMBER-FALCON-7749". An optional abstention
instruction lets scoring sort a response into correct, abstained ("Not found") or wrong.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from needlec.kinds.ruler.common import DistinctPool, Exclusion, RulerGenerationError
from needlec.languages.wordlists import adjectives, nouns

SLOT = re.compile(r"\{(ADJ|NOUN|WORD|D+)\}")
"""Pattern slots: an adjective, a noun, either, or a run of digits (one D per digit)."""


@dataclass(frozen=True)
class PasskeyWording:
    """Templates of a passkey item; {key} in the needle."""

    needle: str = "The access code is {key}. Keep it in mind: {key} is the access code."
    instruction: str = (
        "Somewhere in the long stretch of unrelated text below there is one important piece of "
        "information. Find it and keep it in mind."
    )
    question: str = "What is the access code?"
    answer_prefix: str = "The access code is"
    abstain_instruction: str = "If the text holds no access code, reply exactly: Not found."
    abstain_phrases: tuple[str, ...] = ("not found",)


@dataclass(frozen=True)
class PasskeySpec:
    """Parameters of a passkey: `kind` number (range low..high) or pattern (see SLOT)."""

    kind: Literal["number", "pattern"] = "number"
    low: int = 1
    high: int = 50_000
    pattern: str = "{ADJ}-{NOUN}-{DDDD}"
    case: Literal["upper", "lower", "title"] = "upper"
    """Letter case of the words in a pattern key."""
    abstain: bool = False
    """Add the abstention instruction and record the phrases that count as abstaining."""
    wording: PasskeyWording = field(default_factory=PasskeyWording)


@dataclass(frozen=True)
class PasskeyItem:
    """A drawn passkey item."""

    key: str
    needle: str
    instruction: str
    question: str
    answer_prefix: str
    answers: tuple[tuple[str, ...], ...]
    abstain_phrases: tuple[str, ...]


def _case(word: str, case: str) -> str:
    if case == "upper":
        return word.upper()
    if case == "title":
        return word.title()
    return word.lower()


def fill_pattern(rng: random.Random, pattern: str, case: str = "upper") -> str:
    """Fill every slot of `pattern` from `rng`; text outside slots is kept as written."""
    if not SLOT.search(pattern):
        raise RulerGenerationError(f"passkey pattern {pattern!r} has no slot such as {{ADJ}}, {{NOUN}} or {{DDDD}}")

    def slot(match: re.Match[str]) -> str:
        name = match.group(1)
        if name == "ADJ":
            return _case(rng.choice(adjectives()), case)
        if name == "NOUN":
            return _case(rng.choice(nouns()), case)
        if name == "WORD":
            return _case(rng.choice(adjectives() + nouns()), case)
        return "".join(rng.choice("0123456789") for _ in name)

    return SLOT.sub(slot, pattern)


def generate_passkey(rng: random.Random, spec: PasskeySpec, exclude: Sequence[str] | Exclusion = ()) -> PasskeyItem:
    """Draw one passkey; `exclude` lists keys that must not be drawn (e.g. numbers in the haystack)."""
    pool = DistinctPool(rng, exclude)
    if spec.kind == "number":
        if spec.low > spec.high:
            raise RulerGenerationError(f"passkey range is empty: low {spec.low} > high {spec.high}")
        key = pool.draw(lambda r: str(r.randint(spec.low, spec.high)), "passkey")
    elif spec.kind == "pattern":
        key = pool.draw(lambda r: fill_pattern(r, spec.pattern, spec.case), "passkey")
    else:
        raise RulerGenerationError(f"unknown passkey kind {spec.kind!r}")
    wording = spec.wording
    instruction = wording.instruction
    if spec.abstain:
        instruction = f"{instruction} {wording.abstain_instruction}"
    return PasskeyItem(
        key=key,
        needle=wording.needle.format(key=key),
        instruction=instruction,
        question=wording.question,
        answer_prefix=wording.answer_prefix,
        answers=((key,),),
        abstain_phrases=wording.abstain_phrases if spec.abstain else (),
    )
