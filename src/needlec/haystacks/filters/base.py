"""What every haystack filter shares: its Protocol, its parameters' base, its context and result.

A filter reads the documents of one haystack source and says which spans to drop and why. It
never edits text itself: the stage applies the spans (see `edits`), so every filter gets the
same guarantees: the text outside a removal is byte-identical, and every removal is audited.
A filter's result is plain JSON, which is what makes whole runs cacheable.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol

from pydantic import Field

from needlec.errors import NeedlecError
from needlec.registry import FILTERS
from needlec.spec.base import StrictModel

if TYPE_CHECKING:
    from needlec.spec.models import Spec


class FilterError(NeedlecError):
    """A filter could not run: a model is missing, a server kept failing, a file is unreadable."""


class Document(Protocol):
    """Anything with an id and a text (the sources' `SourceDocument` is one)."""

    @property
    def id(self) -> str: ...

    @property
    def text(self) -> str: ...


class FilterParams(StrictModel):
    """Base of every filter's parameters.

    `operational` names the parameters that change how a filter runs (concurrency, timeouts,
    batch sizes) but never what it removes; they are left out of the cache key so tuning them
    does not throw away cached work.
    """

    operational: ClassVar[frozenset[str]] = frozenset()

    def key_params(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude=set(self.operational))

    def edit_mode(self) -> tuple[Literal["remove", "redact"], str]:
        """How the stage applies this filter's removals: `("remove", "")` or `("redact", text)`.

        Hook: filters that take sentences out (`EditParams`) let the spec choose; others remove.
        """
        return "remove", ""


class EditParams(FilterParams):
    """Parameters shared by filters that take sentences out of the text."""

    action: Literal["remove", "redact"] = Field(
        "remove",
        description="`remove` deletes each matching sentence (and the space that "
        "separated it from its neighbour); `redact` replaces it with `redaction`.",
    )
    redaction: str = Field("[…]", description="Text that replaces a sentence when `action` is `redact`.")

    def edit_mode(self) -> tuple[Literal["remove", "redact"], str]:
        return self.action, self.redaction


@dataclass(frozen=True)
class Removal:
    """One span a filter wants out, in the coordinates of the text the filter was given."""

    document: str
    start: int
    end: int
    rule: str
    detail: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "document": self.document,
            "start": self.start,
            "end": self.end,
            "rule": self.rule,
            "detail": self.detail,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Removal:
        return cls(data["document"], data["start"], data["end"], data["rule"], data.get("detail", {}))


@dataclass
class FilterResult:
    """What a filter run decided. Everything here is deterministic and cached as JSON.

    `counts` go into the manifest; `review` lists what a person should look at (candidates,
    flagged chunks); `exclusions` carries values other stages must avoid (e.g. names that
    occur in the haystack). Work done (model calls) is reported through the context instead,
    because it differs between a cold and a warm run while the result does not.
    """

    removals: list[Removal] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    review: list[dict[str, Any]] = field(default_factory=list)
    exclusions: dict[str, list[str]] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "removals": [r.to_json() for r in self.removals],
            "counts": self.counts,
            "review": self.review,
            "exclusions": self.exclusions,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> FilterResult:
        return cls(
            [Removal.from_json(r) for r in data["removals"]],
            dict(data["counts"]),
            list(data["review"]),
            {k: list(v) for k, v in data["exclusions"].items()},
        )


@dataclass
class Activity:
    """Work actually done in this process (not part of any output)."""

    model_calls: int = 0
    texts_encoded: int = 0
    cached_runs: int = 0
    fresh_runs: int = 0
    cached_verdicts: int = 0


@dataclass
class FilterContext:
    """What a filter may use besides its parameters and documents."""

    spec: Spec
    spec_dir: Path
    cache_dir: Path
    source: str
    activity: Activity
    progress: bool = False
    log: Callable[[str], None] = lambda message: None
    extended_dirs: tuple[Path, ...] = ()  # folders of the specs this one extends, nearest first

    def terms(self, groups: Sequence[str]) -> dict[str, list[str]]:
        """Texts of the spec's needle set by group (see `needlec.haystacks.filters.terms`)."""
        from needlec.haystacks.filters.terms import spec_terms

        return spec_terms(self.spec, groups)

    def resolve(self, path: str) -> Path:
        """A path relative to the spec; when it is not there, relative to a spec this one extends
        (so a spec extending a shipped one finds the decision files shipped beside it)."""
        candidate = Path(path)
        if candidate.is_absolute():
            return candidate
        for folder in self.extended_dirs:
            if not (self.spec_dir / candidate).exists() and (folder / candidate).exists():
                return folder / candidate
        return self.spec_dir / candidate

    def filter_dir(self, name: str) -> Path:
        return self.cache_dir / "filters" / name


class Filter(Protocol):
    """A filter kind. `version` goes into the cache key: bump it when results would change.

    `FILTERS` registers, beside each kind's parameters model (a `FilterParams`), a factory that
    takes no arguments and returns a `Filter`.
    """

    version: str

    def key_inputs(self, params: Any, ctx: FilterContext) -> dict[str, Any]:
        """Everything besides the parameters and input text that decides the result: resolved
        terms, the model's identity, the sha256 of decision files."""
        ...

    def run(self, params: Any, documents: Sequence[Document], ctx: FilterContext) -> FilterResult: ...


FilterFactory = Callable[[], Filter]

__all__ = ["FILTERS", "EditParams", "Filter", "FilterContext", "FilterError", "FilterFactory", "FilterParams"]
