"""Layouts: how an item's context is assembled around its draw, one registered component each.

A haystack builder owns a layout (its config's `layout` name, `window` by default); the length
mode `counted: needles` picks `alone`. `compile/items.py` builds every item the same way: draw ->
`layout_for(spec).place(view, request)` -> item, with no dispatch on builder names.

- `window` (concat, snippets, repeat, needle_filler, ruler_words): a token-exact window of one
  haystack, needles at sentence or line boundaries (`placement/engine.py`);
- `alone` (`length.counted: needles`, ATC): the needles alone, joined; no length target;
- `passages` (`passages`, MLNeedle): whole passages, the needle passage at a passage index, a
  declared filler to the exact length;
- `documents` (`ruler_documents`, RULER QA and RAG-chunk): numbered whole documents, gold ones at
  grid-controlled slots.

Every layout counts on the haystack index's seams (`placement.engine.Counter`): pieces of the
haystack are encoded once per haystack and only the seams around inserted text are re-encoded.
A layout is registered in `needlec.registry.LAYOUTS` (plugins add their own through the
`needlec.layouts` entry-point group) with an empty settings model; `Layout` is its contract.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from needlec.placement.engine import Placement
from needlec.registry import LAYOUTS
from needlec.spec.base import StrictModel

if TYPE_CHECKING:
    from needlec.placement.view import HaystackView

__all__ = ["LAYOUTS", "Layout", "LayoutSettings", "Placed", "Request", "layout_for", "layout_name"]


class LayoutSettings(StrictModel):
    """A layout takes no settings of its own: it reads the spec's `placement` and `haystack.builder`."""


@dataclass(frozen=True)
class Request:
    """Everything a layout needs to know about one item, computed before placement.

    `needles` holds the targets first, then the distractors; `depths` their target depths (percent).
    `target` is the token count the counted text must have: the context, or, when the prompt is
    counted, `prefix + context + suffix` (both empty otherwise). `frame` is the text around the context
    as the model sees it (the chat template applied where the tokenizer has one), counted or not.
    """

    target: int
    depth: float
    needles: list[str]
    targets: int
    depths: list[float]
    start: int
    prefix: str
    suffix: str
    frame: tuple[str, str]
    seed: int
    rng: random.Random
    forbidden: tuple[str, ...]
    question: str
    aliases: tuple[str, ...]
    structure: dict[str, Any] | None
    placement: Any  # the spec's `placement` settings (snap, joiner, window)
    builder: Any  # the spec's `haystack.builder` settings


@dataclass(frozen=True)
class Placed:
    """A placed context: where it comes from, what the item records about its layout, and the depth
    each needle aimed at when the layout, not the spec's rule, decides it."""

    placement: Placement
    structure: dict[str, Any] = field(default_factory=dict)
    target_depths: list[float] | None = None


class Layout(Protocol):
    """The contract of a layout: place a request's needles in a context built over one haystack view.

    A layout may also define `prepare(view, structure, builder, items)`: the per-view work that pays off over
    `items` builds (tables, piece counts), given one draw's `structure` and the spec's `haystack.builder`. A
    compile calls it once per view before its workers fork, so they inherit the work instead of each doing it
    on first use (`compile.pipeline.prepare_layouts`). It must leave every item's bytes as they would be without it."""

    def place(self, view: HaystackView, request: Request) -> Placed:
        """The context for one item, exact to `request.target` tokens (unless the layout has no target)."""
        ...


def layout_name(spec: Any) -> str:
    """The layout a spec's items use: `alone` when only the needles are counted, else its builder's."""
    if spec.length.counted == "needles":
        return "alone"
    return str(getattr(type(spec.haystack.builder), "layout", "window"))


def layout_for(spec: Any) -> Layout:
    """The registered layout a spec's items use (see `layout_name`)."""
    factory: Any = LAYOUTS.get(layout_name(spec)).factory
    layout: Layout = factory()
    return layout
