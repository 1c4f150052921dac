"""NeedleBench reference grids as data, item counts per cell, and the M-RS placement rules as pure functions.

v1 is the grid of the technical report (Table 7) and the shipped v1 configs; v2 the grid of the `needlebench_v2_*`
configs. Numbers (see site/docs for the table):

- Depths. v1 4K and 8K use 20 points `int(linspace(0, 100, 20))` = 0, 5, 10, 15, 21, ..., 94, 100 (truncated, not
  rounded). v1 32K and up use 11 points: every second one of those 20, then 100 = 0, 10, 21, 31, ..., 94, 100. The
  report's "# of depth intervals" column says 10 for 32K and 200K: that counts intervals between the 11 points.
  v2 uses 0, 10, ..., 100 at every size.
- Repeats: 10 per S-RT cell, 25 per M-RT cell, 10 per M-RS cell (both versions).
- Buffers: the reference subtracts a fixed number of tokens from each length instead of counting exactly; kept as
  data so that a spec can reproduce it. The 256K row is not in the report's table; it follows the 128K+ values.
- M-RS placement: first fact at depth d, each next fact at the previous fact's end plus 10% of the context, clamped
  to the end (`chain_positions`); Kamradt's spread rule as an alternative (`spread_depths`).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

from needlec.languages.needlebench.models import NeedleDataError

Task = Literal["s-rt", "m-rt", "m-rs"]
Version = Literal["v1", "v2"]
TASKS: tuple[Task, ...] = ("s-rt", "m-rt", "m-rs")
SIZES_V1: tuple[str, ...] = ("4k", "8k", "32k", "128k", "200k", "256k", "1000k")
SIZES_V2: tuple[str, ...] = ("4k", "8k", "32k", "128k", "200k", "1000k")
MRS_STEPS: tuple[int, ...] = (2, 3, 4, 5)
REPEATS: dict[Task, int] = {"s-rt": 10, "m-rt": 25, "m-rs": 10}
MRS_GAP_FRACTION = Fraction(1, 10)
"""M-RS: each fact after the first goes this fraction of the context after the previous fact's end."""


def linear_depths(points: int) -> tuple[int, ...]:
    """`points` depths spaced evenly over 0..100, each truncated toward zero like the reference's `int()`.

    Exact rational arithmetic, so no float rounding can turn 21 into 20; one point gives (0,), as `linspace` does.
    """
    if points < 1:
        raise NeedleDataError(f"a depth list needs at least one point, not {points}")
    if points == 1:
        return (0,)
    return tuple(int(Fraction(100 * i, points - 1)) for i in range(points))


def stepped_depths(step: int) -> tuple[int, ...]:
    """0, step, 2*step, ... up to 100 (v2 uses step 10)."""
    return tuple(range(0, 101, step))


@dataclass(frozen=True)
class NeedleBenchGrid:
    """One reference grid (version and size): lengths, depths, repeats per task and buffers per language and task."""

    version: Version
    size: str
    lengths: tuple[int, ...]
    depths: tuple[int, ...]
    buffers: tuple[tuple[str, Task, int], ...]  # (language, task, tokens subtracted from each length)

    def repeats(self, task: Task) -> int:
        """Repeats per cell for a task (10 S-RT, 25 M-RT, 10 M-RS)."""
        return REPEATS[task]

    def buffer(self, language: str, task: Task) -> int:
        """The reference buffer for one language and task: context = length - buffer when reproducing it."""
        for lang, t, tokens in self.buffers:
            if (lang, t) == (language, task):
                return tokens
        raise NeedleDataError(f"no {self.version} {self.size} buffer for language {language!r} and task {task!r}")

    def item_count(self, task: Task, steps: tuple[int, ...] = MRS_STEPS) -> int:
        """Items per language: S-RT lengths x depths x 10; M-RT lengths x 25 (one needle per depth in each item);
        M-RS step counts x lengths x depths x 10."""
        cells = len(self.lengths) * self.repeats(task)
        if task == "s-rt":
            return cells * len(self.depths)
        if task == "m-rt":
            return cells
        return cells * len(self.depths) * len(steps)

    def needles_per_item(self, task: Task, steps: int = 2) -> int:
        """Needles in one item: 1 for S-RT, one per depth for M-RT, `steps` for M-RS."""
        if task == "s-rt":
            return 1
        if task == "m-rt":
            return len(self.depths)
        return steps


_V1_LENGTHS: dict[str, tuple[int, ...]] = {
    "4k": (1000, 2000, 3000, 4000),
    "8k": (5000, 6000, 7000, 8000),
    "32k": (9000, 13000, 17000, 21000, 25000, 29000, 31000, 32000),
    "128k": tuple(range(16000, 128001, 16000)),
    "200k": (16000, 48000, 80000, 112000, 128000, 144000, 176000, 200000),
    "256k": (32000, 128000, 256000),
    "1000k": (20000, 160000, 300000, 440000, 580000, 720000, 860000, 1000000),
}
# English buffers per v1 size: (S-RT, M-RT, M-RS); Chinese is 200 everywhere.
_V1_EN_BUFFERS: dict[str, tuple[int, int, int]] = {
    "4k": (600, 1000, 600),
    "8k": (800, 1300, 1000),
    "32k": (3000, 3000, 3000),
    "128k": (600, 3000, 600),
    "200k": (600, 3000, 600),
    "256k": (600, 3000, 600),
    "1000k": (600, 3000, 600),
}
_V2_LENGTHS: dict[str, tuple[int, ...]] = {
    "4k": (1000, 2000, 3000, 4000),
    "8k": tuple(range(1000, 8001, 1000)),
    "32k": (1000, *range(4000, 32001, 4000)),
    "128k": tuple(1000 * 2**k for k in range(8)),
    "200k": (1000, *range(25000, 200001, 25000)),
    "1000k": (1000, *range(125000, 1000001, 125000)),
}
ZH_BUFFER = 200


def _size(size: str, known: tuple[str, ...], version: str) -> str:
    key = size.lower()
    if key not in known:
        raise NeedleDataError(f"NeedleBench {version} has no size {size!r}; sizes: {', '.join(known)}")
    return key


def v1_grid(size: str) -> NeedleBenchGrid:
    """The v1 grid of one size (4k, 8k, 32k, 128k, 200k, 256k, 1000k)."""
    key = _size(size, SIZES_V1, "v1")
    depths = linear_depths(20) if key in ("4k", "8k") else (*linear_depths(20)[::2], 100)
    en = dict(zip(TASKS, _V1_EN_BUFFERS[key], strict=True))
    buffers = tuple(("en", t, en[t]) for t in TASKS) + tuple(("zh", t, ZH_BUFFER) for t in TASKS)
    return NeedleBenchGrid("v1", key, _V1_LENGTHS[key], depths, buffers)


def v2_grid(size: str) -> NeedleBenchGrid:
    """The v2 grid of one size (4k, 8k, 32k, 128k, 200k, 1000k): 11 depths 0..100 step 10 everywhere."""
    key = _size(size, SIZES_V2, "v2")
    en = 500 if key in ("4k", "8k") else 3000
    buffers = tuple(("en", t, en) for t in TASKS) + tuple(("zh", t, ZH_BUFFER) for t in TASKS)
    return NeedleBenchGrid("v2", key, _V2_LENGTHS[key], stepped_depths(10), buffers)


@dataclass(frozen=True)
class NeedleCountSweep:
    """The M-RT needle-count variant: for each count n, n needles at `linear_depths(n)`, at the 8K v1 lengths."""

    counts: tuple[int, ...] = (1, 5, 10, 15, 20)
    lengths: tuple[int, ...] = _V1_LENGTHS["8k"]
    repeats: int = 50

    def depths(self, count: int) -> tuple[int, ...]:
        """Depths for one needle count."""
        return linear_depths(count)

    def item_count(self) -> int:
        """Items per language: counts x lengths x repeats."""
        return len(self.counts) * len(self.lengths) * self.repeats


def chain_positions(
    haystack_tokens: int,
    needle_tokens: list[int] | tuple[int, ...],
    depth_percent: float,
    gap_tokens: int | None = None,
) -> list[int]:
    """Token offsets, in the final context, of M-RS facts placed by the reference rule.

    The haystack holds `haystack_tokens` tokens before any fact is inserted; fact i is `needle_tokens[i]` long. The
    first fact starts at `int(haystack_tokens * depth_percent / 100)`. Each next fact starts at the previous fact's
    end plus `gap_tokens` (default: 10% of the haystack, truncated), but never past the end of the text built so
    far; at high depths several facts therefore pile up at the end. Facts are inserted left to right, so an offset
    never moves once placed. The caller snaps offsets to its boundary and records the achieved depth of each fact.
    """
    if haystack_tokens < 0 or any(n < 0 for n in needle_tokens):
        raise NeedleDataError("token counts must not be negative")
    if not 0 <= depth_percent <= 100:
        raise NeedleDataError(f"depth must lie in 0..100, not {depth_percent}")
    gap = int(MRS_GAP_FRACTION * haystack_tokens) if gap_tokens is None else gap_tokens
    positions: list[int] = []
    total = haystack_tokens
    for i, length in enumerate(needle_tokens):
        if i == 0:
            start = int(Fraction(haystack_tokens) * Fraction(depth_percent) / 100)
        else:
            start = min(positions[-1] + needle_tokens[i - 1] + gap, total)
        positions.append(start)
        total += length
    return positions


def achieved_depths(positions: list[int], context_tokens: int) -> list[float]:
    """Depth of each offset as a percentage of the final context length, rounded to 4 decimals."""
    if context_tokens <= 0:
        raise NeedleDataError("context length must be positive")
    return [round(100.0 * p / context_tokens, 4) for p in positions]


def spread_depths(depth_percent: float, count: int) -> list[float]:
    """Kamradt's spread: needle i of `count` at d + i * (100 - d) / count, i = 0..count-1."""
    if count < 1:
        raise NeedleDataError(f"need at least one needle, not {count}")
    return [depth_percent + i * (100.0 - depth_percent) / count for i in range(count)]
