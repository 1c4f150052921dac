"""Start-up cost of the CLI: medians of `python -c pass`, `needlec --version`, `needlec validate`
and a compile of 3 small NIAH items (its cost is almost all start-up: imports, the corpus, the
tokenizer's tables).

Each command runs in a fresh subprocess (7 runs each, after one warm-up run so the OS file cache
is hot), and the script prints the median wall time of each, and the median CPU time (user +
system) of the child, which stays meaningful on a machine busy with other work. Run it from the
repository root:

    python benchmarks/cli_startup.py
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RUNS = 7


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def median_seconds(argv: list[str]) -> tuple[float, float]:
    """Median wall time and median child CPU time of `argv` over RUNS runs (one untimed warm-up first)."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    subprocess.run(argv, cwd=ROOT, env=env, check=True, capture_output=True)
    walls, cpus = [], []
    for _ in range(RUNS):
        cpu = _children_cpu()
        start = time.perf_counter()
        subprocess.run(argv, cwd=ROOT, env=env, check=True, capture_output=True)
        walls.append(time.perf_counter() - start)
        cpus.append(_children_cpu() - cpu)
    return statistics.median(walls), statistics.median(cpus)


def main() -> None:
    """Print one line per command: its median time in seconds."""
    cli = [sys.executable, "-m", "needlec"]
    with tempfile.TemporaryDirectory() as tmp:
        small = ["--select", "config=single", "--select", "tokenizer=cl100k_base", "--select", "length=1000"]
        compile_3 = [*cli, "compile", "specs/niah.yaml", "-q", "-o", str(Path(tmp) / "out"), *small]
        commands = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "needlec --version": [*cli, "--version"],
            "needlec validate specs/niah.yaml": [*cli, "validate", "specs/niah.yaml"],
            "needlec compile niah (3 items)": [*compile_3, "--select", "depth=0,50,100"],
        }
        print(f"{'command':<36} {'wall':>8} {'cpu':>8}   (medians of {RUNS} runs)")
        for label, argv in commands.items():
            wall, cpu = median_seconds(argv)
            print(f"{label:<36} {wall:7.3f}s {cpu:7.3f}s")


if __name__ == "__main__":
    main()
