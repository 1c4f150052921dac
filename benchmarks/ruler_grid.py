"""Time the compile of `specs/ruler.yaml` (15 tasks x 6 lengths x 500 items) from a measured fraction.

Run: `nice python benchmarks/ruler_grid.py [low] [high]` (default 1 and 3). Each length of the
shipped spec is compiled twice on one worker, with `low` and with `high` repeats per grid cell
instead of the spec's (500; 100 per depth for the five-depth QA and RAG-chunk configs). The
difference gives the time per item; what is left of the first run is the fixed cost of that length
(building the haystacks, indexing them up to the length). The script prints both and the full
grid's time, fixed cost plus 500 items per task, summed over the lengths.
"""

from __future__ import annotations

import copy
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]


def _compile(spec: dict[str, object], folder: Path, name: str) -> float:
    from needlec.compile.pipeline import CompileOptions, compile_spec

    path = folder / f"{name}.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    start = time.perf_counter()
    compile_spec(path, folder / name, CompileOptions(progress=False))
    return time.perf_counter() - start


def _items_per_length(spec: dict[str, Any], repeats: int | None) -> tuple[dict[str, Any], int]:
    """The spec at `repeats` per cell (None: as shipped) and its number of items per length."""
    grid = spec["grid"]
    base_depths = len(grid.get("depths", [0]))
    variants = copy.deepcopy(spec["variants"])
    items = 0
    for overrides in variants["task"].values():
        own = overrides.get("grid") or {}
        depths = len(own["depths"]) if "depths" in own else base_depths
        if repeats is None:
            cell = int(own.get("repeats", grid["repeats"]))
        else:
            cell = repeats
            if own:
                own["repeats"] = repeats
        items += depths * cell
    out = {**spec, "variants": variants}
    if repeats is not None:
        out["grid"] = {**grid, "repeats": repeats}
    return out, items


def main(low: int = 1, high: int = 3) -> None:
    """Per length, compile `low` and `high` repeats; the difference gives the per-item time, the rest
    is the fixed cost (haystacks built and indexed up to that length); print both and the total."""
    base = yaml.safe_load((ROOT / "specs" / "ruler.yaml").read_text(encoding="utf-8"))
    lengths = list(base["grid"]["lengths"])
    tasks = len(base["variants"]["task"])
    _, full_items = _items_per_length(base, None)
    total = 0.0
    print(f"{tasks} tasks; repeats {low} and {high} per cell; the full grid has {full_items} items per length")
    print("length  t_low_s  t_high_s  ms/item  fixed_s  full_length_s")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for length in lengths:
            times = []
            counts = []
            for repeats in (low, high):
                spec, items = _items_per_length(base, repeats)
                spec["grid"] = {**spec["grid"], "lengths": [length]}
                times.append(_compile(spec, folder, f"l{length}r{repeats}"))
                counts.append(items)
            per_item = max(times[1] - times[0], 0.0) / (counts[1] - counts[0])
            fixed = max(times[0] - per_item * counts[0], 0.0)
            full = fixed + per_item * full_items
            total += full
            print(
                f"{length:6}  {times[0]:7.1f}  {times[1]:8.1f}  {1000 * per_item:7.1f}  {fixed:7.1f}  {full:9.0f}",
                flush=True,
            )
    print(
        f"full grid ({tasks} tasks x {len(lengths)} lengths, {full_items} items per length), one length per compile: "
        f"{total:.0f} s"
    )


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:3]))
