"""Haystack filters: literal terms, embedding distractors, LLM answer candidates, name collisions.

The kinds register in `needlec.registry.FILTERS` when the registry first imports them (third
parties add kinds through the `needlec.filters` entry-point group); importing this package
imports none of them. The spec type of one entry of a source's `filters:` list is
`needlec.spec.components.FilterConfig`.
"""

from needlec.haystacks.filters.base import FILTERS, FilterContext, FilterError, FilterParams, FilterResult, Removal

__all__ = ["FILTERS", "FilterContext", "FilterError", "FilterParams", "FilterResult", "Removal"]
