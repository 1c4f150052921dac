"""Haystack filters: literal terms, embedding distractors, LLM answer candidates, name collisions.

Importing this package registers the built-in kinds; third parties add kinds through the
`needlec.haystacks.filters` entry-point group. `FilterConfig` is the spec type of one entry of a source's
`filters:` list.
"""

from needlec.haystacks.filters import embedding, literal, llm, names  # noqa: F401  (registers the kinds)
from needlec.haystacks.filters.base import FILTERS, FilterContext, FilterError, FilterParams, FilterResult, Removal
from needlec.registry import registry_union

FilterConfig = registry_union(FILTERS, "type")

__all__ = ["FILTERS", "FilterConfig", "FilterContext", "FilterError", "FilterParams", "FilterResult", "Removal"]
