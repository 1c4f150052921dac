"""Compile, export, run a real model, score: SmolLM2-135M served by llama.cpp answers a tiny NIAH grid.

The model runs in llama.cpp's OpenAI-compatible server on 127.0.0.1 (the fixture pattern of
test_filters_llm_integration.py); the runner is `examples/openai_compatible_runner.py`, an
example client, since needlec itself never runs a model. A 135M model may well miss passkeys, so
the test checks what must hold whatever it answers: every item gets a response, each score is 1
exactly when the response holds the item's passkey as a whole number (checked here with a regular
expression, independently of the scorer), the report has its heatmap, and scoring the same
responses again gives byte-identical files.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from llama_support import NEEDS_SMOLLM, smollm_server

ROOT = Path(__file__).resolve().parents[1]
NEEDLEC = str(Path(sys.executable).parent / "needlec")
RUNNER = ROOT / "examples" / "openai_compatible_runner.py"
SPEC = ROOT / "examples" / "passkey-pilot.yaml"  # 2 lengths x 3 depths, a 5-digit passkey, `contains`
pytestmark = NEEDS_SMOLLM


@pytest.fixture(scope="module")
def smollm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with smollm_server(tmp_path_factory.mktemp("llama") / "server.log", "--n_ctx", "2048", "--seed", "0") as base_url:
        yield base_url


def _run(*command: str) -> str:
    done = subprocess.run(command, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_compile_run_score_rerun(tmp_path: Path, smollm: str) -> None:
    dataset = tmp_path / "ds"
    _run(NEEDLEC, "compile", str(SPEC), "-o", str(dataset), "-q")
    _run(
        NEEDLEC,
        "export",
        str(dataset),
        "--to",
        "openai-batch",
        "--model",
        "smollm2-135m",
        "-o",
        str(tmp_path / "batch"),
    )
    responses = tmp_path / "responses.jsonl"
    _run(
        sys.executable,
        str(RUNNER),
        str(tmp_path / "batch" / "requests.jsonl"),
        "--base-url",
        smollm,
        "--seed",
        "0",
        "-o",
        str(responses),
    )

    items = {}
    for file in sorted((dataset / "data").rglob("*.jsonl")):
        for line in file.open(encoding="utf-8"):
            item = json.loads(line)
            items[item["id"]] = item
    answered = {r["id"]: r["response"] for r in map(json.loads, responses.read_text(encoding="utf-8").splitlines())}
    assert set(answered) == set(items) and len(items) == 6  # 2 lengths x 3 depths

    first, again = tmp_path / "report", tmp_path / "report-again"
    out = _run(NEEDLEC, "score", str(dataset), str(responses), "-o", str(first))
    assert "scored 6 items" in out
    _run(NEEDLEC, "score", str(dataset), str(responses), "-o", str(again))
    assert _tree(first) == _tree(again)  # same responses, same bytes: scores, summary and plots
    _run(NEEDLEC, "score", str(dataset), str(responses), "-o", str(first))  # replacing a report also repeats
    assert _tree(first) == _tree(again)

    scores = {r["id"]: r["score"] for r in map(json.loads, (first / "scores.jsonl").read_text().splitlines())}
    for item_id, item in items.items():
        code = item["answers"][0] if isinstance(item["answers"][0], str) else item["answers"][0][0]
        assert re.fullmatch(r"\d{5}", code)
        expected = 1.0 if re.search(rf"(?<!\d){code}(?!\d)", answered[item_id]) else 0.0
        assert scores[item_id] == expected, (item_id, answered[item_id])
    summary = json.loads((first / "summary.json").read_text(encoding="utf-8"))
    cfg = summary["configs"]["default"]  # a spec without variants has one config, `default`
    assert cfg["n"] == 6
    assert cfg["mean"] == pytest.approx(100 * sum(scores.values()) / 6, abs=1e-4)
    assert cfg["heatmap"]["lengths"] == [300, 600] and cfg["heatmap"]["depths"] == [0.0, 50.0, 100.0]
    plots = sorted(p.name for p in (first / "plots").iterdir())
    assert [p for p in plots if "heatmap" in p] and all(p.endswith((".svg", ".png")) for p in plots)
