"""Contract checks on built items: length, depth, overlap budgets, leaks, optional re-encoding."""

from __future__ import annotations

from collections.abc import Callable

from needlec.compile.overlap import budget_key
from needlec.dataset.item import Item, needle_column
from needlec.placement.engine import depth_miss, pushed_depths
from needlec.spec.models import Spec
from needlec.tokenizer import Tokenizer


def held_depths(
    item: Item,
    tokenizer: Tokenizer,
    reachable: dict[int, float],
    count: Callable[[str], int] | None = None,
    joiner: str = "",
    joined: Callable[[str, str], int] | None = None,
) -> dict[int, tuple[float, float]]:
    """The range of depths each target needle counts as on target in (by needle index): from its target depth
    as far as it can be reached (`reachable`, as `reachable_depths` gives it) to where the target needles
    before it push it (`pushed_depths`), each taking its tokens and the `joiner` after it, as the window search
    counts them (`joined`, the counter's `joined_tokens`, where given)."""
    count = count or tokenizer.count
    together = joined or (lambda text, after: count(text + after))
    indexes = sorted(reachable)
    needles = item.needles
    fields = ("target_depth_percent", "token_offset", "text")
    target_depths, token_offsets, texts = (needle_column(needles, field) for field in fields)
    aimed = [min(target_depths[i], reachable[i]) for i in indexes]
    offsets = [token_offsets[i] for i in indexes]
    counts = {text: together(text, joiner) for text in dict.fromkeys(texts[i] for i in indexes)}
    tokens = [counts[texts[i]] for i in indexes]
    pushed = pushed_depths(aimed, offsets, tokens, item.context_tokens or 1)
    return {i: (low, high) for i, low, high in zip(indexes, aimed, pushed, strict=True)}


def reachable_depths(item: Item, tokenizer: Tokenizer, count: Callable[[str], int] | None = None) -> dict[int, float]:
    """Deepest each target needle can sit (by needle index): the target needles from it to the end of
    the context need their tokens. Each distinct needle text is counted once (by `count`, the tokenizer's
    by default), and the tails are summed in one pass from the end (CWE items hold 300 target needles)."""
    count = count or tokenizer.count
    if len(item.needles) >= MANY_NEEDLES:
        return _reachable_at_once(item, count)
    return _reachable_one_by_one(item, count)


def _reachable_one_by_one(item: Item, count: Callable[[str], int]) -> dict[int, float]:
    """`reachable_depths`, the tails summed in one pass from the end."""
    counts: dict[str, int] = {}
    needles = item.needles
    chars, roles, texts = (needle_column(needles, field) for field in ("char_offset", "role", "text"))
    columns = zip(chars, roles, texts, strict=True)
    targets = sorted(((at, i, text) for i, (at, role, text) in enumerate(columns) if role == "target"), reverse=True)
    out: dict[int, float] = {}
    tail = 0
    k = 0
    while k < len(targets):
        # needles at one offset share their tail: each counts every needle at or after its offset
        offset = targets[k][0]
        group = []
        while k < len(targets) and targets[k][0] == offset:
            text = targets[k][2]
            if text not in counts:
                counts[text] = count(text)
            tail += counts[text]
            group.append(targets[k][1])
            k += 1
        for i in group:
            out[i] = 100.0 * max(0, item.context_tokens - tail) / item.context_tokens
    return out


MANY_NEEDLES = 32
"""Needles from which `reachable_depths` sums the tails with numpy (CWE's 300, FWE's 100)."""


def _reachable_at_once(item: Item, count: Callable[[str], int]) -> dict[int, float]:
    """`reachable_depths` by numpy: each target's tail is the tokens of the targets at or after its character
    offset (a suffix sum in offset order, from the first target at that offset), worked out as the loop does."""
    import numpy as np

    needles = item.needles
    roles, texts, chars = (needle_column(needles, field) for field in ("role", "text", "char_offset"))
    targets = [i for i, role in enumerate(roles) if role == "target"]
    if not targets:
        return {}
    counts = {text: count(text) for text in dict.fromkeys(texts[i] for i in targets)}
    offsets = np.array([chars[i] for i in targets], dtype=np.int64)
    tokens = np.array([counts[texts[i]] for i in targets], dtype=np.int64)
    order = np.argsort(offsets, kind="stable")
    ranked = offsets[order]
    suffix = np.cumsum(tokens[order][::-1])[::-1]  # tokens of the targets from each rank on
    tails = suffix[np.searchsorted(ranked, offsets, side="left")]  # from the first target at that offset
    total = item.context_tokens
    reach = (100.0 * np.maximum(0, total - tails) / total).tolist()
    return dict(zip(targets, reach, strict=True))


def check_item(
    item: Item,
    spec: Spec,
    tokenizer: Tokenizer,
    verify: bool,
    count: Callable[[str], int] | None = None,
    joined: Callable[[str, str], int] | None = None,
) -> list[str]:
    """Length and depth contract checks; with `verify`, also re-encode the item in full (slow, exact).

    A target depth beyond what the needle can reach (100% means the needle ends the context, so it
    starts one needle-length earlier) is measured against the reachable depth instead, and a needle that
    the target needles before it push deeper counts as on target up to where they push it; the needles are
    counted by `count` where given (the compile's seam counter, which counts a long needle through its
    cut: an FWE item's 100 blocks of coded words cost more to encode whole than the item to build).
    """
    problems = []
    counted = item.context_tokens if spec.length.counted != "prompt" else item.prompt_tokens
    reserve = (item.max_new_tokens or 0) if spec.length.reserve else 0  # RULER's rule: the reply's budget
    if spec.length.counted == "needles":
        pass  # no target: the needles are the whole context and the length is what they measure
    elif abs(counted - (wanted := item.context_length - spec.length.buffer - reserve)) > spec.length.tolerance:
        problems.append(f"{item.id}: {counted} tokens, target {wanted}")
    tolerance = spec.placement.depth_tolerance
    reachable = reachable_depths(item, tokenizer, count) if spec.length.counted != "needles" else {}
    depths, target_depths = (needle_column(item.needles, field) for field in ("depth_percent", "target_depth_percent"))
    off = [i for i, got in reachable.items() if abs(depths[i] - min(target_depths[i], got)) > tolerance]
    off.sort()
    # only where a needle misses its target (or reachable depth) does it matter how far the ones before push it
    held = held_depths(item, tokenizer, reachable, count, spec.placement.joiner_text(), joined) if off else {}
    for i in off:
        needle = item.needles[i]
        low, high = held[i]
        if depth_miss(needle.depth_percent, low, high) > tolerance:
            target = f"{round(low, 4)}%"
            if high - low >= 1e-9:
                target += f" (up to {round(high, 4)}% where the needles before it push it)"
            problems.append(
                f"{item.id}: needle {i} at depth {needle.depth_percent}%, target {target} (tolerance {tolerance})"
            )
    if verify:
        context = item.context()
        if tokenizer.count(context) != item.context_tokens:
            problems.append(
                f"{item.id}: re-encoding gives {tokenizer.count(context)} tokens, recorded {item.context_tokens}"
            )
        chars, tokens = needle_column(item.needles, "char_offset"), needle_column(item.needles, "token_offset")
        for i, (char_offset, token_offset) in enumerate(zip(chars, tokens, strict=True)):
            before = tokenizer.count(context[:char_offset])
            if before != token_offset:
                problems.append(f"{item.id}: needle {i} token offset {token_offset}, re-encoding gives {before}")
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
    return [
        f"{item_id}: {', '.join(map(repr, leaks))} occurs in the haystack outside the needle (as a whole word, in "
        "any letter case); a `literal_terms` filter with `from_spec` takes such text out of the haystack"
    ]
