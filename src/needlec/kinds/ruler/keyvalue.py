"""Key-value needles (RULER NIAH): single, multi-key, multi-value, multi-query and needle-filler haystacks.

A needle binds a key to a value ("A secret number filed under brisk-lantern is 4821730.").
Keys and values are adjective-noun words from the frozen lists, 7-digit numbers, or UUID strings
built from the item's rng. All strings of one item come from one `DistinctPool`, so distractor keys
never equal a queried key and no value occurs twice: every queried value is in exactly one needle.
No required value is a substring of any other string of the item, so substring scoring cannot
credit it for a distractor that contains it.
Wording has explicit singular and plural forms; nothing is made singular by replacing "are" with "is".
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from needlec.kinds.ruler.common import DistinctPool, Exclusion, RulerGenerationError, join_english
from needlec.languages.wordlists import adjectives, nouns

TokenKind = Literal["words", "numbers", "uuids"]
"""How a key or a value is drawn: adjective-noun words, 7-digit numbers, or UUID strings."""

NeedleRole = Literal["target", "distractor"]
NeedleGroup = Literal["query", "distractor_key", "filler"]
"""Why a needle is there: it answers a query, binds a distractor key, or is part of the filler haystack."""

VALUE_NOUNS: dict[str, tuple[str, str]] = {
    "words": ("word", "words"),
    "numbers": ("number", "numbers"),
    "uuids": ("code", "codes"),
}
"""Singular and plural names of each value kind, used by the wording templates."""


@dataclass(frozen=True)
class KeyValueWording:
    """Templates of a key-value item; fields: {key}, {keys}, {value}, {noun} (singular or plural).

    Each sentence that depends on the number of answers has two explicit forms.
    """

    needle: str = "A secret {noun} filed under {key} is {value}."
    instruction_singular: str = "A secret {noun} is hidden in the text below. Find it and remember it."
    instruction_plural: str = "Some secret {noun} are hidden in the text below. Find them and remember them."
    question_singular: str = "What is the secret {noun} filed under {keys}?"
    question_plural: str = "What are all the secret {noun} filed under {keys}?"
    answer_prefix_singular: str = "The secret {noun} filed under {keys} is"
    answer_prefix_plural: str = "The secret {noun} filed under {keys} are"


@dataclass(frozen=True)
class KeyValueSpec:
    """Parameters of one key-value task (RULER's k, v, q and the key/value kinds)."""

    key_kind: TokenKind = "words"
    value_kind: TokenKind = "numbers"
    num_keys: int = 1
    """Keys that get needles; `num_keys - num_queries` of them are distractor keys (multi-key)."""
    num_values: int = 1
    """Values per key; all values of a queried key are required answers (multi-value)."""
    num_queries: int = 1
    """Keys asked about in one question (multi-query)."""
    wording: KeyValueWording = field(default_factory=KeyValueWording)


@dataclass(frozen=True)
class KeyValueNeedle:
    """One rendered needle and what it binds; `group` tells queried, distractor-key and filler needles apart."""

    key: str
    value: str
    role: NeedleRole
    group: NeedleGroup
    text: str


@dataclass(frozen=True)
class KeyValueItem:
    """A drawn key-value item: needles to place, filler needles (the haystack), question and answers."""

    needles: tuple[KeyValueNeedle, ...]
    """Needles to insert, in a per-item random order (queried and distractor-key needles)."""
    filler: tuple[KeyValueNeedle, ...]
    """Needle-filler haystack sentences (RULER "needle" haystack); any prefix keeps all guarantees."""
    queries: tuple[str, ...]
    answers: tuple[tuple[str, ...], ...]
    """Required facts, each a one-alias list: every value of every queried key, in query order."""
    instruction: str
    question: str
    answer_prefix: str
    plural: bool
    """Whether the question asks for more than one value (selects the plural question and prefix)."""


def _word_token(rng: random.Random) -> str:
    return f"{rng.choice(adjectives())}-{rng.choice(nouns())}"


def _number_token(rng: random.Random) -> str:
    return str(rng.randint(1_000_000, 9_999_999))


def _uuid_token(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


TOKEN_MAKERS = {"words": _word_token, "numbers": _number_token, "uuids": _uuid_token}
"""One drawing function per token kind; each uses only the rng it is given."""


def draw_token(pool: DistinctPool, kind: TokenKind, what: str, accept: Callable[[str], bool] | None = None) -> str:
    """Draw a string of `kind` that is fresh within the pool's item (and passes `accept`)."""
    if kind not in TOKEN_MAKERS:
        raise RulerGenerationError(f"unknown token kind {kind!r}; expected one of {', '.join(TOKEN_MAKERS)}")
    return pool.draw(TOKEN_MAKERS[kind], what, accept)


def _needle(spec: KeyValueSpec, key: str, value: str, role: NeedleRole, group: NeedleGroup) -> KeyValueNeedle:
    noun = VALUE_NOUNS[spec.value_kind][0]
    text = spec.wording.needle.format(key=key, value=value, noun=noun)
    return KeyValueNeedle(key=key, value=value, role=role, group=group, text=text)


def generate_keyvalue(
    rng: random.Random, spec: KeyValueSpec, num_filler: int = 0, exclude: Sequence[str] | Exclusion = ()
) -> KeyValueItem:
    """Draw one key-value item.

    `num_filler` distractor needles with fresh keys and values form the needle-filler haystack;
    `exclude` lists strings that must not be drawn (e.g. words found in the haystack).
    """
    if spec.num_queries < 1 or spec.num_values < 1:
        raise RulerGenerationError("a key-value task needs at least one query and one value per key")
    if spec.num_keys < spec.num_queries:
        raise RulerGenerationError(f"num_keys ({spec.num_keys}) must be at least num_queries ({spec.num_queries})")
    pool = DistinctPool(rng, exclude)
    answers_so_far: list[str] = []

    def contains_no_answer(text: str) -> bool:
        # A later string may not contain a required value: "bold-anteater" would credit "bold-ant".
        return not any(answer in text for answer in answers_so_far)

    def inside_nothing(text: str) -> bool:
        # A required value may not sit inside any string drawn before it.
        return not pool.holds_inside(text)

    keys = [draw_token(pool, spec.key_kind, "key") for _ in range(spec.num_keys)]
    queries = keys[: spec.num_queries]
    needles: list[KeyValueNeedle] = []
    answers: list[tuple[str, ...]] = []
    for index, key in enumerate(keys):
        queried = index < spec.num_queries
        for _ in range(spec.num_values):
            if queried:
                value = draw_token(
                    pool, spec.value_kind, "value", lambda text: inside_nothing(text) and contains_no_answer(text)
                )
                answers_so_far.append(value)
                needles.append(_needle(spec, key, value, "target", "query"))
                answers.append((value,))
            else:
                value = draw_token(pool, spec.value_kind, "value", contains_no_answer)
                needles.append(_needle(spec, key, value, "distractor", "distractor_key"))
    rng.shuffle(needles)
    filler = tuple(
        _needle(spec, draw_token(pool, spec.key_kind, "filler key", contains_no_answer),
                draw_token(pool, spec.value_kind, "filler value", contains_no_answer),
                "distractor", "filler")
        for _ in range(num_filler)
    )  # fmt: skip
    plural = len(answers) > 1
    many_needles = len(needles) + len(filler) > 1
    singular_noun, plural_noun = VALUE_NOUNS[spec.value_kind]
    noun = plural_noun if plural else singular_noun
    hidden_noun = plural_noun if many_needles else singular_noun
    keys_text = join_english(queries)
    wording = spec.wording
    return KeyValueItem(
        needles=tuple(needles),
        filler=filler,
        queries=tuple(queries),
        answers=tuple(answers),
        instruction=(wording.instruction_plural if many_needles else wording.instruction_singular).format(
            noun=hidden_noun
        ),
        question=(wording.question_plural if plural else wording.question_singular).format(noun=noun, keys=keys_text),
        answer_prefix=(wording.answer_prefix_plural if plural else wording.answer_prefix_singular).format(
            noun=noun, keys=keys_text
        ),
        plural=plural,
    )
