"""MLNeedle's needle set: fictional question-answer passages aligned across seven languages.

Every item is one short passage stating an invented fact, the question that asks for it and the
accepted answers, each in en, ar, de, es, hi, vi and zh. The facts are invented (places, names,
counts that exist nowhere else), so a model cannot answer from memory. `manifest.json` pins the
data file by sha256; `load()` refuses a file whose digest differs.
"""

from __future__ import annotations

import hashlib
import json
from functools import cache
from importlib import resources

from pydantic import BaseModel, ConfigDict, Field, model_validator

from needlec.errors import NeedlecError

PACKAGE = "needlec.languages.mlneedle"
LANGUAGES = ("en", "ar", "de", "es", "hi", "vi", "zh")
DATA_FILE = "needles.json"


class MLNeedleDataError(NeedlecError):
    """The packaged MLNeedle data is damaged or does not cover every language."""


class MLItem(BaseModel):
    """One aligned item: passage, question and answer aliases per language."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=r"^ml\d{3}$")
    passage: dict[str, str]
    question: dict[str, str]
    answers: dict[str, list[str]]

    @model_validator(mode="after")
    def _aligned(self) -> MLItem:
        for part in ("passage", "question", "answers"):
            value = getattr(self, part)
            if sorted(value) != sorted(LANGUAGES):
                raise ValueError(f"{self.id}: {part} must cover exactly {', '.join(LANGUAGES)}")
        for lang, aliases in self.answers.items():
            if not aliases or not all(a.strip() for a in aliases):
                raise ValueError(f"{self.id}: answers[{lang}] needs at least one non-empty alias")
            if not any(a in self.passage[lang] for a in aliases):
                raise ValueError(f"{self.id}: no answer alias of {lang} occurs in its {lang} passage")
        return self

    def all_aliases(self) -> tuple[str, ...]:
        """Every gold alias in every language, without repeats, in a stable order."""
        seen: dict[str, None] = {}
        for lang in LANGUAGES:
            for alias in self.answers[lang]:
                seen.setdefault(alias, None)
        return tuple(seen)


class MLNeedleSet(BaseModel):
    """The whole data file."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    version: int = Field(ge=1)
    languages: list[str]
    items: list[MLItem] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique(self) -> MLNeedleSet:
        if tuple(self.languages) != LANGUAGES:
            raise ValueError(f"languages must be {list(LANGUAGES)}")
        ids = [item.id for item in self.items]
        if len(set(ids)) != len(ids):
            raise ValueError("item ids must be unique")
        return self


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@cache
def load() -> MLNeedleSet:
    """The packaged needle set, after checking its sha256 against `manifest.json`."""
    root = resources.files(PACKAGE)
    try:
        pinned = json.loads(root.joinpath("manifest.json").read_text("utf-8"))["files"][DATA_FILE]
        data = root.joinpath(DATA_FILE).read_bytes()
    except (OSError, KeyError, ValueError) as exc:
        raise MLNeedleDataError(f"MLNeedle data is missing or its manifest is unreadable: {exc}") from exc
    if digest(data) != pinned:
        raise MLNeedleDataError(
            f"MLNeedle data file {DATA_FILE!r} has sha256 {digest(data)}, but manifest.json pins {pinned}; "
            "reinstall needlec"
        )
    return MLNeedleSet.model_validate_json(data)


__all__ = ["DATA_FILE", "LANGUAGES", "MLItem", "MLNeedleDataError", "MLNeedleSet", "load"]
