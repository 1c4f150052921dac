"""Start-up cost of the CLI: medians of `python -c pass`, `needlec --version` and `needlec validate`.

Each command runs in a fresh subprocess (7 runs each, after one warm-up run so the OS file cache
is hot), and the script prints the median wall time of each. Run it from the repository root:

    python benchmarks/cli_startup.py
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RUNS = 7


def median_seconds(argv: list[str]) -> float:
    """Median wall time of `argv` over RUNS runs (one untimed warm-up first)."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    subprocess.run(argv, cwd=ROOT, env=env, check=True, capture_output=True)
    times = []
    for _ in range(RUNS):
        start = time.perf_counter()
        subprocess.run(argv, cwd=ROOT, env=env, check=True, capture_output=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    """Print one line per command: its median time in seconds."""
    cli = [sys.executable, "-m", "needlec"]
    commands = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "needlec --version": [*cli, "--version"],
        "needlec validate specs/niah.yaml": [*cli, "validate", "specs/niah.yaml"],
    }
    for label, argv in commands.items():
        print(f"{label:<36} {median_seconds(argv):7.3f} s  (median of {RUNS})")


if __name__ == "__main__":
    main()
