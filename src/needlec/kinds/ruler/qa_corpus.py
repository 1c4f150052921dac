"""Fictional QA documents for RULER's QA 1 / QA 2 and the RAG-chunk task, generated without any download.

No QA corpus ships with needlec, so the documents are made here: short paragraphs about invented
people and organisations, whose names are capitalised pseudo-words from the frozen, sha256-pinned
`cwe_words` list, told through sentence templates written for needlec (several per relation).

The pseudo-words are split in two disjoint pools. Haystack documents (the distractors, built by
the `ruler_documents` haystack builder) name only entities of the *filler* pool; the gold
documents of an item name only entities of the *reserved* pool. So a distractor can never speak
of an item's subject, never state a competing value for the queried relation, and never hold the
answer; the kind still checks every answer alias against the haystack text at draw time, and the
compile checks the window again (see `needlec.compile.documents`).

- QA 1 asks one fact of one gold document (a person's birthplace or teacher, an organisation's
  founder or seat).
- QA 2 asks a two-hop question: the first gold document names a bridge entity (a founder or a
  teacher), the second gold document, about that bridge entity, holds the answer.

Everything here is pure: the same rng state gives the same documents.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Literal

from needlec.kinds.ruler.common import RulerGenerationError
from needlec.languages.wordlists import adjectives, cwe_words, nouns
from needlec.util.absence import Absence

RESERVED_EVERY = 4
"""Every RESERVED_EVERY-th pseudo-word is kept for gold documents; haystack documents use the rest."""

CRAFTS: tuple[str, ...] = (
    "potter", "clockmaker", "weaver", "bookbinder", "mapmaker", "glassblower", "stonemason",
    "shipwright", "beekeeper", "tanner", "lute maker", "bell founder", "cooper", "dyer", "printer",
)  # fmt: skip
"""Crafts of invented people (never asked about: many documents share them)."""

TRADES: tuple[str, ...] = (
    "timber", "salt", "wool", "lamp oil", "rope", "dye", "paper", "copper wire", "grain", "tea",
    "slate", "linen", "glass", "candles", "honey",
)  # fmt: skip
"""Goods an invented organisation deals in (never asked about)."""

ORG_KINDS: tuple[str, ...] = ("Guild", "Company", "Society", "Trading House", "Cooperative", "Works")
"""The second word of an organisation's name ("the Brelun Guild")."""

PERSON_INTRO: tuple[str, ...] = (
    "{P} is remembered as a {craft} of some renown.",
    "Records describe {P} as a {craft} who rarely left the workshop.",
    "{P} worked for most of a long life as a {craft}.",
    "Among the people of the valley, {P} was known first of all as a {craft}.",
)
PERSON_BIRTHPLACE: tuple[str, ...] = (
    "{P} was born in the town of {T}.",
    "The town of {T} is where {P} was born.",
    "Born in {T}, {P} kept close ties to that town for good.",
    "{P} came into the world in {T}, a town on the old river road.",
)
PERSON_TEACHER: tuple[str, ...] = (
    "{P} learned the trade as an apprentice of {M}.",
    "It was {M} who first taught {P} the craft.",
    "{P} trained for several years under {M}.",
    "As a young apprentice, {P} studied with {M}.",
)
PERSON_CLOSING: tuple[str, ...] = (
    "Several letters written by {P} survive in a private collection.",
    "A short account of this life was printed many years later.",
    "Little else is known about the family.",
    "Neighbours spoke of a patient and careful worker.",
)
ORG_INTRO: tuple[str, ...] = (
    "The {O} is a {trade} concern with a long record of steady work.",
    "The {O} deals in {trade} and is known well beyond its home district.",
    "For generations the {O} has traded in {trade}.",
    "Merchants along the coast know the {O} for its {trade}.",
)
ORG_FOUNDER: tuple[str, ...] = (
    "The {O} was founded by {F}.",
    "{F} founded the {O} after years of saving.",
    "It was {F} who set up the {O}.",
    "The {O} owes its beginning to {F}, who started it with two partners.",
)
ORG_SEAT: tuple[str, ...] = (
    "The {O} has its headquarters in {T}.",
    "The main hall of the {O} stands in the town of {T}.",
    "{T} is the seat of the {O}.",
    "The {O} keeps its offices and stores in {T}.",
)
ORG_CLOSING: tuple[str, ...] = (
    "Its books are audited every spring.",
    "The members meet twice a year to settle prices.",
    "A small museum displays its first ledgers.",
    "Its carts are painted a dark green.",
)

QA1_RELATIONS = ("birthplace", "teacher", "founder", "seat")
QA2_CHAINS = ("founder.birthplace", "founder.teacher", "teacher.birthplace")

QUESTIONS: dict[str, str] = {
    "birthplace": "In which town was {P} born?",
    "teacher": "Who was the teacher of {P}?",
    "founder": "Who founded the {O}?",
    "seat": "In which town does the {O} have its headquarters?",
    "founder.birthplace": "In which town was the founder of the {O} born?",
    "founder.teacher": "Who was the teacher of the person who founded the {O}?",
    "teacher.birthplace": "In which town was the teacher of {P} born?",
}
"""One question per relation (QA 1) or chain of two relations (QA 2)."""

Task = Literal["qa_1", "qa_2"]


@cache
def _pseudowords() -> tuple[str, ...]:
    real = set(adjectives()) | set(nouns())
    return tuple(word for word in cwe_words() if word not in real)


def reserved_names() -> tuple[str, ...]:
    """Pseudo-words (lowercase) that only gold documents use."""
    return _pseudowords()[::RESERVED_EVERY]


def filler_names() -> tuple[str, ...]:
    """Pseudo-words (lowercase) that haystack documents use."""
    return tuple(word for index, word in enumerate(_pseudowords()) if index % RESERVED_EVERY)


@dataclass(frozen=True)
class Person:
    """An invented person: full name and the facts a document states."""

    first: str
    last: str
    craft: str
    birthplace: str
    teacher: str

    @property
    def name(self) -> str:
        return f"{self.first} {self.last}"


@dataclass(frozen=True)
class Organisation:
    """An invented organisation: name and the facts a document states."""

    name: str
    trade: str
    founder: str
    seat: str


def _pick(rng: random.Random, options: tuple[str, ...]) -> str:
    return options[rng.randrange(len(options))]


def person_document(rng: random.Random, person: Person) -> str:
    """A paragraph about `person`; template choice and fact order come from `rng`."""
    p = person.name
    facts = [
        _pick(rng, PERSON_BIRTHPLACE).format(P=p, T=person.birthplace),
        _pick(rng, PERSON_TEACHER).format(P=p, M=person.teacher),
    ]
    rng.shuffle(facts)
    intro = _pick(rng, PERSON_INTRO).format(P=p, craft=person.craft)
    closing = _pick(rng, PERSON_CLOSING).format(P=p)
    return " ".join([intro, *facts, closing])


def organisation_document(rng: random.Random, org: Organisation) -> str:
    """A paragraph about `org`; template choice and fact order come from `rng`."""
    facts = [
        _pick(rng, ORG_FOUNDER).format(O=org.name, F=org.founder),
        _pick(rng, ORG_SEAT).format(O=org.name, T=org.seat),
    ]
    rng.shuffle(facts)
    intro = _pick(rng, ORG_INTRO).format(O=org.name, trade=org.trade)
    closing = _pick(rng, ORG_CLOSING)
    return " ".join([intro, *facts, closing])


def _cap(word: str) -> str:
    return word[:1].upper() + word[1:]


def filler_documents(rng: random.Random, count: int) -> list[str]:
    """`count` haystack documents about invented people and organisations of the filler pool."""
    pool = filler_names()

    def name() -> str:
        return _cap(_pick(rng, pool))

    docs: list[str] = []
    for _ in range(count):
        if rng.random() < 0.5:
            person = Person(name(), name(), _pick(rng, CRAFTS), name(), f"{name()} {name()}")
            docs.append(person_document(rng, person))
        else:
            org = Organisation(f"{name()} {_pick(rng, ORG_KINDS)}", _pick(rng, TRADES), f"{name()} {name()}", name())
            docs.append(organisation_document(rng, org))
    return docs


@cache
def template_text() -> str:
    """Every fixed word of the documents and questions, casefolded: no drawn name may occur in it."""
    parts = (
        CRAFTS + TRADES + ORG_KINDS + PERSON_INTRO + PERSON_BIRTHPLACE + PERSON_TEACHER + PERSON_CLOSING
        + ORG_INTRO + ORG_FOUNDER + ORG_SEAT + ORG_CLOSING + tuple(QUESTIONS.values())
    )  # fmt: skip
    return "\n".join(parts).casefold()


@dataclass(frozen=True)
class QADraw:
    """The gold documents of one QA item, the question and its answer aliases.

    `gold` is in hop order: for QA 2 the first document names the question's subject and the bridge
    entity, the second (about the bridge entity) holds the answer.
    """

    relation: str
    question: str
    answers: tuple[str, ...]
    gold: tuple[str, ...]
    subject: str
    bridge: str | None
    names: tuple[str, ...]
    """Every invented name of the gold documents (none occurs in the haystack)."""


class _Names:
    """Fresh reserved names for one item: never a substring of each other or of the haystack."""

    def __init__(self, rng: random.Random, haystack: str) -> None:
        self.rng = rng
        self.haystack = haystack
        self.used: list[str] = []
        self.pool = reserved_names()

    def word(self) -> str:
        for _ in range(10_000):
            word = self.pool[self.rng.randrange(len(self.pool))]
            if _taken(word, self.haystack) or any(word in other or other in word for other in self.used):
                continue
            self.used.append(word)
            return _cap(word)
        raise RulerGenerationError("could not draw a fresh invented name for a QA document")


@lru_cache(maxsize=1 << 16)
def _taken(word: str, haystack: str) -> bool:
    """Whether a name occurs in the haystack or in the documents' fixed words (a search of a whole haystack,
    kept per word: every item of a haystack asks it of the same names, and most new names lack a run of
    characters the haystack has, `Absence`). A name has no line break, so searching the two texts apart
    finds what searching them joined by one does."""
    return word in _searches(haystack) or word in template_text()


@lru_cache(maxsize=8)
def _searches(haystack: str) -> Absence:
    """The searches of one haystack (kept for the few haystacks a compile's QA items use)."""
    return Absence(haystack)


def draw_qa(rng: random.Random, task: Task, haystack: str = "", relation: str | None = None) -> QADraw:
    """Draw the gold document(s), question and answers of one QA item.

    `haystack` is the casefolded text of the item's haystacks: no drawn name occurs in it, even as
    part of a longer word. `relation` fixes the relation (QA 1) or chain (QA 2); by default it is
    drawn.
    """
    names = _Names(rng, haystack)
    choices = QA1_RELATIONS if task == "qa_1" else QA2_CHAINS
    relation = relation or _pick(rng, choices)
    if relation not in choices:
        raise RulerGenerationError(f"relation {relation!r} is not one of {', '.join(choices)} for {task}")

    def person() -> Person:
        return Person(names.word(), names.word(), _pick(rng, CRAFTS), names.word(), f"{names.word()} {names.word()}")

    def org() -> Organisation:
        return Organisation(
            f"{names.word()} {_pick(rng, ORG_KINDS)}",
            _pick(rng, TRADES),
            f"{names.word()} {names.word()}",
            names.word(),
        )

    def person_aliases(full: str) -> tuple[str, ...]:
        return (full, full.split(" ")[-1])

    first_hop, _, second_hop = relation.partition(".")
    answer: tuple[str, ...]
    bridge: str | None = None
    if first_hop in ("birthplace", "teacher"):
        subject_person = person()
        subject = subject_person.name
        gold = [person_document(rng, subject_person)]
        question = QUESTIONS[relation].format(P=subject)
        if first_hop == "birthplace":
            answer = (subject_person.birthplace,)
        else:
            answer = person_aliases(subject_person.teacher)
            bridge = subject_person.teacher
    else:
        subject_org = org()
        subject = subject_org.name
        gold = [organisation_document(rng, subject_org)]
        question = QUESTIONS[relation].format(O=subject)
        if first_hop == "seat":
            answer = (subject_org.seat,)
        else:
            answer = person_aliases(subject_org.founder)
            bridge = subject_org.founder
    if second_hop:
        assert bridge is not None
        first, last = bridge.split(" ")
        craft = _pick(rng, CRAFTS)
        second = Person(first, last, craft, names.word(), f"{names.word()} {names.word()}")
        gold.append(person_document(rng, second))
        answer = (second.birthplace,) if second_hop == "birthplace" else person_aliases(second.teacher)
    else:
        bridge = None
    return QADraw(
        relation=relation,
        question=question,
        answers=answer,
        gold=tuple(gold),
        subject=subject,
        bridge=bridge,
        names=tuple(names.used),
    )


__all__ = [
    "CRAFTS",
    "ORG_KINDS",
    "QA1_RELATIONS",
    "QA2_CHAINS",
    "QUESTIONS",
    "TRADES",
    "QADraw",
    "draw_qa",
    "filler_documents",
    "filler_names",
    "organisation_document",
    "person_document",
    "reserved_names",
]
