"""Warnings a compile can give without failing: things that are legal but rarely what an author wants.

Today: a haystack shorter than a context length is repeated to reach it, so the model sees the
same text several times. The compile prints each case; `--strict` turns warnings into errors.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


def repetition_warnings(work: Iterable[tuple[Any, ...]]) -> list[str]:
    """One line per (config, tokenizer, haystack) whose haystack is repeated to reach a length."""
    worst: dict[tuple[str, str, str], tuple[float, int, int]] = {}
    for config, key, view, *_ in work:
        index = view.index
        base_tokens = index.token_at(min(view.base_chars, len(index.text)))
        if base_tokens <= 0 or key.length <= base_tokens:
            continue
        times = key.length / base_tokens
        slot = (config.name, key.tokenizer, key.haystack)
        if slot not in worst or times > worst[slot][0]:
            worst[slot] = (times, base_tokens, key.length)
    return [
        f"config {name}, tokenizer {tokenizer}, haystack {haystack}: the haystack has about {base:,} tokens "
        f"and is repeated {times:.1f} times to reach {length:,} tokens; add longer sources to avoid repeated text"
        for (name, tokenizer, haystack), (times, base, length) in sorted(worst.items())
    ]
