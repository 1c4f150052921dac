"""The `alone` layout: the needles are the whole context (`length.counted: needles`, the ATC setting).

No haystack text and no length target: the needles are joined in their order by the placement
joiner, and the item records the length they achieved (see ARCHITECTURE.md, "Needles alone").
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from needlec.placement.engine import needles_alone
from needlec.placement.layouts import LAYOUTS, LayoutSettings, Placed, Request

if TYPE_CHECKING:
    from needlec.placement.view import HaystackView


class AloneLayout:
    """The needles joined in order; each needle's depth is where it landed."""

    def place(self, view: HaystackView, request: Request) -> Placed:
        prefix, suffix = request.frame  # no length target: the prompt around the needles is measured as is
        placement = needles_alone(
            view.index.tokenizer, request.needles, request.placement.joiner_text(), prefix, suffix
        )
        return Placed(placement, target_depths=list(placement.depths()))


LAYOUTS.register("alone", LayoutSettings)(AloneLayout)
