"""Speed of multi-config compiles and of the site's pages, against an older tree, in one run.

Times three commands, each in a fresh process (so nothing is warm in memory between runs):

- `ruler`: `needlec compile specs/ruler.yaml --select length=4096 --select repeat=0,1`
  (11 configs, 22 items: per-config work dominates);
- `pilot`: `needlec compile specs/mlneedle-pilot.yaml` (24 configs, 468 items);
- `site`: `needlec site build --pages-only` over the shipped specs (the reduced compile of every
  spec plus the pages; mkdocs itself is left out, it does not depend on the compile).

With `--baseline DIR` (another checkout of the project, e.g. made with
`git archive main | tar -x -C DIR`), each command also runs with that tree's `src/` first on
`PYTHONPATH`, alternating with this tree run by run so both see the same machine load, and the
ratio of the medians (baseline / this tree) is printed. Every compile runs once untimed first, so
filter and download caches (in a temporary cache folder shared by both trees) are warm. Besides
wall-clock seconds, the CPU seconds (user + system) of each run's process are reported: on a
machine shared with other work they vary much less than wall time.

    python benchmarks/shared_speed.py [--baseline DIR] [--runs 3] [--site-runs 1] [--only ruler,pilot,site]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def command(name: str, tree: Path, out: Path, cache: Path) -> list[str]:
    base = [sys.executable, "-m", "needlec.cli"]
    if name == "ruler":
        spec = str(tree / "specs" / "ruler.yaml")
        select = ["--select", "length=4096", "--select", "repeat=0,1"]
        return [*base, "compile", spec, "-o", str(out), "-q", "--cache-dir", str(cache), *select]
    if name == "pilot":
        spec = str(tree / "specs" / "mlneedle-pilot.yaml")
        return [*base, "compile", spec, "-o", str(out), "-q", "--cache-dir", str(cache)]
    return [*base, "site", "build", "--project", str(tree / "site"), "--pages-only", "-q", "--cache-dir", str(cache)]


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run(name: str, tree: Path, work: Path, cache: Path) -> tuple[float, float]:
    """Wall and CPU seconds one command takes with `tree`'s sources first on the path."""
    env = {**os.environ, "PYTHONPATH": str(tree / "src"), "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    out = work / f"{name}-{tree.name}"
    cpu = _cpu()
    start = time.perf_counter()
    done = subprocess.run(command(name, tree, out, cache), env=env, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{name} failed with {tree}:\n{done.stderr[-2000:]}")
    return seconds, _cpu() - cpu


def check_tree(tree: Path) -> None:
    """The tree's own `needlec` package is the one its runs import."""
    env = {**os.environ, "PYTHONPATH": str(tree / "src")}
    found = subprocess.run(
        [sys.executable, "-c", "import needlec; print(needlec.__file__)"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    if not Path(found).resolve().is_relative_to((tree / "src").resolve()):
        raise SystemExit(f"{tree}: imports needlec from {found}, not from its src/")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--baseline", type=Path, help="another checkout of the project to compare with")
    parser.add_argument("--runs", type=int, default=3, help="timed runs of each compile per tree")
    parser.add_argument("--site-runs", type=int, default=1, help="timed runs of the site build per tree")
    parser.add_argument("--only", default="ruler,pilot,site", help="which of ruler, pilot, site to time")
    args = parser.parse_args()
    trees = [ROOT] + ([args.baseline.resolve()] if args.baseline else [])
    for tree in trees:
        check_tree(tree)
    with tempfile.TemporaryDirectory(prefix="needlec-shared-speed-") as tmp:
        work = Path(tmp)
        cache = work / "cache"
        print(f"{'command':8} {'tree':10} {'runs':>4} {'wall s':>8} {'min':>7} {'max':>7} {'cpu s':>7}")
        for name in args.only.split(","):
            runs = args.site_runs if name == "site" else args.runs
            if name != "site":
                for tree in trees:
                    run(name, tree, work, cache)  # warm-up: caches, tokenizer tables
            times: dict[Path, list[tuple[float, float]]] = {tree: [] for tree in trees}
            for _ in range(runs):
                for tree in trees:
                    times[tree].append(run(name, tree, work, cache))
            wall = {tree: statistics.median(w for w, _ in values) for tree, values in times.items()}
            cpu = {tree: statistics.median(c for _, c in values) for tree, values in times.items()}
            for tree, values in times.items():
                label = "this" if tree == ROOT else "baseline"
                spread = f"{min(w for w, _ in values):>7.2f} {max(w for w, _ in values):>7.2f}"
                print(f"{name:8} {label:10} {len(values):>4} {wall[tree]:>8.2f} {spread} {cpu[tree]:>7.2f}")
            if args.baseline:
                old = trees[1]
                ratios = f"{wall[old] / wall[ROOT]:>7.2f}x {'':>15} {cpu[old] / cpu[ROOT]:>6.2f}x"
                print(f"{name:8} {'speed-up':10} {'':>4} {ratios}")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
