"""What no FWE generator can avoid, against a Kamradt NIAH item: the floor under FWE's ratio.

An FWE item is a fresh stream of coded words, one per line, as long as the context: at 128K tokens
about 43,000 lines over the 162 words that occur. Whatever draws it must at least shuffle the
stream, write it as text and know how often each word occurs (the answer, and the counts the
placement sums). This script does just that with numpy's fastest means (a PCG64 permutation of the
stream's word indexes, one join of the words, one bincount), on the stream size and words of a real
FWE draw, and times it against a NIAH item built as `benchmarks/families.py` builds it (the two in
turn, median CPU time). A NIAH item slices a haystack indexed once; an FWE item must write its whole
context anew, and every item also pays what the NIAH item pays (its draw, prompt, record, checks).

    python benchmarks/fwe_floor.py [--length 131072] [--items 40]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
from families import ROOT, Runner


def stream(length: int) -> tuple[list[str], np.ndarray]:
    """The distinct lines of one real FWE draw at `length` and its stream as indexes into them."""
    runner = Runner(ROOT / "specs" / "ruler.yaml", "fwe")
    _, _, _, draw = runner.builds(length, 1)[0][1]()
    lines = [line for block in draw.needles for line in str(block).split("\n") if line]
    words = sorted(set(lines))
    index = {word: i for i, word in enumerate(words)}
    return words, np.fromiter((index[line] for line in lines), dtype=np.int64, count=len(lines))


def floor_item(words: np.ndarray, ids: np.ndarray, seed: int) -> str:
    """The least an FWE item costs: its stream shuffled, written as lines and tallied."""
    order = np.random.default_rng(seed).permutation(ids)
    np.bincount(order, minlength=len(words))
    return "\n".join(words[order].tolist())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--length", type=int, default=131072)
    parser.add_argument("--items", type=int, default=40)
    args = parser.parse_args()
    words, ids = stream(args.length)
    table = np.array(words, dtype=object)
    niah = Runner(ROOT / "specs" / "niah.yaml", "single").builds(args.length, args.items)
    floors, items = [], []
    for i, (build, _) in enumerate(niah):
        for first in (0, 1) if i % 2 else (1, 0):  # which goes first alternates
            began = time.process_time()
            floor_item(table, ids, i) if first else build()
            (floors if first else items).append(time.process_time() - began)
    floor, item = statistics.median(floors), statistics.median(items)
    print(f"FWE stream at {args.length}: {len(ids):,} lines over {len(words)} distinct words")
    print(f"shuffle + write + tally: {floor * 1000:.2f} ms; NIAH item: {item * 1000:.2f} ms; {floor / item:.2f}x")
    print(f"with what every item pays besides (the NIAH item itself): {(floor + item) / item:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
