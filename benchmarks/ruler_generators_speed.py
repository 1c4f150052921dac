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
import functools
import random
import time
from collections.abc import Callable

from needlec.kinds.ruler.keyvalue import KeyValueSpec, generate_keyvalue
from needlec.kinds.ruler.passkey import PasskeySpec, generate_passkey
from needlec.kinds.ruler.tasks import LENGTHS, SAMPLES_PER_TASK, TASKS, cwe_spec_for_length, fwe_vocab_size
from needlec.kinds.ruler.variable_tracking import VariableSpec, generate_variable_tracking
from needlec.kinds.ruler.words import CommonWordsSpec, FrequentWordsSpec, generate_common_words, generate_frequent_words
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
        vocab = fwe_vocab_size(length)
        kv = KeyValueSpec("words", "numbers")

        def cwe_tokens(n: int, cwe: CommonWordsSpec = cwe) -> int:
            return tok.count(generate_common_words(random.Random(0), cwe, n).text)

        def fwe_tokens(n: int, vocab: int = vocab) -> int:
            return tok.count(generate_frequent_words(random.Random(0), FWE, max(n, 400), vocab).text)

        def filler_tokens(n: int, kv: KeyValueSpec = kv) -> int:
            return tok.count(" ".join(x.text for x in generate_keyvalue(random.Random(0), kv, n).filler))

        uncommon = largest_fitting(cwe_tokens, length - 120 - PROMPT_ALLOWANCE, 11_000)
        words = largest_fitting(fwe_tokens, length - 50 - PROMPT_ALLOWANCE, length)
        filler = largest_fitting(filler_tokens, length - 128 - PROMPT_ALLOWANCE, length // 8)
        makers: list[Callable[[random.Random], object]] = []
        for entry in TASKS:
            if isinstance(entry.generator, KeyValueSpec):
                count = filler if entry.haystack == "needle" else 0
                makers.append(functools.partial(generate_keyvalue, spec=entry.generator, num_filler=count))
            elif entry.category == "vt":
                makers.append(functools.partial(generate_variable_tracking, spec=VariableSpec()))
            elif entry.category == "cwe":
                makers.append(functools.partial(generate_common_words, spec=cwe, num_uncommon=uncommon))
            elif entry.category == "fwe":
                makers.append(functools.partial(generate_frequent_words, spec=FWE, num_words=words, vocab_size=vocab))
            else:  # QA needs a corpus; its draw is a shuffle of document ids, timed here as a passkey draw
                makers.append(functools.partial(generate_passkey, spec=PasskeySpec(kind="pattern")))
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
