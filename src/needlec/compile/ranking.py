"""Ranked passages over a compile's items: the orchestration of `haystacks/ranking.py`.

Every question the selected items will ask is ranked in the parent process before the workers fork
(`prepare_rankings`), and the manifest records the model, the pool and what was dropped.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from needlec.compile.plan import ConfigPlan, ItemKey
    from needlec.haystacks.ranking import PassageRanker
    from needlec.kinds.base import NeedleKind
    from needlec.placement.view import HaystackView


def prepare_rankings(
    config: ConfigPlan,
    keys: list[ItemKey],
    views: dict[tuple[str, str], HaystackView],
    kind: NeedleKind,
    cache_dir: Path,
    progress: bool = False,
) -> dict[str, Any] | None:
    """Rank, ahead of the item builds, every question these keys will ask (None unless the config's
    builder ranks). Returns the manifest's record: the model, the pool, and the candidates dropped
    for holding a gold answer, summed over the distinct (haystack, question) pairs. With `progress`,
    encoding passages or questions shows a bar on stderr."""
    builder = config.spec.haystack.builder
    rank = getattr(builder, "rank", None)
    if rank is None or not getattr(builder, "distractors", True):
        return None
    from needlec.compile.items import draw_item, gold_aliases
    from needlec.haystacks.filters.encoders import model_id
    from needlec.haystacks.ranking import ranker_for  # only a ranking config loads the ranker

    slot_name = rank.model_dump_json()
    asks: dict[tuple[str, str], list[tuple[str, tuple[str, ...]]]] = {}
    for key in keys:
        view = views[(key.haystack, key.tokenizer)]
        if slot_name not in view.rankers:
            view.rankers[slot_name] = ranker_for(view.index.haystack, rank, cache_dir)
            view.rankers[slot_name].progress = progress
        _, _, _, draw = draw_item(config, key, view, kind)
        asks.setdefault((key.haystack, key.tokenizer), []).append((draw.question, gold_aliases(draw)))
    dropped = 0
    pairs = 0
    fewest: int | None = None
    least: int | None = None
    for slot, wanted in sorted(asks.items()):
        ranker: PassageRanker = views[slot].rankers[slot_name]
        ranker.prepare(wanted)
        tokens = ranker.counts  # every candidate's tokens, counted in one batch and kept for the layout
        missing = sorted({i for ask in wanted for i in ranker.rankings[ask].candidates} - tokens.keys())
        counts = views[slot].index.tokenizer.count_many([ranker.passages[i] for i in missing])
        tokens.update(zip(missing, counts, strict=True))
        for ask in dict.fromkeys(wanted):
            ranking = ranker.rankings[ask]
            pairs += 1
            dropped += ranking.dropped
            fewest = len(ranking.candidates) if fewest is None else min(fewest, len(ranking.candidates))
            total = sum(tokens[i] for i in ranking.candidates)
            least = total if least is None else min(least, total)
    return {
        "model": model_id(rank.encoder, rank.model),
        "pool": rank.pool,
        "order": rank.order,
        "questions": pairs,
        "dropped": dropped,
        "fewest_candidates": fewest,
        "fewest_candidate_tokens": least,
    }


def ranking_warnings(config: ConfigPlan, record: dict[str, Any]) -> list[str]:
    """A warning when some question's answer-free candidates hold fewer tokens than the longest
    length: those items are padded with filler instead of more passages."""
    longest = max(config.spec.grid.length_points())
    least = record.get("fewest_candidate_tokens") or 0
    if least >= longest:
        return []
    return [
        f"config {config.name}: the answer-free candidates of some question hold about {least:,} tokens, "
        f"fewer than the length {longest:,}; those items are padded with filler (raise "
        "`haystack.builder.rank.pool` or add sources)"
    ]
