"""Contract checks on built items: length, depth, overlap budgets, leaks, optional re-encoding."""

from __future__ import annotations

from needlec.compile.overlap import budget_key
from needlec.dataset.item import Item
from needlec.spec.models import Spec
from needlec.tokenizer import Tokenizer


def reachable_depth(item: Item, index: int, tokenizer: Tokenizer) -> float:
    """Deepest a needle can sit: the needles from it to the end of the context need their tokens."""
    offset = item.needles[index].char_offset
    tail = sum(tokenizer.count(n.text) for n in item.targets() if n.char_offset >= offset)
    return 100.0 * max(0, item.context_tokens - tail) / item.context_tokens


def check_item(item: Item, spec: Spec, tokenizer: Tokenizer, verify: bool) -> list[str]:
    """Length and depth contract checks; with `verify`, also re-encode the item in full (slow, exact).

    A target depth beyond what the needle can reach (100% means the needle ends the context, so it
    starts one needle-length earlier) is measured against the reachable depth instead.
    """
    problems = []
    counted = item.context_tokens if spec.length.counted != "prompt" else item.prompt_tokens
    reserve = (item.max_new_tokens or 0) if spec.length.reserve else 0  # RULER's rule: the reply's budget
    if spec.length.counted == "needles":
        pass  # no target: the needles are the whole context and the length is what they measure
    elif abs(counted - (wanted := item.context_length - spec.length.buffer - reserve)) > spec.length.tolerance:
        problems.append(f"{item.id}: {counted} tokens, target {wanted}")
    for i, needle in enumerate(item.needles):
        if needle.role != "target" or spec.length.counted == "needles":
            continue
        target = min(needle.target_depth_percent, reachable_depth(item, i, tokenizer))
        if abs(needle.depth_percent - target) > spec.placement.depth_tolerance:
            problems.append(
                f"{item.id}: needle {i} at depth {needle.depth_percent}%, target "
                f"{target}% (tolerance {spec.placement.depth_tolerance})"
            )
    if verify:
        context = item.context()
        if tokenizer.count(context) != item.context_tokens:
            problems.append(
                f"{item.id}: re-encoding gives {tokenizer.count(context)} tokens, recorded {item.context_tokens}"
            )
        for i, needle in enumerate(item.needles):
            before = tokenizer.count(context[: needle.char_offset])
            if before != needle.token_offset:
                problems.append(f"{item.id}: needle {i} token offset {needle.token_offset}, re-encoding gives {before}")
    return problems


def check_budgets(item_id: str, spec: Spec, against: str, scores: dict[str, float]) -> list[str]:
    """Overlap budgets of the spec that `scores` (measured against `against`) exceed."""
    out = []
    for budget in spec.overlap_budgets:
        value = scores[budget_key(budget)]
        if budget.against == against and value > budget.max:
            stemmed = " (stemmed)" if budget.stem else ""
            out.append(f"{item_id}: {budget.metric}{stemmed} against the {against} is {value:.3f}, budget {budget.max}")
    return out


def leak_problem(item_id: str, leaks: list[str]) -> list[str]:
    if not leaks:
        return []
    return [f"{item_id}: {', '.join(map(repr, leaks))} occurs in the haystack outside the needle"]
