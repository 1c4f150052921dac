"""Draw speed of the RULER generators at the sizes that fill RULER's lengths on one tokenizer.

For each length (4K-128K) the size parameter of each length-filling generator is sized with
cl100k_base by bisection (CWE uncommon words, FWE word count, needle-filler count), leaving the
task's generation budget and a fixed prompt allowance free. Then `--items` items per task and
length are drawn and timed; the total for RULER's 500 items per task and length is extrapolated.
Token counting of the final prompts is the compile's job and is not included.

    python benchmarks/ruler_generators_speed.py [--items 20]
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable

from needlec.kinds.ruler.keyvalue import KeyValueSpec, generate_keyvalue
from needlec.kinds.ruler.passkey import PasskeySpec, generate_passkey
from needlec.kinds.ruler.tasks import LENGTHS, SAMPLES_PER_TASK, TASKS, cwe_spec_for_length, fwe_vocab_size
from needlec.kinds.ruler.variable_tracking import VariableSpec, generate_variable_tracking
from needlec.kinds.ruler.words import FrequentWordsSpec, generate_common_words, generate_frequent_words
from needlec.tokenizer import _tiktoken

PROMPT_ALLOWANCE = 200
"""Tokens kept free for instruction, question and answer prefix."""

FWE = FrequentWordsSpec()


def largest_fitting(count_tokens: Callable[[int], int], budget: int, high: int) -> int:
    """The largest n in [0, high] with count_tokens(n) <= budget (count_tokens grows with n)."""
    low = 0
    while low < high:
        mid = (low + high + 1) // 2
        if count_tokens(mid) <= budget:
            low = mid
        else:
            high = mid - 1
    return low


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=20)
    args = parser.parse_args()
    tok = _tiktoken("cl100k_base")
    total_seconds = 0.0
    print(
        f"{'length':>7} {'cwe_uncommon':>12} {'fwe_words':>9} {'fwe_vocab':>9} {'filler':>6} {'ms/item (13 tasks)':>20}"
    )
    for length in LENGTHS:
        cwe = cwe_spec_for_length(length)
        budget_cwe = length - 120 - PROMPT_ALLOWANCE
        uncommon = largest_fitting(
            lambda n, cwe=cwe: tok.count(generate_common_words(random.Random(0), cwe, n).text), budget_cwe, 11_000
        )
        vocab = fwe_vocab_size(length)
        budget_fwe = length - 50 - PROMPT_ALLOWANCE
        words = largest_fitting(
            lambda n, v=vocab: tok.count(generate_frequent_words(random.Random(0), FWE, max(n, 400), v).text),
            budget_fwe,
            length,
        )
        kv = KeyValueSpec("words", "numbers")
        budget_kv = length - 128 - PROMPT_ALLOWANCE
        filler = largest_fitting(
            lambda n, kv=kv: tok.count(" ".join(x.text for x in generate_keyvalue(random.Random(0), kv, n).filler)),
            budget_kv,
            length // 8,
        )
        makers: list[Callable[[random.Random], object]] = []
        for entry in TASKS:
            if entry.category == "niah" and isinstance(entry.generator, KeyValueSpec):
                n = filler if entry.haystack == "needle" else 0
                makers.append(lambda r, s=entry.generator, n=n: generate_keyvalue(r, s, n))
            elif entry.category == "vt":
                makers.append(lambda r: generate_variable_tracking(r, VariableSpec()))
            elif entry.category == "cwe":
                makers.append(lambda r, c=cwe, u=uncommon: generate_common_words(r, c, u))
            elif entry.category == "fwe":
                makers.append(lambda r, w=words, v=vocab: generate_frequent_words(r, FWE, w, v))
            else:  # QA needs a corpus; its draw cost is a shuffle of document ids, timed with passkey instead
                makers.append(lambda r: generate_passkey(r, PasskeySpec(kind="pattern")))
        start = time.perf_counter()
        for index in range(args.items):
            for make in makers:
                make(random.Random(index))
        elapsed = time.perf_counter() - start
        per_item = elapsed / (args.items * len(makers))
        total_seconds += per_item * len(makers) * SAMPLES_PER_TASK
        print(f"{length:>7} {uncommon:>12} {words:>9} {vocab:>9} {filler:>6} {per_item * 1000:>20.2f}")
    print(
        f"extrapolated draw time, 13 tasks x {len(LENGTHS)} lengths x {SAMPLES_PER_TASK} items: {total_seconds:.0f} s"
    )


if __name__ == "__main__":
    main()
