"""Named component registries (sources, filters, needle kinds, metrics, tokenizers).

Built-in components register with a decorator when their module is imported; third parties add
kinds through entry points (group `needlec.<kind>`), loaded once when the registry is first read.
A registry is frozen after that, so the spec language never changes in the middle of a run.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

T = TypeVar("T")


@dataclass(frozen=True)
class Component(Generic[T]):
    """A registered kind: its name, the pydantic model of its spec arguments, and its factory."""

    name: str
    config: type[BaseModel]
    factory: T
    summary: str


class Registry(Generic[T]):
    """Maps a component `type:` name to its config model and implementation."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._items: dict[str, Component[T]] = {}
        self._frozen = False

    def register(self, name: str, config: type[BaseModel]) -> Callable[[T], T]:
        def decorate(factory: T) -> T:
            if self._frozen:
                raise RuntimeError(f"{self.kind} registry is frozen; register {name!r} at import time")
            if name in self._items:
                raise RuntimeError(f"{self.kind} {name!r} is registered twice")
            doc = (getattr(factory, "__doc__", None) or config.__doc__ or "").strip()
            self._items[name] = Component(name, config, factory, doc.splitlines()[0] if doc else "")
            return factory

        return decorate

    def _load_entry_points(self) -> None:
        if self._frozen:
            return
        for ep in entry_points(group=f"needlec.{self.kind}"):
            if ep.name not in self._items:
                ep.load()
        self._frozen = True

    def get(self, name: str) -> Component[T]:
        self._load_entry_points()
        try:
            return self._items[name]
        except KeyError:
            hint = did_you_mean(name, self._items)
            raise KeyError(f"unknown {self.kind} {name!r}{hint}") from None

    def names(self) -> list[str]:
        self._load_entry_points()
        return sorted(self._items)

    def __iter__(self) -> Iterator[Component[T]]:
        self._load_entry_points()
        return iter(self._items[name] for name in sorted(self._items))

    def __contains__(self, name: object) -> bool:
        self._load_entry_points()
        return name in self._items


def did_you_mean(word: str, choices: Any) -> str:
    """`; did you mean 'x'?` when a close match exists, else an empty string."""
    matches = difflib.get_close_matches(str(word), [str(c) for c in choices], n=1, cutoff=0.6)
    return f"; did you mean {matches[0]!r}?" if matches else ""


def registry_union(registry: Registry[Any], tag: str, default: str | None = None) -> Any:
    """A pydantic type accepting any registered kind's config, told apart by the `tag` key."""
    from typing import Annotated, Union

    from pydantic import BeforeValidator, Field

    models = tuple(component.config for component in registry)
    union: Any = models[0] if len(models) == 1 else Annotated[Union[models], Field(discriminator=tag)]  # noqa: UP007
    if default is None:
        return union

    def fill_default(value: Any) -> Any:
        if isinstance(value, dict) and tag not in value:
            return {tag: default, **value}
        return value

    return Annotated[union, BeforeValidator(fill_default)]


METRICS: Registry[Any] = Registry("metrics")
"""Scoring metrics (`scoring: {metric: NAME}`); the built-ins live in `needlec.scoring.metrics`."""
