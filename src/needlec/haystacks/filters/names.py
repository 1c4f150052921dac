"""`name_collisions`: keep a pool of character names apart from the haystack.

If a character's name also occurs in the haystack, a model can answer "which character ..." by
pointing at the wrong person and still be scored right, or be misled. By default the colliding
names are dropped from the pool (recorded as the `names` exclusion, which needle kinds that draw
from a pool read); `remove_sentences` instead keeps the pool and takes those sentences out.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from pydantic import Field, StrictBool

from needlec.haystacks.filters.base import FILTERS, Document, FilterContext, FilterParams, FilterResult, Removal
from needlec.haystacks.filters.edits import normalize, sentence_spans, term_pattern


class NameCollisionsFilter(FilterParams):
    """Find pool names that occur in the haystack; drop them from the pool or drop their sentences."""

    type: Literal["name_collisions"] = Field(description="Selects the name collision filter.")
    names: list[str] = Field(
        default_factory=list, description="The pool of names.", examples=[["Yuki", "Mateo", "Wairimu"]]
    )
    from_spec: list[str] = Field(
        default_factory=list,
        description="Groups of the spec's texts used "
        "as names too, e.g. a needle set's character pool (see `literal_terms`).",
    )
    action: Literal["drop_names", "remove_sentences"] = Field(
        "drop_names",
        description="`drop_names`: the text is left alone and colliding names are "
        "excluded from the pool; `remove_sentences`: sentences containing a pool name are removed.",
    )
    case_sensitive: StrictBool = Field(
        True, description="Match letter case exactly, so the name `Will` does not collide with the word `will`."
    )


class NameCollisions:
    """Pool names that also occur in the haystack."""

    version = "2"  # 2: the word table's whole-word rule (combining marks, unspaced scripts)

    def _names(self, params: NameCollisionsFilter, ctx: FilterContext) -> list[str]:
        names = {n.strip() for n in params.names if n.strip()}
        for texts in ctx.terms(params.from_spec).values():
            names.update(t.strip() for t in texts)
        return sorted(names)

    def key_inputs(self, params: NameCollisionsFilter, ctx: FilterContext) -> dict[str, Any]:
        return {"names": self._names(params, ctx)}

    def run(self, params: NameCollisionsFilter, documents: Sequence[Document], ctx: FilterContext) -> FilterResult:
        names = self._names(params, ctx)
        folded = {normalize(n, params.case_sensitive): n for n in names}
        found: set[str] = set()
        removals: list[Removal] = []
        if folded:
            import regex

            alternation = "|".join(
                p.pattern for p in (term_pattern(n, True) for n in sorted(folded, key=len, reverse=True))
            )
            scan = regex.compile(alternation, regex.V1)
            for doc in documents:
                hits = {folded[m.group()] for m in scan.finditer(normalize(doc.text, params.case_sensitive))}
                found |= hits
                if hits and params.action == "remove_sentences":
                    for start, end in sentence_spans(doc.text):
                        text = normalize(doc.text[start:end], params.case_sensitive)
                        inside = sorted({folded[m.group()] for m in scan.finditer(text)})
                        if inside:
                            removals.append(Removal(doc.id, start, end, "name", {"name": inside[0], "names": inside}))
        exclusions = {"names": sorted(found)} if params.action == "drop_names" else {}
        return FilterResult(
            removals=removals, exclusions=exclusions, counts={"pool": len(names), "colliding": len(found)}
        )


FILTERS.register("name_collisions", NameCollisionsFilter)(NameCollisions)
