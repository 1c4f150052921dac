"""Time the compile of single NeedleBench cells at the largest lengths, and say whether the haystack repeats.

Run: `python benchmarks/needlebench_sizes.py [--length 1000000] [--items 1] [--configs s-rt-en-after,...]`

For each chosen config of `specs/needlebench/needlebench-1000k.yaml` (or `--spec`), a temporary child spec keeps the
config's needles, prompt and haystack but narrows the grid to one length and `--items` repeats at depth 50 (M-RT
keeps its fixed depth list; M-RS one chain length), compiled for cl100k_base only. Printed per config: wall
seconds (corpus load, tokenisation, index and items), seconds per item once the index exists (from a second
compile with the cache warm), output bytes, and whether any item's window ran past the corpus's first copy (the
haystack was repeated to reach the length; the compile warns, and `--strict` refuses it).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import time
from pathlib import Path

from needlec.compile.pipeline import CompileOptions, compile_spec

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_CONFIGS = "s-rt-en-after,s-rt-zh-after,m-rt-en-after,m-rt-zh-after,m-rs-en-after,m-rs-zh-after"


def _child(parent: Path, length: int, items: int, config: str) -> str:
    value = config.rsplit("-", 2)[0]  # the `task` axis value, e.g. `m-rs` or `v2-s-rt`
    task = value.removeprefix("v2-")
    needle = "\n      needle: {needles: 3}" if task == "m-rs" else ""
    depths = "[0]" if task == "m-rt" else "[50]"
    return f"""extends: {parent.as_posix()}
name: nb-bench
title: NeedleBench cell timing
tokenizers: [cl100k_base]
variants:
  task:
    {value}:
      grid: {{lengths: [{length}], depths: {depths}, repeats: {items}}}{needle}
  question: {{before: null}}
"""


def _bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spec", default=str(ROOT / "specs" / "needlebench" / "needlebench-1000k.yaml"))
    parser.add_argument("--length", type=int, default=1_000_000)
    parser.add_argument("--items", type=int, default=1)
    parser.add_argument("--configs", default=DEFAULT_CONFIGS)
    args = parser.parse_args()
    parent = Path(args.spec).resolve()
    print(f"spec {parent.name}, length {args.length:,}, {args.items} item(s) per config, cl100k_base")
    print("config            first_s  again_s  s/item   output_MB  repeated")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        cache = work / "cache"
        os.environ.setdefault("NEEDLEC_CACHE_DIR", str(cache))
        for config in args.configs.split(","):
            spec = work / "bench.yaml"
            spec.write_text(_child(parent, args.length, args.items, config), encoding="utf-8")
            timings = []
            warnings: list[str] = []
            out = work / "out"
            for _ in range(2):
                shutil.rmtree(out, ignore_errors=True)
                start = time.perf_counter()
                result = compile_spec(spec, out, CompileOptions(progress=False, select={"config": {config}}))
                timings.append(time.perf_counter() - start)
                warnings = result.warnings
            size = _bytes(out)
            repeated = False
            for path in (out / "data").glob("*/*.jsonl"):
                for line in path.open(encoding="utf-8"):
                    repeated = repeated or bool(json.loads(line)["haystack"]["repeated"])
            per_item = timings[1] / args.items
            print(f"{config:16}  {timings[0]:7.1f}  {timings[1]:7.1f}  {per_item:6.2f}  {size / 1e6:9.2f}  {repeated}")
            for warning in warnings:
                print(f"  warning: {warning}")


if __name__ == "__main__":
    main()
