"""Time the compile of `specs/ruler.yaml` (11 tasks x 6 lengths x 500 items) from a measured fraction.

Run: `nice python benchmarks/ruler_grid.py [repeats]` (default 4). The shipped spec is compiled with
`repeats` items per task and length instead of 500, on one worker; the script prints the seconds
per length, the per-item milliseconds, and the full grid's time extrapolated linearly to 500
items per cell. The fixed costs (building haystacks, indexing them per tokenizer) are paid once
per compile, so the extrapolation of the per-item part is an upper bound for them.
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


def main(repeats: int = 4) -> None:
    """Compile the fraction, print per-length timings and the extrapolation."""
    base = yaml.safe_load((ROOT / "specs" / "ruler.yaml").read_text(encoding="utf-8"))
    full_repeats = int(base["grid"]["repeats"])
    lengths = list(base["grid"]["lengths"])
    tasks = len(base["variants"]["task"])
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        # fixed cost: one item per task at the smallest length (haystacks built and indexed)
        fixed_spec = {**base, "grid": {**base["grid"], "lengths": lengths[:1], "repeats": 1}}
        fixed = _compile(fixed_spec, folder, "fixed")
        print(f"setup + {tasks} items at {lengths[0]}: {fixed:.1f} s")
        total_items = 0.0
        print("length  items  seconds  ms/item  extrapolated_s (500/cell)")
        for length in lengths:
            spec = {**base, "grid": {**base["grid"], "lengths": [length], "repeats": repeats}}
            seconds = _compile(spec, folder, f"l{length}")
            items = tasks * repeats
            per_item = max(seconds - fixed, 0.0) / items
            extrapolated = per_item * tasks * full_repeats
            total_items += extrapolated
            print(f"{length:6}  {items:5}  {seconds:7.1f}  {1000 * per_item:7.1f}  {extrapolated:9.0f}")
        print(f"full grid ({tasks} tasks x {len(lengths)} lengths x {full_repeats}): about {fixed + total_items:.0f} s")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 4)
