"""How much of an item is its layout: each item built whole, then again with its layout's result handed back.

The second build of the same key runs everything an item build runs but the layout (the draw, the depths, the
prompt and its frame, the needle records, the context's assembly, the leak lookup and the overlap figures), so
it is what a row would cost with a layout that took no time. Both are timed against a Kamradt NIAH item built
in turn, as `benchmarks/families.py` builds them (CPU time, medians). A row whose second figure is already over
3x NIAH cannot get under 3x through its layout alone.

    python benchmarks/layout_share.py [--length 131072] [--items 30] [--only cwe]
"""

from __future__ import annotations

import argparse
import importlib
import statistics
import time
from typing import Any

from families import ROOT, ROWS, Runner

items_module: Any = importlib.import_module("needlec.compile.items")  # (`needlec.compile` is also a function)
REAL_LAYOUT_FOR = items_module.layout_for


class _Recorded:
    """The spec's layout, placing as it does and keeping what it placed."""

    def __init__(self, spec: Any) -> None:
        self.real = REAL_LAYOUT_FOR(spec)
        self.placed: Any = None

    def place(self, view: Any, request: Any) -> Any:
        self.placed = self.real.place(view, request)
        return self.placed


class _Given:
    """A layout that hands back a result placed before, in no time."""

    def __init__(self, placed: Any) -> None:
        self.placed = placed

    def place(self, view: Any, request: Any) -> Any:
        return self.placed


def measure(spec: str, config: str | None, length: int, items: int) -> tuple[float, float, float]:
    """Median CPU ms of an item, of the same item with its layout handed back, and of a NIAH item."""
    row = Runner(ROOT / spec, config).builds(length, items, warm=20)
    niah = Runner(ROOT / "specs" / "niah.yaml", "single").builds(length, items, warm=20)
    whole, rest, plain = [], [], []
    recorded: list[_Recorded] = []  # the last one is the item's
    given: list[_Given] = []

    def recording(spec: Any) -> _Recorded:
        recorded.append(_Recorded(spec))
        return recorded[-1]

    try:
        for (build, _), (niah_build, _) in zip(row, niah, strict=True):
            items_module.layout_for = recording
            began = time.process_time()
            build()
            whole.append(time.process_time() - began)
            given[:] = [_Given(recorded[-1].placed)]
            items_module.layout_for = lambda spec: given[0]
            began = time.process_time()
            build()
            rest.append(time.process_time() - began)
            items_module.layout_for = REAL_LAYOUT_FOR
            began = time.process_time()
            niah_build()
            plain.append(time.process_time() - began)
    finally:
        items_module.layout_for = REAL_LAYOUT_FOR
    return tuple(1000 * statistics.median(x) for x in (whole, rest, plain))  # type: ignore[return-value]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--length", type=int, default=131072)
    parser.add_argument("--items", type=int, default=30)
    parser.add_argument("--only", default="", help="rows whose label contains this (default: every row)")
    args = parser.parse_args()
    print(f"{'family / task':32} {'item ms':>8} {'no layout':>10} {'niah':>6} {'x niah':>7} {'no layout x':>12}")
    for row in ROWS[1:]:
        if args.only not in row.label:
            continue
        whole, rest, niah = measure(row.spec, row.config, args.length, args.items)
        print(f"{row.label:32} {whole:8.2f} {rest:10.2f} {niah:6.2f} {whole / niah:7.2f} {rest / niah:12.2f}")


if __name__ == "__main__":
    main()
