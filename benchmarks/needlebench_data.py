"""Cost of the NeedleBench needle data: load time, draw rate, and needle sizes in tokens.

Prints, per language: the time to read, sha256-check and validate all data files (cold, in a fresh process state
per run), the rate of 20-needle M-RT draws, and token counts of retrieval needles and of whole M-RS chains per step
count with a real tokenizer; plus the share of a 1,000-token M-RT cell (the smallest v1 length) taken by 20 needles.

    python benchmarks/needlebench_data.py [--encoding cl100k_base] [--draws 2000]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from needlec.kinds.needlebench import data
from needlec.languages.needlebench import files
from needlec.tokenizer import _tiktoken


def _cold_load() -> float:
    files._packaged_manifest.cache_clear()
    data.retrieval_records.cache_clear()
    data._all_chains.cache_clear()
    start = time.perf_counter()
    for lang in data.LANGUAGES:
        data.retrieval_records(lang)
        data.reasoning_chains(lang)
    return time.perf_counter() - start


def main() -> None:
    """Run the measurements and print one block per language."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--encoding", default="cl100k_base")
    parser.add_argument("--draws", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    loads = sorted(_cold_load() for _ in range(args.runs))
    print(f"load + sha256 + validate, both languages: median {statistics.median(loads) * 1000:.1f} ms")
    tokenizer = _tiktoken(args.encoding)
    for lang in data.LANGUAGES:
        rng = random.Random(f"bench-{lang}")
        start = time.perf_counter()
        for _ in range(args.draws):
            data.draw_retrieval(rng, 20, lang)
        rate = args.draws / (time.perf_counter() - start)
        needle_tokens = [tokenizer.count(r.needle) for r in data.retrieval_records(lang)]
        print(f"[{lang}] 20-needle M-RT draws: {rate:,.0f}/s")
        print(
            f"[{lang}] retrieval needle tokens ({args.encoding}): min {min(needle_tokens)}, "
            f"median {statistics.median(needle_tokens)}, max {max(needle_tokens)}"
        )
        twenty = sorted(needle_tokens)[-20:]
        print(f"[{lang}] 20 longest needles: {sum(twenty)} tokens = {sum(twenty) / 10:.1f}% of a 1,000-token cell")
        for steps in data.STEP_COUNTS:
            sizes = [sum(tokenizer.count(f.text) for f in c.facts) for c in data.reasoning_chains(lang, steps)]
            print(f"[{lang}] M-RS {steps}-step chain tokens: median {statistics.median(sizes)}, max {max(sizes)}")


if __name__ == "__main__":
    main()
