"""The `mirror` layout and the `tide_rows` builder that uses it: depths counted from the end.

A layout plugin: the builder's config names the layout (`layout = "mirror"`), and the layout
places each needle at 100 minus its target depth through the built-in `window` layout, recording
that it did so in the item's structure. It exists to show that a layout is a registered component
like any other, chosen by the builder and never by code in `compile/`.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import Field

from needlec.haystacks.builders import build_concat
from needlec.haystacks.index import Haystack
from needlec.haystacks.sources.base import SourceDocument
from needlec.placement.layouts import LAYOUTS, LayoutSettings, Placed, Request
from needlec.placement.layouts.window import WindowLayout
from needlec.registry import BUILDERS
from needlec.spec.base import StrictModel


class TideRowsBuilder(StrictModel):
    """One haystack of every document joined in order, laid out by the `mirror` layout."""

    layout: ClassVar[str] = "mirror"

    type: Literal["tide_rows"] = Field(description="Selects the joined haystack with mirrored depths.")


class TideRows:
    """`tide_rows`: haystack `h0`, the documents joined."""

    def __init__(self, config: TideRowsBuilder) -> None:
        self.config = config

    def haystack_ids(self) -> list[str]:
        return ["h0"]

    def build(self, documents: list[SourceDocument], joiner: str, seed: int, spec_dir: Path) -> list[Haystack]:
        return build_concat(documents, joiner)


class MirrorLayout:
    """Each needle at 100 minus its depth, placed by the window layout."""

    def place(self, view: Any, request: Request) -> Placed:
        mirrored = [round(100.0 - d, 4) for d in request.depths]
        placed = WindowLayout().place(view, dataclasses.replace(request, depths=mirrored))
        return Placed(placed.placement, {"mirror": {"depths": mirrored}}, mirrored)


BUILDERS.register("tide_rows", TideRowsBuilder)(TideRows)
LAYOUTS.register("mirror", LayoutSettings)(MirrorLayout)
