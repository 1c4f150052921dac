"""Typed, checked loading of the kinship language packs shipped as data files next to this module.

Why data files: translators and reviewers edit JSON, not Python, and the sha256 manifest lets a
dataset card cite the exact vocabulary and name pool an item was generated from.
"""

from __future__ import annotations

import hashlib
import json
import re
from functools import lru_cache
from importlib import resources
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from needlec.errors import NeedlecError

Gender = Literal["male", "female"]
TermGender = Literal["male", "female", "either"]
Lineage = Literal["paternal", "maternal", "either"]

_PACKAGE = "needlec.languages.kinship"
_PLACEHOLDER = re.compile(r"\{(\w+)\}")


class PackIntegrityError(NeedlecError):
    """A kinship data file is missing, malformed, or differs from the digest in `manifest.json`."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class KinTerm(_Strict):
    """One kinship term: an ancestor term (father, 外婆) or a descendant term (son, 孙女)."""

    id: str = Field(description="Stable identifier recorded in items (language independent spelling).")
    text: str = Field(min_length=1, description="The word or phrase as it appears in sentences.")
    generations: Literal[1, 2] = Field(
        description="Generation count: 1 for parent/child, 2 for grandparent/grandchild."
    )
    gender: TermGender = Field(description="Gender the term implies for the person it names.")
    lineage: Lineage = Field(
        description="Side of the family the relation runs through, seen from the younger person "
        "(a maternal grandmother is the mother's mother); `either` when the term does not say."
    )


class Template(_Strict):
    """A sentence or question template with `{placeholder}` slots."""

    id: str
    text: str = Field(min_length=1)

    def slots(self) -> list[str]:
        """The placeholder names in order of appearance."""
        return _PLACEHOLDER.findall(self.text)


class Questions(_Strict):
    """Question templates for the four ATC question types (`{subject}`, `{n}`, `{other}` slots)."""

    eldest_ancestor: str
    nth_ancestor: str
    nth_descendant: str
    distance: str


class Instructions(_Strict):
    """Answer-format instructions: multiple choice (letter) and open-ended (`\\boxed{}`)."""

    multiple_choice: str
    option_line: str
    open: str
    gender_note: str


class FewShot(_Strict):
    """Templates for few-shot examples: direct answers and reasoning paths."""

    header: str
    example: str
    direct: str
    reasoning_step: str
    reasoning: str
    test_intro: str


class KinshipVocabulary(_Strict):
    """The content of `<lang>.json`."""

    language: str = Field(min_length=2, max_length=3)
    version: int = Field(ge=1)
    joiner: str = Field(description="Glue between consecutive sentences (a space in English, nothing in Chinese).")
    list_separator: str
    ancestor_terms: list[KinTerm] = Field(min_length=2)
    descendant_terms: list[KinTerm] = Field(min_length=2)
    ancestor_templates: list[Template] = Field(min_length=8)
    descendant_templates: list[Template] = Field(min_length=2)
    questions: Questions
    instructions: Instructions
    few_shot: FewShot

    @model_validator(mode="after")
    def _templates_have_slots(self) -> KinshipVocabulary:
        for t in self.ancestor_templates:
            if sorted(set(t.slots())) != ["elder", "term", "younger"]:
                raise ValueError(f"ancestor template {t.id} needs exactly {{elder}}, {{younger}}, {{term}}")
        for t in self.descendant_templates:
            if sorted(set(t.slots())) != ["elder", "inverse", "younger"]:
                raise ValueError(f"descendant template {t.id} needs exactly {{elder}}, {{younger}}, {{inverse}}")
        ids = [t.id for t in self.ancestor_templates + self.descendant_templates]
        if len(ids) != len(set(ids)):
            raise ValueError("template ids must be unique")
        terms = [t.id for t in self.ancestor_terms + self.descendant_terms]
        if len(terms) != len(set(terms)):
            raise ValueError("term ids must be unique")
        return self


class GivenNames(_Strict):
    """Given names tagged by gender."""

    male: list[str] = Field(min_length=1)
    female: list[str] = Field(min_length=1)


class NamePool(_Strict):
    """The content of `names_<lang>.json`: full names are every `format` combination of given and family names."""

    language: str
    version: int = Field(ge=1)
    format: str = Field(description="How a full name is composed, e.g. `{given} {family}` or `{family}{given}`.")
    given: GivenNames
    family: list[str] = Field(min_length=1)

    @model_validator(mode="after")
    def _clean(self) -> NamePool:
        everything = self.given.male + self.given.female + self.family
        for name in everything:
            if not name or any(c in name for c in "'\".,;:!?()\u2019") or " " in name:
                raise ValueError(f"name part {name!r} must be one word without punctuation")
        if set(self.given.male) & set(self.given.female):
            raise ValueError("a given name cannot be tagged with both genders")
        return self

    def full_names(self, gender: Gender) -> tuple[str, ...]:
        """Every full name of one gender, in a fixed order (given-name major)."""
        given = self.given.male if gender == "male" else self.given.female
        return _compose(self.format, tuple(given), tuple(self.family))


class KinshipPack(_Strict):
    """A complete language pack: vocabulary, templates and the name pool, plus the digests of its files."""

    vocabulary: KinshipVocabulary
    names: NamePool
    digests: dict[str, str]

    @property
    def language(self) -> str:
        return self.vocabulary.language

    def term(self, term_id: str) -> KinTerm:
        """The term with this id (ancestor or descendant)."""
        for t in self.vocabulary.ancestor_terms + self.vocabulary.descendant_terms:
            if t.id == term_id:
                return t
        raise KeyError(term_id)


@lru_cache(maxsize=16)
def _compose(fmt: str, given: tuple[str, ...], family: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(fmt.format(given=g, family=f) for g in given for f in family)


def _read(name: str) -> bytes:
    try:
        return resources.files(_PACKAGE).joinpath(name).read_bytes()
    except (FileNotFoundError, OSError) as exc:
        raise PackIntegrityError(f"kinship data file {name} is missing") from exc


def file_digests() -> dict[str, str]:
    """The sha256 recorded in `manifest.json` for each kinship data file."""
    manifest = json.loads(_read("manifest.json"))
    files = manifest.get("files")
    if not isinstance(files, dict):
        raise PackIntegrityError("kinship manifest.json has no `files` table")
    return {str(k): str(v) for k, v in files.items()}


def available_languages() -> list[str]:
    """Languages that have both a vocabulary and a name pool in the manifest."""
    files = file_digests()
    return sorted(
        n[:-5] for n in files if not n.startswith("names_") and n != "manifest.json" and f"names_{n}" in files
    )


@lru_cache(maxsize=8)
def load_pack(language: str) -> KinshipPack:
    """Load and validate the pack for `language` (`en`, `zh`), checking each file against the manifest."""
    digests = file_digests()
    texts: dict[str, bytes] = {}
    for name in (f"{language}.json", f"names_{language}.json"):
        if name not in digests:
            raise PackIntegrityError(
                f"no kinship language pack for {language!r}; available: {', '.join(available_languages())}"
            )
        data = _read(name)
        actual = hashlib.sha256(data).hexdigest()
        if actual != digests[name]:
            raise PackIntegrityError(f"kinship data file {name} has sha256 {actual}, manifest says {digests[name]}")
        texts[name] = data
    vocab = KinshipVocabulary.model_validate_json(texts[f"{language}.json"])
    names = NamePool.model_validate_json(texts[f"names_{language}.json"])
    if vocab.language != language or names.language != language:
        raise PackIntegrityError(f"kinship files for {language!r} declare another language")
    return KinshipPack(
        vocabulary=vocab,
        names=names,
        digests={k: digests[k] for k in texts},
    )
