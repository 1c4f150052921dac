"""Warnings a compile can give without failing: things that are legal but rarely what an author wants.

Today: a haystack shorter than a context length is repeated to reach it, so the model sees the
same text several times. The compile prints each case, records it in the manifest (each config's
`repetition` list), and `inspect`, the dataset card and the site show it; `--strict` turns
warnings into errors.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Repetition:
    """One haystack of one config and tokenizer that is repeated to reach some of the grid's lengths."""

    config: str
    tokenizer: str
    haystack: str
    haystack_tokens: int  # tokens of the haystack text once, before any repetition
    lengths: tuple[int, ...]  # every target length (ascending) longer than the haystack

    @property
    def times(self) -> float:
        """How many times the text is used for the longest of `lengths` (rounded to 0.01)."""
        return round(self.lengths[-1] / self.haystack_tokens, 2)

    def message(self) -> str:
        """The warning line the compile prints."""
        lengths = ", ".join(f"{n:,}" for n in self.lengths)
        return (
            f"config {self.config}, tokenizer {self.tokenizer}, haystack {self.haystack}: the haystack has about "
            f"{self.haystack_tokens:,} tokens and is repeated up to {self.times:.1f} times to reach "
            f"{len(self.lengths)} length(s) ({lengths} tokens); add longer sources to avoid repeated text"
        )

    def record(self) -> dict[str, Any]:
        """The manifest entry (under `configs.NAME.repetition`)."""
        return {
            "tokenizer": self.tokenizer,
            "haystack": self.haystack,
            "haystack_tokens": self.haystack_tokens,
            "lengths": list(self.lengths),
            "times": self.times,
        }


def repetitions(work: Iterable[tuple[Any, ...]]) -> list[Repetition]:
    """Every (config, tokenizer, haystack) whose haystack is repeated to reach a length, sorted."""
    found: dict[tuple[str, str, str], tuple[int, set[int]]] = {}
    for config, key, view, *_ in work:
        if getattr(config.spec.haystack.builder, "rank", None) is not None:
            continue  # ranked contexts are picked passages, never a repeated window (see compile/ranking.py)
        index = view.index
        base_tokens = index.token_at(min(view.base_chars, len(index.text)))
        if base_tokens <= 0 or key.length <= base_tokens:
            continue
        slot = (config.name, key.tokenizer, key.haystack)
        found.setdefault(slot, (base_tokens, set()))[1].add(key.length)
    return [
        Repetition(name, tokenizer, haystack, base, tuple(sorted(lengths)))
        for (name, tokenizer, haystack), (base, lengths) in sorted(found.items())
    ]


def repetition_warnings(work: Iterable[tuple[Any, ...]]) -> list[str]:
    """One line per (config, tokenizer, haystack) whose haystack is repeated to reach a length."""
    return [r.message() for r in repetitions(work)]
