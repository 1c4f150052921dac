"""The `window` layout: a token-exact window of one haystack with the needles at boundaries.

The default layout of every builder that yields running text (concat, snippets, repeat,
needle_filler, ruler_words); the placement engine (`placement/engine.py`) does the work.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from needlec.placement.engine import place
from needlec.placement.layouts import LAYOUTS, LayoutSettings, Placed, Request

if TYPE_CHECKING:
    from needlec.placement.view import HaystackView


class WindowLayout:
    """Needles at the boundaries nearest their depths in a window of exactly `request.target` tokens."""

    def place(self, view: HaystackView, request: Request) -> Placed:
        settings = request.placement
        placement = place(
            view.index,
            view.counter,
            start=request.start,
            target=request.target,
            needles=request.needles,
            depths=request.depths,
            snap=settings.snap,
            joiner=settings.joiner_text(),
            prefix=request.prefix,
            suffix=request.suffix,
            window=settings.window,
            edges=settings.edges,
            tolerance=settings.depth_tolerance,
            targets=request.targets,
        )
        # inserts beyond the needles are the line breaks that made a whole-sentence window exact; every
        # item of a whole-sentence config records the count (0 too), so a config's rows share one schema
        breaks = len(placement.inserts) - len(request.needles)
        boundary = settings.edges == "boundary" and settings.snap != "none"
        return Placed(placement, {"window": {"line_breaks": breaks}} if breaks or boundary else {})


LAYOUTS.register("window", LayoutSettings)(WindowLayout)
