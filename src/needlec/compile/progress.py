"""Progress of a compile's long phases on standard error: counts, rate and time left.

Preparation counts configs (sources, filters, haystacks and indexes; filters add their own bars);
item building reports per finished shard (the unit workers hand back), so the bar moves, with
an estimate of the time left, whatever `--jobs` is. On a terminal the bars redraw themselves; where
standard error is a file or a pipe they print plain lines (`needlec.util.progress`). Nothing is
printed when progress is off.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from needlec.util.progress import bar


class Progress:
    """Phase lines and counting bars for one compile; silent when `enabled` is false."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.started = time.monotonic()

    def phase(self, name: str) -> None:
        """Say which phase starts (with the seconds spent so far), for phases without a count."""
        if self.enabled:
            print(f"[{time.monotonic() - self.started:6.1f}s] {name}", file=sys.stderr, flush=True)

    @contextmanager
    def items(self, desc: str, total: int, initial: int = 0, unit: str = "item") -> Iterator[Any]:
        """A bar over `total` units, `initial` of them already done (a resumed compile): redrawn on a terminal,
        plain lines in a log (`needlec.util.progress.bar`), nothing when progress is off."""
        counting = bar(total, desc, unit, initial, self.enabled)
        try:
            yield counting
        finally:
            counting.close()
