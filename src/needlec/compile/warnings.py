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


UNSTATED_DRAWS = 8
"""Draws of a config's template needles (seeds 0 to 7) in which `unstated_answers` looks for each fact."""


def unstated_answers(configs: Iterable[Any]) -> list[str]:
    """One line per required fact of `template` needles that none of the needles states, in some of
    `UNSTATED_DRAWS` draws (no accepted form occurs in the rendered needles, compared casefolded): a model
    cannot read such an answer from the context. Legal, as the answer may be one the question asks the model to
    work out ("how old is Ana's brother?"), but most often a template that names the wrong variable or a
    needle edited without its answer. Configs with the same fact and template share a line."""
    import random

    from needlec.kinds.base import needle_kind
    from needlec.kinds.template import TemplateNeedle

    found: dict[tuple[int, str, str], list[str]] = {}
    for config in configs:
        needle = config.spec.needle
        if not isinstance(needle, TemplateNeedle):
            continue
        kind = needle_kind(needle)
        missing: dict[int, str] = {}
        for seed in range(UNSTATED_DRAWS):
            draw = kind.draw(kind.cases()[0], random.Random(seed))
            said = "\n".join(draw.needles).casefold()
            for i, fact in enumerate(draw.answers):
                if i not in missing and not any(alias and alias.casefold() in said for alias in fact):
                    missing[i] = fact[0]
        for i, example in missing.items():
            found.setdefault((i, str(needle.answers[i]), example), []).append(config.name)
    lines = []
    for (i, template, example), names in sorted(found.items()):
        which = f"config {names[0]}" if len(names) == 1 else f"configs {', '.join(names)}"
        drawn = f" (drawn as {example!r})" if example != template else ""
        lines.append(
            f"{which}: needle.answers[{i}] {template!r}{drawn} occurs in none of the needles, so a model cannot "
            "read it from the context; state it in a needle, or ignore this if the question asks for an answer "
            "worked out from them"
        )
    return lines
