"""Time the compile of `specs/ruler.yaml` (11 tasks x 6 lengths x 500 items) from a measured fraction.

Run: `nice python benchmarks/ruler_grid.py [low] [high]` (default 1 and 3). Each length of the
shipped spec is compiled twice on one worker, with `low` and with `high` items per task instead of
500. The difference gives the time per item; what is left of the first run is the fixed cost of
that length (building the haystacks, indexing them up to the length). The script prints both and
the full grid's time, fixed cost plus 500 items per task, summed over the lengths.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def _compile(spec: dict[str, object], folder: Path, name: str) -> float:
    from needlec.compile.pipeline import CompileOptions, compile_spec

    path = folder / f"{name}.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    start = time.perf_counter()
    compile_spec(path, folder / name, CompileOptions(progress=False))
    return time.perf_counter() - start


def main(low: int = 1, high: int = 3) -> None:
    """Per length, compile `low` and `high` repeats; the difference gives the per-item time, the rest
    is the fixed cost (haystacks built and indexed up to that length); print both and the total."""
    base = yaml.safe_load((ROOT / "specs" / "ruler.yaml").read_text(encoding="utf-8"))
    full_repeats = int(base["grid"]["repeats"])
    lengths = list(base["grid"]["lengths"])
    tasks = len(base["variants"]["task"])
    total = 0.0
    print(f"{tasks} tasks; repeats {low} and {high} per length; full grid has {full_repeats}")
    print("length  t_low_s  t_high_s  ms/item  fixed_s  full_cell_s (500 x tasks)")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for length in lengths:
            times = []
            for repeats in (low, high):
                spec = {**base, "grid": {**base["grid"], "lengths": [length], "repeats": repeats}}
                times.append(_compile(spec, folder, f"l{length}r{repeats}"))
            per_item = max(times[1] - times[0], 0.0) / (tasks * (high - low))
            fixed = max(times[0] - per_item * tasks * low, 0.0)
            full = fixed + per_item * tasks * full_repeats
            total += full
            print(
                f"{length:6}  {times[0]:7.1f}  {times[1]:8.1f}  {1000 * per_item:7.1f}  {fixed:7.1f}  {full:9.0f}",
                flush=True,
            )
    print(f"full grid ({tasks} tasks x {len(lengths)} lengths x {full_repeats}), one length per compile: {total:.0f} s")


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:3]))
