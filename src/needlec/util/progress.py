"""Progress bars that suit where standard error goes: a bar on a terminal, plain lines in a log.

On a terminal `bar` is a tqdm bar, redrawn in place. Where standard error is a file or a pipe (a CI
log, `2> compile.log`, a job scheduler's output), a redrawn bar would write carriage returns that make
one endless line of the log, so `bar` prints whole lines instead: one when it starts, one at most every
`LINE_SECONDS` seconds while it counts, and one when it closes, each with the count, the share done, the
rate and the time left. `note` prints a message without breaking a bar on a terminal.
"""

from __future__ import annotations

import sys
import time
from typing import IO, Any

LINE_SECONDS = 10.0
"""Seconds between two progress lines in a log (the first and the last are always printed)."""


def interactive(stream: IO[str] | None = None) -> bool:
    """Whether `stream` (standard error by default) is a terminal, where a bar can redraw itself."""
    stream = sys.stderr if stream is None else stream
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except ValueError:  # a closed stream
        return False


def bar(total: int, desc: str, unit: str = "item", initial: int = 0, enabled: bool = True) -> Any:
    """A progress bar over `total` units, `initial` of them done already: tqdm's on a terminal, `LineBar` in a
    log, `SilentBar` when not `enabled`. Each has `update(n)` and `close()` and is a context manager."""
    if not enabled:
        return SilentBar()
    if interactive():
        from tqdm import tqdm  # only where a bar is drawn

        return tqdm(
            total=total, initial=initial, unit=unit, desc=desc, file=sys.stderr, dynamic_ncols=True, smoothing=0.1
        )
    return LineBar(total, desc, unit, initial)


def note(message: str) -> None:
    """Print a message on standard error, above a terminal's bar rather than through it."""
    if interactive():
        from tqdm import tqdm

        tqdm.write(message, file=sys.stderr)
    else:
        print(message, file=sys.stderr, flush=True)


class SilentBar:
    """The bar of a quiet run: counts nothing, prints nothing."""

    def update(self, n: int = 1) -> None:
        """Ignore `n` finished units."""

    def close(self) -> None:
        """Nothing to close."""

    def __enter__(self) -> SilentBar:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class LineBar:
    """A bar for a log: whole lines such as `compile niah: 1200/5000 items (24%), 97.1 items/s, about 39 s left`,
    at the start, at most every `every` seconds, and at the end (no carriage returns)."""

    def __init__(
        self,
        total: int,
        desc: str,
        unit: str = "item",
        initial: int = 0,
        stream: IO[str] | None = None,
        every: float = LINE_SECONDS,
    ) -> None:
        self.total, self.desc, self.unit, self.initial = total, desc, unit, initial
        self.n = initial
        self.stream = stream
        self.every = every
        self.started = self.last = time.monotonic()
        self.closed = False
        self._line(self.started)

    def update(self, n: int = 1) -> None:
        """Count `n` more finished units; print a line when `every` seconds have passed since the last."""
        self.n += n
        now = time.monotonic()
        if now - self.last >= self.every:
            self._line(now)

    def close(self) -> None:
        """Print the last line (once)."""
        if not self.closed:
            self.closed = True
            self._line(time.monotonic(), done=True)

    def __enter__(self) -> LineBar:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _line(self, now: float, done: bool = False) -> None:
        self.last = now
        units = self.unit if self.total == 1 else f"{self.unit}s"
        parts = [f"{self.n}/{self.total} {units}"]
        if self.total:
            parts[0] += f" ({100 * self.n // self.total}%)"
        elapsed = now - self.started
        counted = self.n - self.initial
        if counted > 0 and elapsed > 0:
            rate = counted / elapsed
            parts.append(f"{_rate(rate)} {self.unit}s/s")
            if done:
                parts.append(f"in {_duration(elapsed)}")
            elif self.total > self.n:
                parts.append(f"about {_duration((self.total - self.n) / rate)} left")
        stream = sys.stderr if self.stream is None else self.stream
        print(f"{self.desc}: {', '.join(parts)}", file=stream, flush=True)


def _rate(rate: float) -> str:
    """Units a second, to three significant figures without an exponent (`1234`, `97.1`, `0.25`)."""
    if rate >= 100:
        return f"{rate:.0f}"
    return f"{rate:.3g}"


def _duration(seconds: float) -> str:
    """A span of time as a reader of a log wants it: `0.4 s`, `39 s`, `12 min 5 s`, `2 h 3 min`."""
    if seconds < 10:
        return f"{seconds:.1f} s"
    whole = round(seconds)
    if whole < 60:
        return f"{whole} s"
    if whole < 3600:
        return f"{whole // 60} min {whole % 60} s"
    return f"{whole // 3600} h {whole % 3600 // 60} min"
