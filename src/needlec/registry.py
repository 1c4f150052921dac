"""Named component registries: one module-level `Registry` per kind of component.

The spec language is open: a haystack source, filter, builder, needle kind, tokenizer, metric,
exporter or language pack is chosen in a spec by name (`type:` or `metric:`), and that name is
looked up here. Built-in components register with a decorator when their module is imported;
the modules are listed per registry and imported on the first read, so importing this module is
cheap and never imports a component. Third-party packages add components through the
entry-point group `needlec.<kind>` (e.g. `needlec.sources`): the entry point's name is the
component's name and its value is the module (or an object in it) that registers it.

Reading is lazy: `get(name)` imports only the built-in module that the registry's `provides`
table names for it, or else only the entry point of that name; iterating (which building a JSON
Schema does) loads them all, after which the registry is frozen. A plugin that
fails to import is recorded, not raised: a spec that names it gets a `PluginError` naming the
distribution, the entry point and the exception, and every other spec is unaffected. Setting
the environment variable `NEEDLEC_PLUGINS=0` turns entry-point discovery off.

This module sits at the bottom of the package: it imports only `errors` and the standard library.
"""

from __future__ import annotations

import difflib
import functools
import importlib
import os
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from needlec.errors import PluginError

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint
    from types import TracebackType

    from pydantic import BaseModel


T = TypeVar("T")

PLUGINS_ENV = "NEEDLEC_PLUGINS"


@dataclass(frozen=True)
class Component(Generic[T]):
    """A registered kind: its name, the pydantic model of its spec arguments, and its factory."""

    name: str
    config: type[BaseModel]
    factory: T
    summary: str


@dataclass(frozen=True)
class LoadFailure:
    """An entry point that could not be loaded, kept to explain itself when a spec names it."""

    kind: str
    name: str
    group: str
    value: str
    distribution: str
    error: str

    def message(self) -> str:
        """One line naming the distribution, the entry point and what went wrong."""
        return (
            f"the {singular(self.kind)} {self.name!r} comes from the plugin distribution {self.distribution!r}, which "
            f"failed to load (entry point {self.group}:{self.name} = {self.value}): {self.error}"
        )


_PLUGIN_PACKAGES: dict[str, str] = {}
"""The package of each plugin loaded (`_package` of the module its entry point names, or that registered a
component) -> its distribution's name (empty where it has none: a component registered by code that is not
an installed plugin), for `plugin_origin`."""


def _package(module: str) -> str:
    """The package a plugin's module belongs to: its top-level package, or where that is a namespace package
    shared with others (no `__file__`), the first regular package below it."""
    parts = module.split(".")
    for i in range(1, len(parts) + 1):
        name = ".".join(parts[:i])
        loaded = sys.modules.get(name)
        if loaded is not None and getattr(loaded, "__file__", None) is not None:
            return name
    return module


def _plugin_of(module: str) -> str | None:
    """The distribution of the plugin package `module` lies in (empty: a package with none); None otherwise."""
    while module:
        if module in _PLUGIN_PACKAGES:
            return _PLUGIN_PACKAGES[module]
        module = module.rpartition(".")[0]
    return None


def _who(group: str, name: str, value: str, distribution: str) -> str:
    return f"the plugin distribution {distribution!r} (entry point {group}:{name} = {value})"


def plugin_origin(tb: TracebackType | None) -> str | None:
    """Which plugin's code raised, where the innermost frame of the traceback `tb` that runs needlec's or a
    plugin's code is the plugin's (named by its distribution and module); None where it is needlec's (a
    plugin that calls into needlec and fails there is no proof of the plugin's fault) or none is either's."""
    found = None
    while tb is not None:
        module = str(tb.tb_frame.f_globals.get("__name__", ""))
        distribution = _plugin_of(module)
        if distribution is not None:
            where = f"its module {module}" if distribution else f"the module {module}"
            found = (
                f"the plugin distribution {distribution!r} ({where})"
                if distribution
                else f"code outside needlec ({where})"
            )
        elif module == "needlec" or module.startswith("needlec."):
            found = None
        tb = tb.tb_next
    return found


def singular(kind: str) -> str:
    """`sources` -> `source`: a registry's kind as one component is called in messages."""
    return kind[:-1] if kind.endswith("s") else kind


def plugins_enabled() -> bool:
    """False when `NEEDLEC_PLUGINS=0` (or `false`, `no`, `off`) turns entry-point discovery off."""
    return os.environ.get(PLUGINS_ENV, "1").strip().lower() not in {"0", "false", "no", "off"}


def _distribution(entry_point: EntryPoint) -> str:
    dist = getattr(entry_point, "dist", None)
    name = getattr(dist, "name", None) if dist is not None else None
    return str(name) if name else "<unknown distribution>"


@functools.cache
def _all_entry_points() -> dict[str, tuple[EntryPoint, ...]]:
    """Every installed entry point of the `needlec.*` groups, read in one scan of the installed
    distributions (a scan per registry cost about 30 ms each at start-up)."""
    from importlib.metadata import distributions  # only when discovery is on

    groups: dict[str, list[EntryPoint]] = {}
    for dist in distributions():
        for entry_point in dist.entry_points:
            if entry_point.group.startswith("needlec."):
                groups.setdefault(entry_point.group, []).append(entry_point)
    return {group: tuple(found) for group, found in groups.items()}


def _entry_points_of(group: str) -> tuple[EntryPoint, ...]:
    return _all_entry_points().get(group, ())


class Registry(Generic[T]):
    """Maps a component's name to its config model and implementation, for one kind of component.

    Args:
        kind: the plural name of the kind (`sources`, `needles`, ...); the entry-point group is
            `needlec.<kind>`.
        modules: dotted names of the built-in modules that register this kind's components;
            imported on the first read, in order (by default, those of `provides` in its order).
        provides: built-in component name -> the module that registers it. Reading one of these
            names imports only its module, so a spec that names a few components never imports
            (or builds the spec models of) the others; any other name imports every built-in
            module first (`tests/test_registry_lazy.py` checks the tables).
    """

    def __init__(self, kind: str, modules: tuple[str, ...] = (), provides: dict[str, str] | None = None) -> None:
        self.kind = kind
        self.group = f"needlec.{kind}"
        self._provides = dict(provides or {})
        self._modules = modules or tuple(dict.fromkeys(self._provides.values()))
        self._items: dict[str, Component[T]] = {}
        self._order: dict[str, tuple[int, str, int]] = {}  # name -> its place in iteration order
        self._loading_origin = ""  # who that entry point is (`_who`), while it is imported
        self._loading_distribution = ""  # and the name of its distribution
        self._origins: dict[str, str] = {}  # component name -> the plugin that registered it (`origin`)
        self._loading_entry_point = ""  # the entry point being imported, while it is
        self._failures: dict[str, LoadFailure] = {}
        self._entry_points: dict[str, EntryPoint] | None = None
        self._loaded_entry_points: set[str] = set()
        self._builtins_loaded = False
        self._frozen = False
        self._lock = threading.RLock()

    def register(self, name: str, config: type[BaseModel]) -> Callable[[T], T]:
        """Decorator registering `factory` under `name`, with `config` as its spec model."""

        def decorate(factory: T) -> T:
            with self._lock:
                if self._frozen:
                    raise RuntimeError(f"the {self.kind} registry is frozen; register {name!r} at import time")
                if name in self._items:
                    raise RuntimeError(f"{self.kind} {name!r} is registered twice")
                doc = (getattr(factory, "__doc__", None) or config.__doc__ or "").strip()
                self._items[name] = Component(name, config, factory, doc.splitlines()[0] if doc else "")
                # built-ins in the order of `modules`, then by entry-point name, whatever order they load in
                rank = next(
                    (i for i, m in enumerate(self._modules) if module == m or module.startswith(m + ".")),
                    len(self._modules),
                )
                self._order[name] = (rank, self._loading_entry_point, len(self._order))
                if module.partition(".")[0] != "needlec":  # a plugin's: who registered it, for errors about it
                    who = self._loading_origin or self._entry_point_origin(name) or f"the module {module!r}"
                    self._origins[name] = who
                    if module and module != "__main__":
                        _PLUGIN_PACKAGES.setdefault(_package(module), self._loading_distribution)
            return factory

        module = sys._getframe(1).f_globals.get("__name__", "")  # the module that registers

        return decorate

    # -- loading -------------------------------------------------------------------------------

    def _load_builtins(self) -> None:
        with self._lock:
            if self._builtins_loaded:
                return
            self._builtins_loaded = True
            for module in self._modules:
                importlib.import_module(module)

    def _load_named(self, name: str) -> None:
        """Import the built-in module that registers `name` (every built-in module when the name is not
        in `provides`, so a built-in always wins over a plugin of the same name)."""
        with self._lock:
            if name in self._items:
                return
            module = self._provides.get(name)
            if module is not None:
                importlib.import_module(module)
            if name not in self._items:
                self._load_builtins()

    def _discover(self) -> dict[str, EntryPoint]:
        with self._lock:
            if self._entry_points is None:
                found: dict[str, EntryPoint] = {}
                if plugins_enabled():
                    for entry_point in _entry_points_of(self.group):
                        found.setdefault(entry_point.name, entry_point)
                self._entry_points = found
            return self._entry_points

    def _load_entry_point(self, name: str) -> None:
        with self._lock:
            entry_point = self._discover().get(name)
            if entry_point is None or name in self._loaded_entry_points:
                return
            self._loaded_entry_points.add(name)
            if name in self._items:  # a built-in of the same name wins; the plugin is not imported
                return
            self._loading_entry_point = name
            self._loading_distribution = _distribution(entry_point)
            self._loading_origin = _who(self.group, name, entry_point.value, self._loading_distribution)
            try:
                entry_point.load()
            except Exception as exc:  # any failure of third-party code is recorded, never raised here
                error = f"{type(exc).__name__}: {exc}"
            else:
                error = (
                    ""
                    if name in self._items
                    else f"importing it did not register a {singular(self.kind)} named {name!r}"
                )
            finally:
                self._loading_entry_point = ""
                self._loading_origin = ""
                self._loading_distribution = ""
            if not error:
                _PLUGIN_PACKAGES[_package(entry_point.module)] = _distribution(entry_point)
                return
            self._failures[name] = LoadFailure(
                self.kind, name, self.group, entry_point.value, _distribution(entry_point), error
            )

    def load_all(self) -> None:
        """Import the built-ins and every entry point of the group, then freeze the registry."""
        with self._lock:
            if self._frozen:
                return
            self._load_builtins()
            for name in sorted(self._discover()):
                self._load_entry_point(name)
            self._frozen = True

    # -- reading -------------------------------------------------------------------------------

    def get(self, name: str) -> Component[T]:
        """The component registered as `name`, loading only that entry point if needed.

        Raises:
            PluginError: the name is unknown (with a did-you-mean) or its plugin failed to load.
        """
        self._load_named(name)
        if name not in self._items:
            self._load_entry_point(name)
        if name in self._items:
            return self._items[name]
        raise PluginError(self.unknown_message(name))

    def failure(self, name: str) -> LoadFailure | None:
        """The recorded load failure of the entry point `name`, if it failed."""
        self._load_named(name)
        if name not in self._items:
            self._load_entry_point(name)
        return self._failures.get(name)

    def failures(self) -> list[LoadFailure]:
        """Every entry point of this kind that failed to load (after loading them all)."""
        self.load_all()
        return [self._failures[name] for name in sorted(self._failures)]

    def unknown_message(self, name: str) -> str:
        """Why `name` cannot be used: its plugin's load failure, or unknown with a did-you-mean."""
        failure = self.failure(name)
        if failure is not None:
            return failure.message()
        known = sorted({*self._items, *self._discover()} - set(self._failures))
        return f"unknown {singular(self.kind)} {name!r}{did_you_mean(name, known)}"

    def _entry_point_origin(self, name: str) -> str:
        """Who the entry point `name` of this registry's group is (`_who`); empty where there is none."""
        entry_point = self._discover().get(name)
        return _who(self.group, name, entry_point.value, _distribution(entry_point)) if entry_point else ""

    def origin(self, name: str) -> str:
        """Who provides the component `name`, for an error about it: the plugin that registered it (its
        distribution and entry point), else needlec itself."""
        who = self._origins.get(name)
        return f"the {singular(self.kind)} {name!r} of {who}" if who else f"needlec's {singular(self.kind)} {name!r}"

    def clashes(self) -> list[str]:
        """One line per installed entry point of this kind that a spec can never reach: one named like a
        built-in (the built-in wins and the plugin is never imported) or like another plugin's (the first found
        wins). Reads the installed distributions' metadata; imports no plugin."""
        if not plugins_enabled():
            return []
        if self._provides:
            builtins = set(self._provides)
        else:
            self._load_builtins()
            builtins = {name for name in self._items if name not in self._origins}
        what = singular(self.kind)
        first: dict[str, EntryPoint] = {}
        found: list[str] = []
        for entry_point in _entry_points_of(self.group):
            name = entry_point.name
            who = _who(self.group, name, entry_point.value, _distribution(entry_point))
            seen = first.setdefault(name, entry_point)
            if seen is not entry_point:
                if (seen.value, _distribution(seen)) != (entry_point.value, _distribution(entry_point)):
                    found.append(
                        f"{who} is never loaded: {_who(self.group, name, seen.value, _distribution(seen))} "
                        f"provides a {what} named {name!r} too, and is the one used; rename one of them"
                    )
            elif name in builtins:
                found.append(
                    f"{who} is never loaded: {name!r} is the name of needlec's own {what}, which a spec naming it "
                    "gets; rename the plugin's entry point"
                )
        return found

    def names(self) -> list[str]:
        """Every usable name, sorted (loads all entry points)."""
        self.load_all()
        return sorted(self._items)

    def __iter__(self) -> Iterator[Component[T]]:
        """Every component in registration order: built-ins in the order of `modules`, then
        plugins by entry-point name (a stable order, so generated unions and schemas are too)."""
        self.load_all()
        return iter([self._items[name] for name in sorted(self._items, key=self._order.__getitem__)])

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str):
            return False
        self._load_named(name)
        if name not in self._items:
            self._load_entry_point(name)
        return name in self._items

    def __repr__(self) -> str:
        return f"Registry({self.kind!r})"


def did_you_mean(word: str, choices: Any) -> str:
    """`; did you mean 'x'?` when a close match exists, else an empty string."""
    matches = difflib.get_close_matches(str(word), [str(c) for c in choices], n=1, cutoff=0.6)
    return f"; did you mean {matches[0]!r}?" if matches else ""


def registry_union(registry: Registry[Any], tag: str) -> Any:
    """The discriminated union of every registered kind's config, told apart by the `tag` key: the JSON
    Schema of a `ComponentField` (validation goes through `ComponentField.validate`)."""
    from typing import Annotated, Union

    from pydantic import Field

    models = tuple(component.config for component in registry)
    return models[0] if len(models) == 1 else Annotated[Union[models], Field(discriminator=tag)]  # noqa: UP007


@dataclass(frozen=True)
class ComponentField:
    """The pydantic type of a component mapping that loads only the component its `tag` names.

    Validation reads the tag (filling in `default` when it is absent), loads that one component
    (`Registry.get`, which imports only its module) and validates the mapping with its config model;
    errors keep their locations and are worded as a tagged union's are. The JSON Schema is the full
    union of every registered kind (`registry_union`), built only when a schema is asked for.
    """

    registry: Registry[Any]
    tag: str
    default: str | None = None
    shorthand: Callable[[Any], Any] | None = None  # turns another input (a bare name) into a mapping first
    shorthand_type: Any = None  # what the shorthand accepts, for the JSON Schema

    def full(self) -> Any:
        """The tagged union of every registered kind (loads them all)."""
        return registry_union(self.registry, self.tag)

    def __get_pydantic_core_schema__(self, source: Any, handler: Any) -> Any:
        from pydantic_core import core_schema

        return core_schema.no_info_plain_validator_function(self.validate)

    def __get_pydantic_json_schema__(self, schema: Any, handler: Any) -> Any:
        from pydantic import TypeAdapter

        accepted = self.full() if self.shorthand_type is None else self.shorthand_type | self.full()
        found = handler(TypeAdapter(accepted).core_schema)
        if self.default is not None and isinstance(found, dict):  # the kind a mapping without its tag is
            found = {**found, "default": {self.tag: self.default}}
        return found

    def validate(self, value: Any) -> Any:
        from pydantic import BaseModel
        from pydantic_core import PydanticKnownError

        tag, registry = self.tag, self.registry
        if self.shorthand is not None:
            value = self.shorthand(value)
        if isinstance(value, BaseModel):
            name = getattr(value, tag, None)
            if isinstance(name, str) and name in registry and isinstance(value, registry.get(name).config):
                return value  # already one of this kind's configs
            value = dict(value)
        if not isinstance(value, dict):
            raise PydanticKnownError("model_attributes_type")
        if self.default is not None and tag not in value:
            value = {tag: self.default, **value}
        if tag not in value:
            raise PydanticKnownError("union_tag_not_found", {"discriminator": f"'{tag}'"})
        name = value[tag]
        if not isinstance(name, str) or name not in registry:
            failure = registry.failure(name) if isinstance(name, str) else None
            if failure is not None:
                raise ValueError(failure.message())
            expected = ", ".join(f"'{component.name}'" for component in registry)
            raise PydanticKnownError(
                "union_tag_invalid", {"discriminator": f"'{tag}'", "tag": str(name), "expected_tags": expected}
            )
        return registry.get(name).config.model_validate(value)


def component_field(
    registry: Registry[Any],
    tag: str,
    default: str | None = None,
    shorthand: Callable[[Any], Any] | None = None,
    shorthand_type: Any = None,
) -> Any:
    """`Annotated[Any, ComponentField(...)]`: a spec field holding one component mapping (see `ComponentField`)."""
    from typing import Annotated

    return Annotated[Any, ComponentField(registry, tag, default, shorthand, shorthand_type)]


# -- the registries --------------------------------------------------------------------------------
# Each kind's Protocol lives beside its implementations (see ARCHITECTURE.md, "Registries and
# plugins"); they are imported above for type checking only, so this bottom layer imports nothing
# above it at run time.

SOURCES: Registry[Any] = Registry(
    "sources",
    provides={
        "builtin": "needlec.haystacks.sources.builtin",
        "files": "needlec.haystacks.sources.files",
        "url": "needlec.haystacks.sources.url",
    },
)
FILTERS: Registry[Any] = Registry(
    "filters",
    provides={
        "answer_candidates": "needlec.haystacks.filters.candidates",
        "embedding_distractors": "needlec.haystacks.filters.embedding",
        "literal_terms": "needlec.haystacks.filters.literal",
        "llm_answer_candidates": "needlec.haystacks.filters.llm",
        "name_collisions": "needlec.haystacks.filters.names",
    },
)
BUILDERS: Registry[Any] = Registry(
    "builders",
    provides={
        "concat": "needlec.haystacks.builders",
        "snippets": "needlec.haystacks.builders",
        "passages": "needlec.haystacks.passages",
        **dict.fromkeys(
            ("repeat", "needle_filler", "ruler_words", "ruler_documents"), "needlec.haystacks.ruler_builders"
        ),
    },
)
NEEDLES: Registry[Any] = Registry(
    "needles",
    provides={
        "atc": "needlec.kinds.atc.kind",
        "latent_hop": "needlec.kinds.latent_hop",
        "mlneedle": "needlec.kinds.mlneedle",
        "needlebench": "needlec.kinds.needlebench.kind",
        "ruler": "needlec.kinds.ruler.kind",
        "template": "needlec.kinds.template",
    },
)
TOKENIZERS: Registry[Any] = Registry(
    "tokenizers", provides={"tiktoken": "needlec.tokenizer", "hf": "needlec.tokenizer"}
)
METRICS: Registry[Any] = Registry(
    "metrics",
    provides={
        **dict.fromkeys(("choice", "circular"), "needlec.scoring.metrics.choice"),
        "existence": "needlec.scoring.metrics.existence",
        "final_answer": "needlec.scoring.metrics.extract",
        "needlebench": "needlec.scoring.metrics.needlebench",
        "numeric": "needlec.scoring.metrics.numeric",
        **dict.fromkeys(("string_match_all", "string_match_part"), "needlec.scoring.metrics.ruler"),
        **dict.fromkeys(("contains", "contains_all", "all_of", "exact", "regex"), "needlec.scoring.metrics.text"),
    },
)
LAYOUTS: Registry[Any] = Registry(
    "layouts",
    provides={
        "window": "needlec.placement.layouts.window",
        "alone": "needlec.placement.layouts.alone",
        "passages": "needlec.placement.layouts.passages",
        "documents": "needlec.placement.layouts.documents",
    },
)
REPORTS: Registry[Any] = Registry(
    "reports",
    modules=(
        "needlec.scoring.families.ruler",
        "needlec.scoring.families.needlebench",
        "needlec.scoring.families.nolima",
        "needlec.scoring.families.mlneedle",
        "needlec.scoring.families.atc",
    ),
)
EXPORTERS: Registry[Any] = Registry("exporters")
LANGUAGES: Registry[Any] = Registry("languages")

ALL: tuple[Registry[Any], ...] = (
    SOURCES,
    FILTERS,
    BUILDERS,
    NEEDLES,
    TOKENIZERS,
    METRICS,
    LAYOUTS,
    REPORTS,
    EXPORTERS,
    LANGUAGES,
)


def plugin_clashes() -> list[str]:
    """`Registry.clashes` of every registry: installed plugin components that no spec can reach."""
    return [line for registry in ALL for line in registry.clashes()]
