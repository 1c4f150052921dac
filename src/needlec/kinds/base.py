"""The contract of a needle kind: what is hidden in the haystack, what is asked, which answers count.

A kind expands into *cases* (an axis of the grid: one case for a fixed needle, one per pair for
a needle set) and, per item, *draws* concrete text from a seeded RNG. A kind is a config model
(with a `type` tag) registered in `needlec.registry.NEEDLES` together with a factory that takes
the validated config and returns a `NeedleKind`. The built-in kinds live in `template.py` and
`latent_hop.py`.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from needlec.errors import PluginError
from needlec.registry import NEEDLES


@dataclass(frozen=True)
class Draw:
    """Concrete needle texts, question and answers for one item."""

    case: str
    needles: tuple[str, ...]
    question: str
    answers: tuple[tuple[str, ...], ...]  # required facts, each a tuple of accepted aliases
    values: dict[str, str] = field(default_factory=dict)
    distractors: tuple[str, ...] = ()  # irrelevant sentences inserted away from the needle
    forbidden: tuple[str, ...] = ()  # must not occur in the haystack outside needles/distractors
    # Optional item fields a kind may set; each defaults to "not set" (the spec's value or absent).
    languages: tuple[str, ...] = ()  # language of each needle, then each distractor (default: item's)
    structure: dict[str, Any] | None = None  # generator structure (graph, chain, proof) for checks
    options: tuple[tuple[str, str], ...] = ()  # multiple-choice options as (letter, text)
    answer_letter: str | None = None  # letter of the correct option
    group: tuple[str, int, int] | None = None  # (name, rotation, size): rotations of one question
    expected: Literal["yes", "no"] | None = None  # verdict of an existence item
    scoring: dict[str, Any] = field(default_factory=dict)  # per-item metric parameters over the spec's
    task: str | None = None  # the item's task, over the spec's `task`
    max_new_tokens: int | None = None  # generation budget, over the prompt's `max_new_tokens`
    # item languages the kind knows itself ("needle", "haystack", "question"), over `item_languages`
    item_languages: dict[str, str] = field(default_factory=dict)
    # reading order of the texts (indices into needles, then distractors): with random depths the i-th
    # text of this order gets the i-th shallowest depth, so statements that build on each other (a
    # variable chain) appear in order; empty: the depths stay in random order
    depth_order: tuple[int, ...] = ()


@dataclass(frozen=True)
class KindProblem:
    """Something wrong with a kind's settings that the schema cannot see.

    `path` is the key path below `needle` (e.g. `("names",)`); `validate` turns it into a
    `file:line` problem at that key.
    """

    path: tuple[str | int, ...]
    message: str
    hint: str = ""


class NeedleKind(Protocol):
    """What the compiler asks of a needle kind; every hook is declared here.

    `NeedleKindBase` gives the optional hooks (`bind_haystacks`, `filter_terms`, `template_vars`,
    `spec_problems`) their do-nothing defaults (`seed_case` the identity), so a kind only writes
    `cases` and `draw`.
    """

    def cases(self) -> list[str]:
        """The case ids, an axis of the grid (one for a fixed needle)."""
        ...

    def draw(self, case: str, rng: random.Random) -> Draw:
        """Concrete texts for one item of `case`, from the item's own RNG."""
        ...

    def draw_at(self, case: str, rng: random.Random, length: int) -> Draw:
        """`draw` for an item of `length` tokens (default: `draw`, the same for every length).

        Kinds whose needles scale with the context (RULER's frequent-word counts) override it.
        """
        ...

    def draw_fitted(self, case: str, rng: random.Random, length: int, needle_tokens: int) -> Draw | None:
        """`draw_at` again where its needles took `needle_tokens` tokens with the item's tokenizer, more than
        the context holds: a kind that sizes its needles by an assumed rate of tokens (RULER's FWE stream, sized
        for cl100k_base) sizes them by the rate measured. None (the default): the needles do not scale, and the
        item fails as it did."""
        ...

    def bind_haystacks(self, texts: list[str]) -> dict[str, object]:
        """See the built haystacks once before any draw (e.g. to exclude names they contain);
        returns a JSON-able report that the manifest records under `needle_kind`."""
        ...

    def filter_terms(self) -> dict[str, list[str]]:
        """Extra groups of fixed texts a haystack filter may take from the spec (`from_spec:`)."""
        ...

    def template_vars(self) -> list[str]:
        """Names of per-item values the kind's templates use (for locating a failing template)."""
        ...

    def unknown_cases(self) -> list[str]:
        """Case ids the spec selects that the kind does not define (reported by `validate`)."""
        ...

    def all_case_ids(self) -> list[str]:
        """Every case id the kind defines, whatever the selection (for did-you-mean hints)."""
        ...

    def seed_case(self, case: str) -> str:
        """The part of a case id that seeds the item's RNG (default: all of it).

        Cases that must draw the same values (e.g. the rotations of one multiple-choice question)
        return a shared name, so they share the item seed, the window and the draw.
        """
        ...

    def draw_per_repeat(self) -> bool:
        """Whether every item of one repeat draws the same values (default: each item draws its own).

        When true, the draw's RNG is seeded by the case and the repeat only, so all lengths, depths and
        haystacks of repeat r share one needle set (NeedleBench's controlled design); the item's window
        and placement still come from the item's own seed.
        """
        ...

    def spec_problems(self) -> list[KindProblem]:
        """Problems with the kind's settings beyond the schema (e.g. a name pool smaller than needed).

        `validate` calls it on the fresh kind, and `validate --deep` again after `bind_haystacks`,
        so a kind that removes values found in the haystacks reports what is left too.
        """
        ...

    def default_reports(self) -> dict[str, Any] | None:
        """The family's `reports:` settings, used when the spec has none (None: every aggregate that
        applies, no headline rule). The value has the shape of the spec's `reports:` mapping."""
        ...

    def scales_with_length(self) -> bool:
        """Whether the needles grow with the item's length (`draw_at`), so that `validate` cannot size
        them from one draw; such a kind reports a length it cannot fill when it draws."""
        ...

    def layout(self) -> tuple[str, str] | None:
        """The layout this kind's draws need (`placement/layouts`), with the builder that provides it, or
        None when any layout will do (e.g. RULER's QA documents need `documents` from `ruler_documents`)."""
        ...


class NeedleKindBase:
    """Defaults for the optional hooks of `NeedleKind`; kinds subclass it and add `cases`/`draw`."""

    def draw(self, case: str, rng: random.Random) -> Draw:
        raise NotImplementedError

    def draw_at(self, case: str, rng: random.Random, length: int) -> Draw:
        return self.draw(case, rng)

    def draw_fitted(self, case: str, rng: random.Random, length: int, needle_tokens: int) -> Draw | None:
        return None

    def bind_haystacks(self, texts: list[str]) -> dict[str, object]:
        return {}

    def filter_terms(self) -> dict[str, list[str]]:
        return {}

    def template_vars(self) -> list[str]:
        return []

    def unknown_cases(self) -> list[str]:
        return []

    def all_case_ids(self) -> list[str]:
        return []

    def seed_case(self, case: str) -> str:
        return case

    def draw_per_repeat(self) -> bool:
        return False

    def spec_problems(self) -> list[KindProblem]:
        return []

    def default_reports(self) -> dict[str, Any] | None:
        return None

    def layout(self) -> tuple[str, str] | None:
        return None

    def scales_with_length(self) -> bool:
        return False


def needle_kind(config: Any) -> NeedleKind:
    """The needle kind a validated needle config selects (by its `type` tag); a plugin's kind comes wrapped
    so that what its hooks return is checked (`_Checked`)."""
    kind: str = config.type
    factory: Any = NEEDLES.get(kind).factory
    instance: NeedleKind = factory(config)
    origin = NEEDLES.origin(kind)
    return _Checked(instance, origin) if origin.startswith("the ") else instance


def check_draw(draw: object, who: str) -> Draw:
    """`draw` if it is a `Draw` whose texts and answers have their shapes, else a `PluginError` naming `who`
    (a kind's `draw` returning a dict, or `answers=("42",)`, which would read as the facts "4" and "2")."""
    if not isinstance(draw, Draw):
        raise PluginError(f"{who} returned {type(draw).__name__} from draw(); expected a needlec.kinds.base.Draw")
    answers = draw.answers
    facts = answers if isinstance(answers, tuple | list) else None
    if facts is None or any(
        isinstance(fact, str) or not isinstance(fact, tuple | list) or not all(isinstance(a, str) for a in fact)
        for fact in facts
    ):
        raise PluginError(
            f"{who} drew answers={answers!r:.100}: `answers` must be a tuple of facts, each a tuple of accepted "
            "strings, e.g. (('42', 'forty-two'),)"
        )
    for name in ("needles", "distractors"):
        texts = getattr(draw, name)
        if not isinstance(texts, tuple | list) or not all(isinstance(t, str) for t in texts):
            raise PluginError(f"{who} drew {name}={texts!r:.100}: `{name}` must be a tuple of strings")
    if not isinstance(draw.question, str):
        raise PluginError(f"{who} drew question={draw.question!r:.100}: `question` must be a string")
    return draw


class _Checked:
    """A plugin's needle kind with what its draw hooks return checked (`check_draw`); every other attribute
    is the kind's own."""

    def __init__(self, kind: NeedleKind, who: str) -> None:
        self._kind = kind
        self._who = who

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name in ("_kind", "_who"):  # (unpickling looks these up before __init__)
            raise AttributeError(name)
        return getattr(self._kind, name)

    def cases(self) -> list[str]:
        cases = self._kind.cases()
        if not isinstance(cases, list | tuple) or not all(isinstance(c, str) for c in cases):
            raise PluginError(f"{self._who} returned {cases!r:.100} from cases(); expected a list of case ids")
        return list(cases)

    def draw(self, case: str, rng: random.Random) -> Draw:
        return check_draw(self._kind.draw(case, rng), self._who)

    def draw_at(self, case: str, rng: random.Random, length: int) -> Draw:
        return check_draw(self._kind.draw_at(case, rng, length), self._who)

    def draw_fitted(self, case: str, rng: random.Random, length: int, needle_tokens: int) -> Draw | None:
        refit = getattr(self._kind, "draw_fitted", None)
        drawn = refit(case, rng, length, needle_tokens) if refit is not None else None
        return None if drawn is None else check_draw(drawn, self._who)


__all__ = ["NEEDLES", "Draw", "KindProblem", "NeedleKind", "NeedleKindBase", "check_draw", "needle_kind"]
