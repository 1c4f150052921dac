"""Wall and CPU time of one compile on 1, 2 and all cores, and split into slices and merged.

Each run is a fresh `needlec compile` process (so start-up, haystack preparation and workers all
count), timed from outside: wall time by the clock, CPU time as the children's user + system
time (the compile and its workers). Every output is compared byte for byte with the `--jobs 1`
one. The default workload is RULER at 32K: three tasks x 200 repeats = 600 items, whose items cost
about ten milliseconds each, so item building dominates; `--spec` and `--select` pick another.

    python benchmarks/scaling.py [--jobs 1,2,0] [--slices 2] [--runs 1] [--ray] [--spec SPEC --select K=V ...]

`0` in `--jobs` means every available core. Figures depend on the machine and its load; they are
printed, never asserted.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_SPEC = ROOT / "specs" / "ruler.yaml"
DEFAULT_SELECT = [
    "length=32768",
    "config=niah_single_1,vt,cwe",
    "repeat=0-199",
]
# `--workload niah`: one needle in prose at 32K, 21 depths x 5 repeats x 2 tokenizers = 210 items
# whose items take about a millisecond each, so haystack preparation dominates
NIAH = """\
name: scaling-niah
title: Scaling workload
description: One needle in prose at 32K tokens, for timing workers and slices.
license: CC-BY-4.0
languages: [en]
seed: 7
tokenizers: [cl100k_base, o200k_base]
haystack:
  sources: [{type: builtin, corpus: web-bible}]
grid:
  lengths: [32000]
  depths: {start: 0, stop: 100, count: 21, spacing: linear}
  repeats: 5
needle:
  type: template
  needles: [The harbour bell in Valdoria rings exactly nine times at dusk.]
  question: How many times does the harbour bell in Valdoria ring at dusk?
  answers: [nine]
placement: {snap: sentence, depth_tolerance: 6}
prompt:
  user: "{{ context }}\\n\\n{{ question }}"
scoring: {metric: contains}
"""


def run(args: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU seconds of one needlec command (the process and every worker it started)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "needlec.cli", *args], check=True, env=env, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def fresh(out: Path) -> None:
    """Remove an output and what a compile keeps beside it (its shard store, a Ray run's slices), so that
    every run builds everything."""
    for path in (out, out.parent / f".{out.name}.shards", out.parent / f".{out.name}.ray"):
        shutil.rmtree(path, ignore_errors=True)


def tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--spec", default=str(DEFAULT_SPEC), help="spec to compile (default: specs/ruler.yaml)")
    parser.add_argument(
        "--workload", choices=["ruler", "niah"], default="ruler", help="built-in workload (ruler: 600 items, niah: 210)"
    )
    parser.add_argument("--select", action="append", help="as compile --select (default: RULER, 600 items at 32K)")
    parser.add_argument("--jobs", default="1,2,0", help="worker counts to compare; 0 = all cores (default 1,2,0)")
    parser.add_argument("--slices", type=int, default=2, help="slices for the shard/merge run (default 2)")
    parser.add_argument("--ray", action="store_true", help="also run --executor ray on a local instance (all cores)")
    parser.add_argument("--runs", type=int, default=1, help="runs per setting; the median is printed (default 1)")
    args = parser.parse_args()
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    jobs = [int(j) or cores for j in args.jobs.split(",")]
    if args.workload == "niah":
        niah = Path(tempfile.mkdtemp()) / "scaling-niah.yaml"
        niah.write_text(NIAH, encoding="utf-8")
        args.spec, args.select = str(niah), args.select or []
    select = [x for s in (args.select if args.select is not None else DEFAULT_SELECT) for x in ("--select", s)]
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", "")}
    shown = " ".join(args.select if args.select is not None else DEFAULT_SELECT)[:60]
    print(f"{Path(args.spec).name} {shown}...; {cores} cores; median of {args.runs}")
    print(f"{'setting':>22} {'wall s':>8} {'CPU s':>8} {'speed-up':>9} {'CPU/1 job':>10} {'identical':>10}")
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        base: tuple[float, float] | None = None
        reference: dict[str, bytes] | None = None

        def report(name: str, times: list[tuple[float, float]], out: Path) -> None:
            nonlocal base, reference
            wall = statistics.median(t[0] for t in times)
            cpu = statistics.median(t[1] for t in times)
            if base is None:
                base, reference = (wall, cpu), tree(out)
            same = tree(out) == reference
            print(f"{name:>22} {wall:8.1f} {cpu:8.1f} {base[0] / wall:8.2f}x {cpu / base[1]:9.2f}x {same!s:>10}")

        for j in jobs:
            out = root / f"jobs{j}"
            times = []
            for _ in range(args.runs):
                fresh(out)
                times.append(run(["compile", args.spec, "-o", str(out), "-q", "-j", str(j), *select], env))
            report(f"--jobs {j}", times, out)
        n = args.slices
        times = []
        for _ in range(args.runs):
            walls, cpus = [], []
            for i in range(1, n + 1):
                slice_dir = root / f"slice{i}"
                fresh(slice_dir)
                w, c = run(
                    ["compile", args.spec, "--shard", f"{i}/{n}", "-o", str(slice_dir), "-q", "-j", "1", *select], env
                )
                walls.append(w)
                cpus.append(c)
            merged = root / "merged"
            fresh(merged)
            w, c = run(["merge", "-o", str(merged), "-q", *[str(root / f"slice{i}") for i in range(1, n + 1)]], env)
            print(f"{'':>22} slices (1 job each): wall {', '.join(f'{x:.1f}' for x in walls)} s; merge wall {w:.1f} s")
            # on N machines the slices run side by side: wall = slowest slice + merge
            times.append((max(walls) + w, sum(cpus) + c))
        report(f"{n} slices + merge", times, root / "merged")
        if args.ray:
            out = root / "ray"
            times = []
            for _ in range(args.runs):
                fresh(out)
                times.append(
                    run(
                        ["compile", args.spec, "-o", str(out), "-q", "--executor", "ray", "-j", str(cores), *select],
                        env,
                    )
                )
            report(f"ray, {cores} CPUs", times, out)


if __name__ == "__main__":
    main()
