"""How long `needlec validate` takes to reject pathological values in the shipped specs.

Each case replaces one value of a shipped spec with a 100,000- or 200,000-character one (the
cases of `tests/test_pathological.py`), runs `needlec validate` in a fresh process and prints the
wall time, the child's CPU time, the exit code and how many characters of output it printed.
The goal is a clean exit 2 in well under 5 seconds, with the value quoted only in part. Run it
from the repository root:

    python benchmarks/pathological_specs.py
"""

from __future__ import annotations

import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from test_pathological import CASES  # noqa: E402  (the same cases as the test)


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    print(f"{'case':58} {'wall s':>7} {'cpu s':>6} {'exit':>4} {'chars':>6}")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "specs"
        shutil.copytree(ROOT / "specs", root)
        for name, old, new, key, _ in CASES:
            source = root / name
            target = source.parent / f"bad-{source.name}"
            target.write_text(source.read_text(encoding="utf-8").replace(old, new, 1), encoding="utf-8")
            cpu = _children_cpu()
            start = time.perf_counter()
            result = subprocess.run(
                [sys.executable, "-m", "needlec.cli", "validate", str(target)],
                capture_output=True,
                text=True,
                check=False,
            )
            wall = time.perf_counter() - start
            label = f"{name} {key} ({len(new):,} chars)"
            chars = len(result.stdout) + len(result.stderr)
            print(f"{label:58} {wall:7.2f} {_children_cpu() - cpu:6.2f} {result.returncode:4} {chars:6}")


if __name__ == "__main__":
    main()
