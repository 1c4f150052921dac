"""Build one item: draw the needle, place it, splice the context into the messages.

Pure apart from reading the prepared haystack index: same key and seed give the same item.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from needlec.compiler.haystack import HaystackIndex
from needlec.compiler.needles import needle_kind
from needlec.compiler.placement import Counter, place
from needlec.compiler.plan import CONTEXT_SENTINEL, ConfigPlan, ItemKey, render_messages

ITEM_SCHEMA_VERSION = 1


@dataclass(frozen=True)
class HaystackView:
    """What an item needs of a haystack: its index for one tokenizer and where windows may start."""

    index: HaystackIndex
    counter: Counter
    starts: list[int]  # sentence starts in the first copy (for `start: random`)
    base_chars: int


def build_item(benchmark: str, config: ConfigPlan, key: ItemKey, view: HaystackView) -> dict[str, Any]:
    spec = config.spec
    seed = key.seed(spec.seed)
    rng = random.Random(seed)
    draw = needle_kind(spec.needle).draw(key.case, rng)
    start = rng.choice(view.starts) if spec.haystack.start == "random" else 0
    messages = render_messages(spec, draw.question, draw.values)
    user = messages[-1]["content"]
    prefix, suffix = user.split(CONTEXT_SENTINEL)
    tokenizer = view.index.tokenizer
    others = sum(tokenizer.count(m["content"]) for m in messages[:-1])
    counted_prompt = spec.length.counted == "prompt"
    target_depths = config.needle_depths(key.depth, len(draw.needles))
    placement = place(
        view.index, view.counter, start=start,
        target=key.length - others if counted_prompt else key.length,
        needles=list(draw.needles), depths=target_depths,
        snap=spec.placement.snap, joiner=spec.placement.joiner_text(),
        prefix=prefix if counted_prompt else "", suffix=suffix if counted_prompt else "",
    )
    context = placement.context(view.index.text)
    messages[-1]["content"] = prefix + context + suffix
    if counted_prompt:
        prompt_tokens = placement.total_tokens + others
    else:
        prompt_tokens = others + view.counter.count(placement.start, placement.end,
                                                    list(placement.inserts), prefix, suffix)
    achieved = placement.depths()
    return {
        "id": key.id(benchmark),
        "benchmark": benchmark,
        "config": config.name,
        "tokenizer": key.tokenizer,
        "context_length": key.length,
        "context_tokens": placement.context_tokens,
        "prompt_tokens": prompt_tokens,
        "length_counted": spec.length.counted,
        "depth_percent": key.depth,
        "needles": [
            {"text": text, "target_depth_percent": target_depths[i], "depth_percent": achieved[i],
             "token_offset": placement.needle_tokens[i], "char_offset": placement.needle_chars[i]}
            for i, text in enumerate(draw.needles)
        ],
        "messages": messages,
        "context_span": {"message": len(messages) - 1, "start": len(prefix), "end": len(prefix) + len(context)},
        "question": draw.question,
        "answers": list(draw.answers),
        "case": key.case,
        "repeat": key.repeat,
        "haystack": {"id": key.haystack, "sha256": view.index.haystack.sha256,
                     "start_char": placement.start, "end_char": placement.end,
                     "repeated": placement.end > view.base_chars},
        "seed": seed,
        "scoring": spec.scoring.model_dump(mode="json"),
    }
