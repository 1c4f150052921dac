"""Run the spec fuzzer long: N mutated shipped specs, each validated in-process.

Usage: python benchmarks/fuzz_specs.py [N]   (default 10000)
Prints how many specs validated, how many failed cleanly, and every seed that raised anything
other than a NeedlecError (a bug), with its exception.
"""

from __future__ import annotations

import sys
import tempfile
import time
import traceback
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from test_fuzz_specs import check_one


def main() -> int:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    outcomes: Counter[str] = Counter()
    bugs: list[tuple[int, str]] = []
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as folder:
        for seed in range(count):
            try:
                outcomes[check_one(seed, Path(folder))] += 1
            except Exception:  # a bug: anything but a NeedlecError
                outcomes["bug"] += 1
                bugs.append((seed, traceback.format_exc(limit=3)))
            if (seed + 1) % 250 == 0:
                print(f"  {seed + 1} done: {dict(outcomes)}", flush=True)
    elapsed = time.perf_counter() - started
    print(
        f"{count} mutated specs in {elapsed:.0f} s: {outcomes['ok']} valid, "
        f"{outcomes['error']} clean errors, {outcomes['bug']} tracebacks"
    )
    for seed, text in bugs[:20]:
        print(f"--- seed {seed}\n{text}")
    return 1 if bugs else 0


if __name__ == "__main__":
    sys.exit(main())
