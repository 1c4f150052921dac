"""The spec types of component mappings, built from the registries in `needlec.registry`.

A component mapping (a haystack source, a filter, a builder, a needle, a tokenizer, a scoring
metric) is told apart by its `type:` (or `metric:`) key. Each field type here is a
`registry.ComponentField`: a mapping is validated by the config model of the one component its
key names, which the registry loads on demand (only that component's module), and the JSON Schema
is the discriminated union of every registered kind. So the spec language never imports a
component package, and a spec loads only the components it names.

Each type is built on first access: a component module may itself use another one (sources use
`FilterConfig`, the snippet builder uses `TokenizerConfig`) while its own registry loads.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

from needlec.registry import BUILDERS, FILTERS, METRICS, NEEDLES, SOURCES, TOKENIZERS, component_field

TiktokenEncoding = Literal["cl100k_base", "o200k_base"]


def _tokenizer_shorthand(value: Any) -> Any:
    """A bare string names a tiktoken encoding: `cl100k_base` means `{type: tiktoken, encoding: ...}`."""
    if isinstance(value, str):
        return {"type": "tiktoken", "encoding": value}
    return value


def _tokenizer_config() -> Any:
    # The JSON Schema must accept the bare-name shorthand too, or editors reject valid specs.
    return component_field(TOKENIZERS, "type", shorthand=_tokenizer_shorthand, shorthand_type=TiktokenEncoding)


_BUILDERS: dict[str, Callable[[], Any]] = {
    "TokenizerConfig": _tokenizer_config,
    "FilterConfig": lambda: component_field(FILTERS, "type"),
    "SourceConfig": lambda: component_field(SOURCES, "type"),
    "BuilderConfig": lambda: component_field(BUILDERS, "type", default="concat"),
    "NeedleConfig": lambda: component_field(NEEDLES, "type", default="template"),
    "MetricConfig": lambda: component_field(METRICS, "metric"),
}


def __getattr__(name: str) -> Any:
    """Build a union on first use (PEP 562), so importing one union loads only its registry.

    A source module needs `FilterConfig` while the sources registry is still loading; building
    every union at import would ask for `SourceConfig` in the middle of that and fail.
    """
    build = _BUILDERS.get(name)
    if build is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = build()
    globals()[name] = value
    return value


if TYPE_CHECKING:
    TokenizerConfig: Any
    FilterConfig: Any
    SourceConfig: Any
    BuilderConfig: Any
    NeedleConfig: Any
    MetricConfig: Any

__all__ = [
    "BuilderConfig",
    "FilterConfig",
    "MetricConfig",
    "NeedleConfig",
    "SourceConfig",
    "TiktokenEncoding",
    "TokenizerConfig",
]
