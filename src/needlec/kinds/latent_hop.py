"""Latent-hop needles (NoLiMa): the question and its needle share no words.

A needle template places a character and a needle keyword W_n; the question asks about a
question keyword W_q that is tied to W_n only by world knowledge (one hop) or through an
intermediate fact (two hops). Each group has a default and an inverted word order. The gold
answer is the character, drawn per item from a name pool from which every name that occurs in
the haystacks has been removed.
"""

from __future__ import annotations

import functools
import random
import re
from collections.abc import Set
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import Field, StrictBool, model_validator

from needlec.errors import NeedlecError
from needlec.kinds.base import Draw, KindProblem, NeedleKindBase
from needlec.languages.names import BUILTIN_NAMES, spellings
from needlec.registry import NEEDLES
from needlec.spec.base import KeyedValueError, StrictModel
from needlec.spec.templates import render

_WORD = re.compile(r"\w+(?:[-'’]\w+)*")
_FUNCTION_WORDS = frozenset({"a", "an", "the", "of", "and", "or", "to", "in", "on", "at", "by", "for", "with", "from"})
Hop = Literal["one", "two"]
Order = Literal["default", "inverted"]


class KeywordPair(StrictModel):
    """A needle keyword W_n with the question keyword(s) W_q it implies."""

    id: str = Field(pattern=r"^[a-z0-9_-]+$", description="Identifier, unique within its group.")
    w_n: str = Field(description="Needle keyword, written into the needle.", examples=["the Atomium"])
    one_hop: str | None = Field(None, description="W_q one association away from W_n.", examples=["Brussels"])
    two_hop: str | None = Field(
        None,
        description="W_q two associations away from W_n: reaching it needs an intermediate entity that "
        "neither keyword names (a landmark's city, then the region the city lies in).",
        examples=["Saxony"],
    )
    plural: StrictBool = Field(
        False,
        description="W_n is grammatically plural (`the Petronas Towers`); templates read the "
        "value `{{ number }}` (`plural` or `singular`) to pick a verb form, e.g. "
        "`{{ 'stand' if number == 'plural' else 'stands' }}`.",
    )

    @model_validator(mode="after")
    def _some_question(self) -> KeywordPair:
        if self.one_hop is None and self.two_hop is None:
            raise ValueError("a keyword pair needs `one_hop`, `two_hop` or both")
        return self

    def w_q(self, hop: Hop) -> str | None:
        return self.one_hop if hop == "one" else self.two_hop


class NeedleGroup(StrictModel):
    """Needle templates in both word orders, question templates, and the group's keyword pairs."""

    id: str = Field(pattern=r"^[a-z0-9_-]+$", description="Identifier of the group.")
    default: str = Field(
        description="Needle template with the character before W_n; uses "
        "`{{ char }}` and `{{ w_n }}`, usually after a short preface phrase.",
        examples=["Actually, {{ char }} lives beside {{ w_n }}."],
    )
    inverted: str = Field(
        description="Needle template with W_n before the character.",
        examples=["Actually, {{ w_n }} stands beside the home of {{ char }}."],
    )
    question: str = Field(
        description="Question template using `{{ w_q }}`.", examples=["Which character has been to {{ w_q }}?"]
    )
    direct_question: str = Field(
        description="Question naming W_n itself (`{{ w_n }}`), for the literal-match ablation.",
        examples=["Which character lives beside {{ w_n }}?"],
    )
    pairs: list[KeywordPair] = Field(min_length=1, description="Keyword pairs of this group.")


class CaseSelection(StrictModel):
    """Which question-needle pairs a config uses."""

    hops: list[Hop] = Field(
        default_factory=lambda: ["one", "two"],  # type: ignore[arg-type]
        description="Hops to include.",
    )
    orders: list[Order] = Field(
        default_factory=lambda: ["default", "inverted"],  # type: ignore[arg-type]
        description="Word orders to include.",
    )
    cases: list[str] | None = Field(
        None,
        description="Only these case ids (`GROUP.PAIR.HOP.ORDER`), e.g. a hard subset.",
        examples=[["landmarks.alhambra.two.inverted"]],
    )


class LatentHopNeedle(StrictModel):
    """NoLiMa-style needles: keyword pairs linked by latent knowledge, a character as answer."""

    type: Literal["latent_hop"] = Field(description="Selects latent-hop needles.")
    groups: list[NeedleGroup] = Field(min_length=1, description="Needle groups.")
    names: list[str] | None = Field(
        None, description="Character name pool; the built-in pool of 120 names from many regions when omitted."
    )
    exclude_names_in_haystack: StrictBool = Field(
        True,
        description="Drop every name that occurs in any haystack, as a word or inside a longer word, in any "
        "letter case.",
    )
    select: CaseSelection = Field(
        default_factory=CaseSelection,  # type: ignore[arg-type]
        description="Subset of question-needle pairs.",
    )
    question_mode: Literal["latent", "direct"] = Field(
        "latent",
        description="`latent`: ask about W_q; `direct`: ask about W_n itself (literal match, like vanilla NIAH).",
    )
    choices: int = Field(
        0,
        ge=0,
        le=26,
        description="With 2 or more, the question lists this "
        "many character names as options, the answer among them (literal-match "
        "multiple choice). 0 = open question.",
    )
    choices_template: str = Field(
        "{{ question }} Options: {{ options }}.",
        description="How options are added to the question; uses `{{ question }}` and `{{ options }}` "
        "(the names joined by commas).",
    )
    distractor: str | None = Field(
        None,
        description="Template of an irrelevant sentence that "
        "contains W_q (`{{ w_q }}`), inserted between 20% and 80% of "
        "the context and at least 20% of it away from the needle.",
        examples=["There was a long report about {{ w_q }} in the paper."],
    )

    @model_validator(mode="after")
    def _unique_ids(self) -> LatentHopNeedle:
        groups = [g.id for g in self.groups]
        for i, group_id in enumerate(groups):
            if group_id in groups[:i]:
                raise KeyedValueError(f"group id {group_id!r} is used twice; ids must be unique", "groups", i, "id")
        for g, group in enumerate(self.groups):
            ids = [p.id for p in group.pairs]
            for i, pair_id in enumerate(ids):
                if pair_id in ids[:i]:
                    raise KeyedValueError(
                        f"pair id {pair_id!r} is used twice in group {group.id!r}", "groups", g, "pairs", i, "id"
                    )
        return self


@dataclass(frozen=True)
class Case:
    id: str
    group: NeedleGroup
    pair: KeywordPair
    hop: Hop
    order: Order


class LatentHopKind(NeedleKindBase):
    def __init__(self, config: LatentHopNeedle) -> None:
        self.config = config
        self.pool: tuple[str, ...] = tuple(config.names or BUILTIN_NAMES)
        self.excluded: tuple[str, ...] = ()
        self._cases = {c.id: c for c in self._all_cases()}

    def _all_cases(self) -> list[Case]:
        chosen = set(self.config.select.cases) if self.config.select.cases is not None else None
        out = []
        for group in self.config.groups:
            for pair in group.pairs:
                for hop in ("one", "two"):
                    if pair.w_q(hop) is None or hop not in self.config.select.hops:
                        continue
                    for order in ("default", "inverted"):
                        case_id = f"{group.id}.{pair.id}.{hop}.{order}"
                        if order in self.config.select.orders and (chosen is None or case_id in chosen):
                            out.append(Case(case_id, group, pair, hop, order))
        return out

    def default_reports(self) -> dict[str, Any] | None:
        """NoLiMa reports its effective length against the base score (85% rule)."""
        return {"effective_length": {"rule": "nolima"}}

    def cases(self) -> list[str]:
        return list(self._cases)

    def all_case_ids(self) -> list[str]:
        """Every case id the groups define, whatever the selection."""
        every = CaseSelection(cases=None, hops=["one", "two"], orders=["default", "inverted"])
        return [c.id for c in LatentHopKind(self.config.model_copy(update={"select": every}))._all_cases()]

    def unknown_cases(self) -> list[str]:
        every = set(self.all_case_ids())
        return [c for c in self.config.select.cases or [] if c not in every]

    def bind_haystacks(self, texts: list[str]) -> dict[str, object]:
        """Remove names that occur in any haystack; returns what was excluded, for the manifest."""
        if not self.config.exclude_names_in_haystack:
            return {"pool": len(self.pool), "excluded": []}
        vocabularies = [_words(t) for t in texts]
        exact = set().union(*(v[0] for v in vocabularies))
        folded = set().union(*(v[1] for v in vocabularies))
        sensitive = [n for n in self.pool if n in exact]
        insensitive = [n for n in self.pool if n not in exact and n.casefold() in folded]
        whole = set(sensitive + insensitive)
        # a name left is no word itself (folded), so it is inside one where it occurs in the words joined by a
        # NUL that no name holds: one substring search per name instead of one per name and word
        joined = "\x00".join(sorted(folded))
        inside = [
            n
            for n in self.pool
            if n not in whole and (_inside_a_word(n.casefold(), folded) if "\x00" in n else n.casefold() in joined)
        ]
        self.excluded = tuple(sensitive + insensitive + inside)
        self.pool = tuple(n for n in self.pool if n not in set(self.excluded))
        return {
            "pool": len(self.pool) + len(self.excluded),
            "excluded": sorted(self.excluded),
            "excluded_exact_case": len(sensitive),
            "excluded_other_case": len(insensitive),
            "excluded_inside_word": len(inside),
        }

    def filter_terms(self) -> dict[str, list[str]]:
        """`w_q_words`: every content word of every question keyword of the selected cases.

        A haystack sentence holding one word of a multi-word W_q ("Kuala" of "Kuala Lumpur") is
        as much a lexical cue as the whole keyword, so the shipped spec filters on these words.
        """
        words = set()
        for case in self._cases.values():
            for word in _WORD.findall(case.pair.w_q(case.hop) or ""):
                if word.casefold() not in _FUNCTION_WORDS:
                    words.add(word)
        return {"w_q_words": sorted(words)}

    def spec_problems(self) -> list[KindProblem]:
        """A name pool (after removing names found in the haystacks, once bound) too small to draw from."""
        needed = max(2, self.config.choices)
        if len(self.pool) >= needed:
            return []
        if self.excluded:
            message = (
                f"the name pool has {len(self.pool)} name(s) left after removing {len(self.excluded)} found in "
                f"the haystacks ({', '.join(self.excluded[:20])}{', ...' if len(self.excluded) > 20 else ''}); "
                f"at least {needed} are needed"
            )
        else:
            message = f"the name pool has {len(self.pool)} name(s); at least {needed} are needed"
        return [
            KindProblem(("names",), message, "Names found in the haystacks are removed too, so give a generous pool.")
        ]

    def draw(self, case_id: str, rng: random.Random) -> Draw:
        case = self._cases[case_id]
        if len(self.pool) < max(2, self.config.choices):
            raise NeedlecError(
                f"needle.names: the character name pool has {len(self.pool)} name(s) left after removing "
                f"names found in the haystacks ({', '.join(self.excluded) or 'none'}); "
                f"at least {max(2, self.config.choices)} are needed. Add names to `needle.names`."
            )
        char = rng.choice(self.pool)
        w_q = case.pair.w_q(case.hop) or ""
        number = "plural" if case.pair.plural else "singular"
        values: dict[str, str] = {"char": char, "w_n": case.pair.w_n, "w_q": w_q, "number": number}
        template = case.group.default if case.order == "default" else case.group.inverted
        needle = render(template, values)
        if self.config.question_mode == "direct":
            question = render(case.group.direct_question, values)
        else:
            question = render(case.group.question, values)
        lettered: tuple[tuple[str, str], ...] = ()
        if self.config.choices >= 2:
            others = rng.sample([n for n in self.pool if n != char], self.config.choices - 1)
            options = [char, *others]
            rng.shuffle(options)
            question = render(self.config.choices_template, {"question": question, "options": ", ".join(options)})
            # Recorded in the item (A, B, ... in the order listed) so the `choice` metric can tell
            # a response naming one option from one naming several.
            lettered = tuple((chr(ord("A") + i), name) for i, name in enumerate(options))
        distractors = (render(self.config.distractor, values),) if self.config.distractor else ()
        return Draw(
            case=case_id,
            needles=(needle,),
            question=question,
            answers=(spellings(char),),
            values={
                **values,
                "hop": case.hop,
                "order": case.order,
                "group": case.group.id,
                "pair": case.pair.id,
            },
            distractors=distractors,
            forbidden=(char, w_q),
            options=lettered,
            answer_letter=next((letter for letter, name in lettered if name == char), None),
        )


@functools.lru_cache(maxsize=64)
def _words(text: str) -> tuple[frozenset[str], frozenset[str]]:
    """Every word of a text (hyphenated words kept whole), as written and case-folded."""
    words = frozenset(_WORD.findall(text))
    return words, frozenset(w.casefold() for w in words)


def _inside_a_word(name: str, words: Set[str]) -> bool:
    """Whether a case-folded name is part of a longer (case-folded) word, as "nadia" of "canadian"."""
    return any(name in word and name != word for word in words)


NEEDLES.register("latent_hop", LatentHopNeedle)(LatentHopKind)
