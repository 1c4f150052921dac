"""Answer-span metrics: `contains`, `contains_all`, `all_of`, `exact` and `regex`."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import Field, StrictBool

from needlec.registry import METRICS
from needlec.scoring.metrics.base import NormalizedConfig, Result, answer_sets, norm_aliases
from needlec.scoring.normalize import NormalizeSetting, find_word, normalize


class _WordConfig(NormalizedConfig):
    whole_word: StrictBool = Field(
        True,
        description="Require word boundaries around an alias in space-separated scripts (so 'Esi' is not "
        "found in 'beside'); CJK, Thai and similar scripts always match character by character.",
    )


class ContainsConfig(_WordConfig):
    """Score 1 when the response contains any alias of any required fact, else 0."""

    VERSION = 2
    metric: Literal["contains"] = Field(description="Any alias of the answer appears in the response as a whole word.")


class ContainsAllConfig(_WordConfig):
    """Score the fraction of required facts (one per needle) found in the response."""

    VERSION = 2
    metric: Literal["contains_all"] = Field(
        description="Fraction of the required facts with an alias in the response (multi-needle retrieval)."
    )


class AllOfConfig(_WordConfig):
    """Score 1 only when every required fact is found in the response."""

    metric: Literal["all_of"] = Field(description="1 only when every required fact appears in the response.")


def fact_hits(response: str, item: Mapping[str, Any], cfg: _WordConfig) -> list[bool]:
    """For each required fact, whether one of its aliases occurs in the response."""
    norm = cfg.norm
    hay = normalize(response, norm)
    return [
        any(find_word(hay, alias, cfg.whole_word) != -1 for alias in fact)
        for fact in norm_aliases(answer_sets(item), norm)
    ]


@METRICS.register("contains", ContainsConfig)
def contains(cfg: ContainsConfig, response: str, item: Mapping[str, Any]) -> Result:
    """1 if any alias of any required fact occurs (whole word) in the normalised response."""
    hits = fact_hits(response, item, cfg)
    return (1.0 if any(hits) else 0.0), {"hits": hits}


@METRICS.register("contains_all", ContainsAllConfig)
def contains_all(cfg: ContainsAllConfig, response: str, item: Mapping[str, Any]) -> Result:
    """Share of required facts found; 0 for an item without answers."""
    hits = fact_hits(response, item, cfg)
    return (sum(hits) / len(hits) if hits else 0.0), {"hits": hits}


@METRICS.register("all_of", AllOfConfig)
def all_of(cfg: AllOfConfig, response: str, item: Mapping[str, Any]) -> Result:
    """1 only if every required fact is found; 0 for an item without answers."""
    hits = fact_hits(response, item, cfg)
    return (1.0 if hits and all(hits) else 0.0), {"hits": hits}


class ExactConfig(NormalizedConfig):
    """Score 1 when the whole normalised response equals an alias of a required fact."""

    metric: Literal["exact"] = Field(description="The normalised response equals one of the answer's aliases.")


@METRICS.register("exact", ExactConfig)
def exact(cfg: ExactConfig, response: str, item: Mapping[str, Any]) -> Result:
    """1 if the normalised response is exactly one alias (of any fact), else 0."""
    said = normalize(response, cfg.norm)
    facts = norm_aliases(answer_sets(item), cfg.norm)
    return (1.0 if any(said in fact for fact in facts) else 0.0), {"normalized": said}


class RegexConfig(NormalizedConfig):
    """Score 1 when a regular expression matches the normalised response."""

    metric: Literal["regex"] = Field(description="A regular expression (Python syntax) must match the response.")
    pattern: str | None = Field(
        None,
        description="The pattern to search for. Without it, each alias of each answer is itself the pattern. "
        "`{answer}` in the pattern stands for any alias, escaped.",
    )
    full: StrictBool = Field(False, description="Require the pattern to match the whole normalised response.")
    normalize: NormalizeSetting = Field(
        "none", description="Normalisation applied to the response (and to `{answer}` aliases) before matching."
    )


@METRICS.register("regex", RegexConfig)
def regex(cfg: RegexConfig, response: str, item: Mapping[str, Any]) -> Result:
    """1 if the pattern (or any alias used as a pattern) matches the normalised response."""
    said = normalize(response, cfg.norm)
    aliases = [a for fact in answer_sets(item) for a in fact]
    if cfg.pattern is None:
        patterns = aliases
    elif "{answer}" in cfg.pattern:
        alt = "|".join(re.escape(normalize(a, cfg.norm)) for a in aliases)
        patterns = [cfg.pattern.replace("{answer}", f"(?:{alt})")]
    else:
        patterns = [cfg.pattern]
    match = re.fullmatch if cfg.full else re.search
    hit = any(match(p, said) is not None for p in patterns)
    return (1.0 if hit else 0.0), {}
