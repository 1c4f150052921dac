"""What every metric shares: the config base class, the result type, and item accessors.

A metric is a config model (its spec arguments) plus a pure function
`(config, response, item) -> (score in [0, 1], details)`, registered in `needlec.registry.METRICS`
under its `metric:` name. Each config declares a `version`, bumped whenever the function's
results change; the version is written into every compiled item's `scoring` and checked when
scoring, so a dataset is never scored by a metric that judges differently than announced.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from pydantic import Field, computed_field

from needlec.scoring.normalize import Normalization, NormalizeSetting, normalize_cached, resolve
from needlec.spec.base import StrictModel

Details = dict[str, Any]
Result = tuple[float, Details]
MetricFn = Callable[[Any, str, Mapping[str, Any]], Result]


class MetricConfig(StrictModel):
    """Base of metric configs: the `metric:` tag, a normalisation, and the class's `version`."""

    VERSION: ClassVar[int] = 1

    @computed_field(description="Version of the metric's definition; written into every item.")  # type: ignore[prop-decorator]
    @property
    def version(self) -> int:
        return self.VERSION


class NormalizedConfig(MetricConfig):
    """A metric config that normalises text before comparing."""

    normalize: NormalizeSetting = Field(
        "standard",
        description="Normalisation of response and answers: `standard` (NFKC, casefold, punctuation to "
        "spaces, whitespace collapsed), `ruler` (lowercase only), `none`, or an explicit mapping.",
    )

    @property
    def norm(self) -> Normalization:
        """The resolved normalisation."""
        return resolve(self.normalize)


def answer_sets(item: Mapping[str, Any]) -> list[list[str]]:
    """The item's required facts, each a list of alias strings.

    Accepts the item schema 2 shape (`[["a", "a2"], ["b"]]`) and the older flat list of strings,
    where each string is one fact with a single alias.
    """
    raw = item.get("answers") or []
    facts: list[list[str]] = []
    for fact in raw:
        if isinstance(fact, str):
            facts.append([fact])
        else:
            facts.append([str(a) for a in fact])
    return facts


def norm_aliases(facts: list[list[str]], norm: Normalization) -> list[list[str]]:
    """Normalise every alias, dropping aliases that normalise to nothing."""
    return [[n for n in (normalize_cached(a, norm) for a in fact) if n] for fact in facts]
