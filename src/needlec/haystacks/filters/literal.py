"""`literal_terms`: take out every sentence that contains a given term or matches a regex.

The plainest guard against a haystack that answers the question by accident: list the answer
(or take it from the spec) and every sentence mentioning it goes. Matching is Unicode-aware:
both sides are NFKC-normalized and, unless `case_sensitive`, case-folded.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import Field, StrictBool, field_validator

from needlec.haystacks.filters.base import FILTERS, Document, EditParams, FilterContext, FilterResult, Removal
from needlec.haystacks.filters.edits import normalize, sentence_spans, term_pattern


class LiteralTermsFilter(EditParams):
    """Remove or redact sentences that contain any of the terms or match any of the regexes."""

    type: Literal["literal_terms"] = Field(description="Selects the literal terms filter.")
    terms: list[str] = Field(
        default_factory=list,
        description="Words or phrases; a sentence containing one is taken out.",
        examples=[["yellow tram", "Lisbon"]],
    )
    regexes: list[str] = Field(
        default_factory=list,
        description="Python regular expressions searched in each sentence (not normalized; `case_sensitive` applies).",
        examples=[[r"\btram(s|way)?\b"]],
    )
    from_spec: list[str] = Field(
        default_factory=list,
        description="Groups of the spec's own texts to use as terms: "
        "`needles`, `questions`, `answers`, plus any group the needle kind offers (e.g. a needle "
        "set's question keywords). Texts that use per-item random values are skipped.",
        examples=[["answers"]],
    )
    case_sensitive: StrictBool = Field(
        False,
        description="Match letter case exactly. Off by default: "
        "terms are case-folded, so `Straße` also matches `STRASSE`.",
    )
    whole_words: StrictBool = Field(
        True,
        description="A term must not be part of a longer word (for "
        "scripts written without spaces, such as Chinese, this is not "
        "required).",
    )

    @field_validator("regexes")
    @classmethod
    def _compiles(cls, value: list[str]) -> list[str]:
        for pattern in value:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"regex {pattern!r} does not compile: {exc}") from None
        return value


class LiteralTerms:
    """Sentences containing listed terms or matching regexes."""

    version = "2"  # 2: the word table's whole-word rule (combining marks, unspaced scripts)

    def _terms(self, params: LiteralTermsFilter, ctx: FilterContext) -> list[tuple[str, str]]:
        found = [("terms", t) for t in params.terms if t.strip()]
        for group, texts in ctx.terms(params.from_spec).items():
            found.extend((group, t) for t in texts)
        return sorted(set(found))

    def key_inputs(self, params: LiteralTermsFilter, ctx: FilterContext) -> dict[str, Any]:
        return {"terms": [list(t) for t in self._terms(params, ctx)]}

    def run(self, params: LiteralTermsFilter, documents: Sequence[Document], ctx: FilterContext) -> FilterResult:
        flags = 0 if params.case_sensitive else re.IGNORECASE
        terms = self._terms(params, ctx)
        # each term's folded text with its pattern: a sentence that lacks the text as a substring cannot match
        # the pattern (the text, escaped, with lookarounds for whole words), so the search runs only where it is
        folded_terms = [normalize(term, params.case_sensitive) for _, term in terms]
        patterns = [
            (group, term, text, term_pattern(text, params.whole_words))
            for (group, term), text in zip(terms, folded_terms, strict=True)
        ]
        regexes = [(r, re.compile(r, flags)) for r in params.regexes]
        removals = []
        for doc in documents:
            for start, end in sentence_spans(doc.text):
                sentence = doc.text[start:end]
                folded = normalize(sentence, params.case_sensitive)
                hits = [
                    {"term": term, "group": group}
                    for group, term, text, p in patterns
                    if text in folded and p.search(folded)
                ]
                hits += [{"regex": source} for source, p in regexes if p.search(sentence)]
                if hits:
                    rule = "term" if "term" in hits[0] else "regex"
                    removals.append(Removal(doc.id, start, end, rule, {"matches": hits}))
        return FilterResult(removals=removals, counts={"terms": len(terms), "regexes": len(regexes)})


FILTERS.register("literal_terms", LiteralTermsFilter)(LiteralTerms)
